// Every error leaves the gateway as `{"error": "<message>"}` with a status from the spec's
// table. Throw HttpError anywhere; the app's one onError hook renders it.

export class HttpError extends Error {
  readonly status: number
  readonly headers?: Record<string, string>
  constructor(status: number, message: string, headers?: Record<string, string>) {
    super(message)
    this.name = 'HttpError'
    this.status = status
    this.headers = headers
  }
}

export const badRequest = (message: string) => new HttpError(400, message)
export const notFound = (message = 'Not found') => new HttpError(404, message)

export function errorResponse(status: number, message: string, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/**
 * A client's value (an id, a path) as an error message echoes it: cut, so a 10 KB id or a
 * 16 KB URL cannot make an error of that size (D10).
 */
export function echo(value: string | null | undefined, max = 64): string {
  // Elysia hands a route param whose percent-encoding is malformed over as null
  if (typeof value !== 'string') return '(malformed)'
  return value.length > max ? value.slice(0, max) + '…' : value
}
