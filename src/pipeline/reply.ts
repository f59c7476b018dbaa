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
  const code = aborted ? undefined : socketCode(e)
  if (!aborted && !code) out.failedInside(e)
  const message = aborted ? 'client disconnected' : code ? `upstream connection failed (${code})` : inGateway('upstream call failed in the gateway')
  out.fail(aborted ? 499 : 502, message)
  return new HttpError(aborted ? 499 : 502, message)
}

/**
 * A failure that is neither the upstream's answer, a refusal nor a socket's (the provider's
 * transport turns its own into UpstreamErrors) is the gateway's: a database's error (its SQL and
 * parameters) or a bug. The client and the record are told only that; the log has its words (the
 * outcome was told).
 */
const inGateway = (what: string): string => `${what}; the gateway's log has what happened, under this request's id`

/** The code of a socket's failure (ECONNRESET, ConnectionClosed), never a database's (SQLITE_…, ERR_POSTGRES_…). */
function socketCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code
  return typeof code === 'string' && /^[A-Za-z_]{2,40}$/.test(code) && !/^(ERR_POSTGRES|ERR_REDIS|SQLITE)/i.test(code) ? code : undefined
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
  const code = socketCode(e)
  if (code) return new MidStreamError(`upstream connection closed mid-stream (${code})`, 502)
  out?.failedInside(e)
  return new MidStreamError(inGateway('upstream stream failed in the gateway'), 502)
}
