// Small shared pieces of every reply: JSON replies, and turning whatever an upstream call
// threw into the error the client gets (noted in the outcome on the way).
import { HttpError } from '../http/errors.ts'
import { UpstreamError } from '../ir/errors.ts'
import type { UpstreamErrorInfo } from '../ir/types.ts'
import type { GenerationOutcome } from './outcome.ts'

/** A JSON answer as a value: the HTTP route sends it (jsonResponse), a batch item stores it. */
export interface JsonReply {
  status: number
  /** The reply object, or its JSON text (a pass-through upstream's, as it came). */
  body: Record<string, unknown> | string
  headers: Record<string, string>
}

export const jsonText = (r: JsonReply): string => (typeof r.body === 'string' ? r.body : JSON.stringify(r.body))

export function jsonResponse(r: JsonReply): Response {
  return new Response(jsonText(r), { status: r.status, headers: { 'content-type': 'application/json', ...r.headers } })
}

/** A failure after the stream was committed: it can only end the stream, in band. */
export class MidStreamError extends Error {
  constructor(message: string, readonly status: number, readonly type?: string) {
    super(message)
    this.name = 'MidStreamError'
  }
}

function isInfo(e: unknown): e is UpstreamErrorInfo {
  return typeof e === 'object' && e !== null && typeof (e as UpstreamErrorInfo).status === 'number' && typeof (e as UpstreamErrorInfo).message === 'string'
}

/** The error to throw for the client (rendered by the app's onError), noted in the outcome. */
export function failureOf(e: unknown, out: GenerationOutcome): Error {
  if (e instanceof UpstreamError || e instanceof HttpError) {
    out.fail(e.status, e.message)
    return e
  }
  if (isInfo(e)) {
    out.fail(e.status, e.message)
    return new UpstreamError(e)
  }
  const aborted = (e as Error)?.name === 'AbortError'
  if (!aborted) out.failedInside(e)
  const message = aborted ? 'client disconnected' : inGateway(e, 'upstream call failed in the gateway')
  out.fail(aborted ? 499 : 502, message)
  return new HttpError(aborted ? 499 : 502, message)
}

/**
 * What the client and the record are told of a failure that is neither the upstream's answer nor a
 * refusal (the provider's transport turns its own into UpstreamErrors): never its own words,
 * which may be a database's (its SQL and parameters) or a bug's; the log has them (the outcome
 * was told). A socket's code is named; a database's is not.
 */
function inGateway(e: unknown, what: string): string {
  const code = (e as { code?: unknown })?.code
  const named = typeof code === 'string' && /^[A-Za-z_]{2,40}$/.test(code) && !/^(ERR_POSTGRES|ERR_REDIS|SQLITE)/i.test(code)
  return `${what}${named ? ` (${code})` : ''}; the gateway's log has what happened, under this request's id`
}

/** A failure met while streaming, as the MidStreamError that ends the stream (`out` is told of one inside the gateway). */
export function midStreamFailure(e: unknown, signal: AbortSignal, out?: GenerationOutcome): MidStreamError {
  // Once the client has gone (or the gateway cut the stream, which it gives as the reason),
  // whatever the source reports is the echo of our abort.
  if (signal.aborted) return signal.reason instanceof MidStreamError ? signal.reason : new MidStreamError('client disconnected', 499)
  if (e instanceof MidStreamError) return e
  if (e instanceof UpstreamError) return new MidStreamError(e.message, e.status, e.type)
  // a read that failed on the socket (a reset, a close): said as the translated path says it,
  // with the code, never the fetch client's own advice
  const code = (e as { code?: unknown })?.code
  if (typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code)) return new MidStreamError(`upstream connection closed mid-stream (${code})`, 502)
  out?.failedInside(e)
  return new MidStreamError(inGateway(e, 'upstream stream failed in the gateway'), 502)
}
