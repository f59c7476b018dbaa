// Small shared pieces of the chat replies: JSON responses, and turning whatever an
// upstream call threw into the error the client gets (recorded on the way).
import { HttpError } from '../../http/errors.ts'
import type { UpstreamErrorInfo } from '../../ir/types.ts'
import { UpstreamError } from '../../providers/types.ts'
import type { Outcome } from './outcome.ts'

export function jsonReply(body: unknown, headers: Record<string, string>, status = 200): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/** A failure after the stream was committed: it can only end the stream. */
export class MidStreamError extends Error {
  constructor(message: string, readonly status: number) {
    super(message)
    this.name = 'MidStreamError'
  }
}

function isInfo(e: unknown): e is UpstreamErrorInfo {
  return typeof e === 'object' && e !== null && typeof (e as UpstreamErrorInfo).status === 'number' && typeof (e as UpstreamErrorInfo).message === 'string'
}

/** The error to throw for the client (rendered by the app's onError), noted in the outcome. */
export function failureOf(e: unknown, out: Outcome): Error {
  if (e instanceof UpstreamError || e instanceof HttpError) {
    out.fail(e.status, e.message)
    return e
  }
  if (isInfo(e)) {
    out.fail(e.status, e.message)
    return new UpstreamError(e)
  }
  const aborted = (e as Error)?.name === 'AbortError'
  const message = aborted ? 'client disconnected' : `upstream call failed: ${(e as Error)?.message ?? String(e)}`
  out.fail(aborted ? 499 : 502, message)
  return new HttpError(aborted ? 499 : 502, message)
}
