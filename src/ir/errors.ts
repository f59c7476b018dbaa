// A failure reported by (or on the way to) an upstream, already mapped to the spec's
// status. It lives in the IR because every layer speaks it: adapters raise it, the fold
// of a stream throws it, the pipeline turns it into the client's answer.
import type { UpstreamErrorInfo } from './types.ts'

export class UpstreamError extends Error {
  readonly status: number
  readonly type?: string
  readonly retryAfter?: string
  /** What the upstream answered with, when it answered at all. */
  readonly answeredWith?: number
  /**
   * Worth another attempt (connect error, upstream 429 / 5xx, an error before the first
   * event). Decided from the upstream's own status, not the mapped one: a 401 upstream is
   * a 502 for the client but never retried.
   */
  readonly retryable: boolean
  constructor(info: UpstreamErrorInfo, opts: { retryable?: boolean } = {}) {
    super(info.message)
    this.name = 'UpstreamError'
    this.status = info.status
    this.type = info.type
    this.retryAfter = info.retryAfter
    this.answeredWith = info.answeredWith
    this.retryable = opts.retryable ?? false
  }
  get info(): UpstreamErrorInfo {
    return { status: this.status, message: this.message, type: this.type, retryAfter: this.retryAfter }
  }
}

/**
 * The one commit-late rule, for every wire and both paths: the first upstream
 * event decides. No event at all, or an error as the first event, is an ordinary (and,
 * for 429 / 5xx, retryable) failure; anything else commits the response.
 */
export function firstEventFailure(first: { done: true } | { error: UpstreamErrorInfo } | { ok: true }): UpstreamError | undefined {
  if ('done' in first) return new UpstreamError({ status: 502, message: 'upstream stream ended before its first event', type: 'incomplete_stream' }, { retryable: true })
  if ('error' in first) return new UpstreamError(first.error, { retryable: first.error.status === 429 || first.error.status >= 500 })
  return undefined
}
