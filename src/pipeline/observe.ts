// What watches a generation from outside it: metrics count it, traces follow it. The pipeline
// calls an observer at fixed points — the request is decoded, each upstream call, its record
// (or its refusal) — and hands it what it needs there, never the request's body or a key's secret.
// Observers must be cheap and must not throw: they run on the request's path.
import type { CatalogModel, Surface } from '../config/catalog.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { RequestContext } from './context.ts'

export interface GenerationStart {
  surface: Surface
  /** The model as the catalog resolved it (the first one tried). */
  model: CatalogModel
  stream: boolean
  rc: RequestContext
  /** The request's output cap and temperature, where it gave them. */
  maxTokens?: number
  temperature?: number
  /** The checked body in the surface's wire: read only by an observer that exports content (`tracing.capture_content`). */
  body?: Record<string, unknown>
}

export interface UpstreamCall {
  /** The provider's configured id, and the catalog entry as that deployment is sent it. */
  provider: string
  model: CatalogModel
}

export interface AttemptWatch {
  /** Headers the upstream request carries for the observer (a `traceparent`). */
  readonly headers?: Record<string, string>
  /**
   * The call answered (its HTTP status: 200 once the upstream accepted it) or failed before its
   * first byte: the status the client is answered with, and what the upstream itself answered
   * (none when it never did: a refused connection, a timeout) and the error's kind. `cached`:
   * the response cache answered it, and no upstream was called.
   */
  end(status: number, error?: string, upstream?: { status?: number; type?: string; cached?: boolean }): void
  /** A send of the call failed (`ms` long) and it is sent again: one call, several sends. */
  resent?(status: number, error: string, ms: number): void
}

export interface GenerationWatch {
  /** An upstream call is about to be made. */
  attempt(call: UpstreamCall): AttemptWatch
  /**
   * The generation's record, once it is final (usage counted, cost not yet); `reply` gives what
   * was answered (a JSON reply, or a stream's produced text), read only by an observer that exports content.
   */
  end(record: GenerationInput, reply?: () => string | Record<string, unknown>): void
  /** Refused before it had a record (no credit left: 402; records backed up: 507). Either this or `end` is called, once. */
  refused(status: number, error: string): void
}

export interface GenerationObserver {
  /** A decoded request, before admission. */
  begin(start: GenerationStart): GenerationWatch
}

const NO_ATTEMPT: AttemptWatch = { end() {} }
export const NO_WATCH: GenerationWatch = { attempt: () => NO_ATTEMPT, end() {}, refused() {} }

/** Several observers as one; none at all costs nothing. */
export function observers(list: readonly GenerationObserver[]): GenerationObserver | undefined {
  if (list.length === 0) return undefined
  if (list.length === 1) return list[0]
  return {
    begin(start) {
      const watches = list.map((o) => o.begin(start))
      return {
        attempt(call) {
          const attempts = watches.map((w) => w.attempt(call))
          const headers = Object.assign({}, ...attempts.map((a) => a.headers ?? {})) as Record<string, string>
          return { headers, end: (status, error, upstream) => attempts.forEach((a) => a.end(status, error, upstream)), resent: (status, error, ms) => attempts.forEach((a) => a.resent?.(status, error, ms)) }
        },
        end: (record, reply) => watches.forEach((w) => w.end(record, reply)),
        refused: (status, error) => watches.forEach((w) => w.refused(status, error)),
      }
    },
  }
}
