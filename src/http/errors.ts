// Every error leaves the gateway as `{"error": "<message>"}` with a status from the spec's
// table. Throw HttpError anywhere; the app's one onError hook renders it.
import { withoutSecrets } from '../lib/secrets.ts'

export class HttpError extends Error {
  readonly status: number
  readonly headers?: Record<string, string>
  constructor(status: number, message: string, headers?: Record<string, string>) {
    super(bounded(message))
    this.name = 'HttpError'
    this.status = status
    this.headers = headers
  }
}

/** A quoted client value longer than this is cut where a message echoes it. */
const MAX_QUOTED = 80
/** No gateway message needs more; lists of client names (tools) are cut there. */
const MAX_MESSAGE = 900
// quotes taken in pairs, in order: the text between two short quoted values is not one
const QUOTED = /"([^"]*)"/g

/**
 * Every message the gateway writes quotes client values ("name", "id"): a quoted value over
 * MAX_QUOTED characters is cut to 64, and the whole message to MAX_MESSAGE, so no client
 * string of any size comes back whole, whichever check named it. A key quoted (a client's
 * sent as a model or an id) is redacted: the message also goes to records and logs.
 */
export function bounded(message: string): string {
  message = withoutSecrets(message)
  if (message.length <= MAX_QUOTED) return message
  const cut = message.replace(QUOTED, (whole, v: string) => (v.length > MAX_QUOTED ? `"${v.slice(0, 64)}…"` : whole))
  return cut.length > MAX_MESSAGE ? `${cut.slice(0, MAX_MESSAGE)}…` : cut
}

export const badRequest = (message: string) => new HttpError(400, message)
export const notFound = (message = 'Not found') => new HttpError(404, message)

/** The error body; a key in `message` redacted (an echoed path may hold one). */
export function errorResponse(status: number, message: string, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify({ error: withoutSecrets(message) }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/**
 * A client's value (an id, a path) as an error message echoes it: cut, so a 10 KB id or a
 * 16 KB URL cannot make an error of that size.
 */
export function echo(value: string | null | undefined, max = 64): string {
  // Elysia hands a route param whose percent-encoding is malformed over as null
  if (typeof value !== 'string') return '(malformed)'
  return value.length > max ? value.slice(0, max) + '…' : value
}
