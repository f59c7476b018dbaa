// The one place where thrown things become `{ "error": "<message>" }` responses.
import type { Logger } from './log.ts'
import { echo, errorResponse, HttpError } from './errors.ts'
import { requestIdOf } from './context.ts'

/** A client's answer to a failure of something the gateway depends on, logged at warn when `warn` names it. */
export interface KnownAnswer {
  status: number
  message: string
  headers?: Record<string, string>
  warn?: string
}
/** One row of the table of such failures (src/failures.ts): its answer, or undefined when `error` is not its kind. */
export type KnownFailure = (error: unknown) => KnownAnswer | undefined

/** The answer of the first row that knows `error`, or undefined. */
export function knownAnswer(known: readonly KnownFailure[], error: unknown, log: Logger, requestId: string): Response | undefined {
  for (const row of known) {
    const a = row(error)
    if (!a) continue
    if (a.warn) log.warn(a.warn, { request_id: requestId, error: String(((error as Error)?.cause as Error)?.message ?? (error as Error)?.cause ?? error) })
    return errorResponse(a.status, a.message, a.headers)
  }
  return undefined
}

interface RouteInfo {
  method: string
  path: string
}

/** For a path no route matched: 405 when another method has it, else 404. */
export function methodMatcher(routes: () => RouteInfo[]) {
  let compiled: { method: string; re: RegExp }[] | undefined
  return (method: string, path: string): string[] => {
    compiled ??= routes().map((r) => ({
      method: r.method,
      re: new RegExp('^' + r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*') + '/?$'),
    }))
    return [...new Set(compiled.filter((r) => r.method !== method && r.re.test(path)).map((r) => r.method))]
  }
}

export function renderError(
  code: string | number,
  error: unknown,
  request: Request,
  log: Logger,
  allowed: (method: string, path: string) => string[],
  known: readonly KnownFailure[] = [],
): Response {
  if (error instanceof HttpError) return errorResponse(error.status, error.message, error.headers)
  const answer = knownAnswer(known, error, log, requestIdOf(request))
  if (answer) return answer
  const path = new URL(request.url).pathname
  switch (code) {
    case 'NOT_FOUND': {
      const methods = allowed(request.method, path)
      if (methods.length > 0) {
        return errorResponse(405, `Method ${request.method} is not allowed on ${echo(path, 200)}; allowed: ${methods.join(', ')}`, { allow: methods.join(', ') })
      }
      return errorResponse(404, `No route ${request.method} ${echo(path, 200)}`)
    }
    case 'PARSE':
      return errorResponse(400, `Malformed request body: ${(error as Error)?.message ?? 'cannot be parsed'}`)
    case 'VALIDATION': {
      const e = error as { all?: { path?: string; summary?: string; message?: string }[]; message?: string }
      const first = e.all?.[0]
      const where = first?.path ? first.path.replace(/^\//, '').replaceAll('/', '.') + ': ' : ''
      return errorResponse(400, `${where}${first?.summary ?? first?.message ?? 'invalid request'}`)
    }
  }
  const rid = requestIdOf(request)
  if (clientWentAway(request, error)) return wentAway(log, rid, path)
  // a DOMException's stack is '' (not undefined): then its name and message say what it was
  log.error('unhandled error', { request_id: rid, path, error: (error as Error)?.stack || String(error) })
  return errorResponse(500, `Internal error; quote request id ${rid} to support`)
}

/** A body read that failed because the client closed the connection (Bun's AbortError). */
export function clientWentAway(request: Request, error: unknown): boolean {
  return request.signal.aborted && (error as Error)?.name === 'AbortError'
}

/** Logged as what it is, not as a crash; nobody reads the answer, whose 499 is nginx's code for it. */
export function wentAway(log: Logger, requestId: string | undefined, path: string): Response {
  log.info('client closed the connection before its request body arrived', { request_id: requestId, path })
  return errorResponse(499, 'The client closed the connection before its request body arrived')
}
