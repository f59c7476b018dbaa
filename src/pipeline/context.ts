// What a generation needs to know about who asked: a plain value that an HTTP route builds
// from its request and the batch worker builds from a batch item. Nothing here reaches
// back into a `Request`.
import type { ApiKey, PendingLimits } from '../http/context.ts'
import type { AdmitAsk } from '../billing/admission.ts'

export interface RequestContext {
  apiKey: ApiKey
  requestId: string
  /** Aborted when the client goes away (or the batch is cancelled): the upstream call stops. */
  signal: AbortSignal
  /** Beta tokens the client asked for (messages: `anthropic-beta` / `beta-beta` header, body `betas`). */
  betas?: string[]
  batchId?: string
  /** The W3C trace context the client sent (`traceparent`, `tracestate`): the request's span continues it. */
  traceparent?: string
  tracestate?: string
  /**
   * What the request's access-log line names, filled in as the pipeline learns it: the model once
   * it is resolved, the trace and span ids once its span starts.
   */
  accessLog?: { model?: string; traceId?: string; spanId?: string }
  /** The catalog id of the model the call under way goes to (a fallback's, when one serves): what a stored response names as its maker. */
  served?: string
  /**
   * What the client asked of the response cache (`x-switchyard-cache`, `cache-control`), in
   * seconds; 0: not from it, not into it. Undefined: the config decides (cache/ask.ts).
   */
  cacheTtlS?: number
  /** The cassette the client named (`x-switchyard-cassette`), a checked file name. */
  cassette?: string
  /** Interval of `: ping` comments on a silent stream (tests shorten it). */
  pingMs?: number
  /**
   * The client is the openai SDK's stream helper (`x-stainless-helper-method: stream`),
   * which throws on any event type it does not know: the responses surface then leaves out
   * the spec's extra events and says the same in the events it knows.
   */
  knownEventsOnly?: boolean
  /**
   * A responses turn that continues a conversation by name holds it (responses/route.ts): let go
   * once its response is saved, so that the next turn finds it (the route lets go at the end too).
   */
  releaseTurn?: () => void
  /**
   * The front door's shared rate limits, not yet decided when the handler started: nothing goes
   * upstream before they allow the request. Undefined: they were taken before the handler ran.
   */
  limits?: PendingLimits
  /**
   * A batch item: held on the main thread, where its key's ledger is, before its worker ran it
   * (its key comes with no credit figures). A fallback model is held anew there, through this, at
   * its own price before it is called; nothing is held here. Rejects when it cannot be held.
   */
  holdAnew?: (ask: AdmitAsk) => Promise<undefined>
}
