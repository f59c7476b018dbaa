// The contract between the generation pipeline and the provider adapters. It is neutral
// ground: adapters implement it, routing hands adapters out, the pipeline calls them, and
// no surface ever sees a provider module.
import type { CatalogModel } from '../config/catalog.ts'
import type { ProviderKind } from '../config/providers.ts'
import type { GenerationRequest, GenerationResponse, StreamEvent, UpstreamErrorInfo, Usage } from '../ir/types.ts'
import type { CacheUse } from '../cache/ask.ts'
import type { Watch } from '../providers/idle.ts'

export type { ProviderConfig, ProviderKind } from '../config/providers.ts'

export interface CallContext {
  signal: AbortSignal
  /** The resolved catalog entry; send `model.upstreamId` upstream. */
  model: CatalogModel
  requestId: string
  /** Beta tokens the client asked for (`anthropic-beta` header or body `betas`). */
  betas?: string[]
  /** Whose work this is (the API key's id): token counting is shared fairly between lanes. */
  lane?: string
  /** Headers the upstream request carries beside the adapter's own (a trace's `traceparent`). */
  headers?: Record<string, string>
  /** The generation uses the response cache (cache/ask.ts): its transport may answer the call. */
  cache?: CacheUse
  /**
   * The request's deadline for reaching an upstream (`performance.now()` ms, and its length): an
   * attempt still waiting for its answer then fails with a 504 that is neither retried nor failed
   * over, and none starts after it. Undefined: only the provider's own timeout applies.
   */
  deadline?: { at: number; ms: number }
  /**
   * Another deployment or a fallback model may take the call: an upstream that says when to come
   * back (429 or 503 with Retry-After) is left for it at once, not waited for.
   */
  alternatives?: boolean
  /** The model is a fallback of the one the client named (whose turns the thread holds). */
  fallback?: boolean
  /**
   * Told of each send of the call that failed and is sent again (a 503, a reset): its status,
   * what failed and how long it took, just before the next send goes.
   */
  resent?: (status: number, error: string, ms: number) => void
  /** The cassette the client named (`x-switchyard-cassette`): its exchanges are recorded there, not in the model's file. */
  cassette?: string
  /**
   * Told, when cassettes stand in for the upstream (src/replay), whether a recording answered
   * the call (and whether it is billed) or it went upstream.
   */
  replayed?: (how: { billed: boolean } | undefined) => void
  /**
   * Told the parameters the adapter's request leaves out though the client set them (thinking
   * forbids a forced tool choice and the sampling ones), by the client's names: the compat
   * header names them.
   */
  leftOut?: (names: string[]) => void
  /** Told of each code-execution container the translated reply says it ran in. */
  containerGiven?: ContainerGiven
  /**
   * Told, when a stream's reader leaves it early (a client gone), the text and tool input its
   * adapter had read from the upstream but not yet handed on (held for a block or a call's name):
   * the upstream produced it, and it is billed so.
   */
  unsent?: (text: string) => void
}

/**
 * A reply handed the key a code-execution container (its id, and the expiry its upstream said,
 * epoch ms): the pipeline records it as the key's, the one key that may name it later.
 */
export type ContainerGiven = (id: string, expiresAt?: number) => void

/** The wire a surface speaks and an upstream may speak too: then the body passes through. */
export type Wire = 'openai.chat' | 'anthropic.messages' | 'openai.responses'

/** What the tap of a pass-through reply has learnt so far. */
export interface TapState {
  id: string | null
  usage: Usage | null
  /** The finish reason exactly as the wire spelled it. */
  finishReason: string | null
  /** The upstream ended the stream properly (`[DONE]`, `message_stop`, …). */
  done: boolean
  /** Content (beyond an empty opener) went by. */
  produced: boolean
  /**
   * Only the stream's opening snapshots have gone by (Responses: `response.created`,
   * `.in_progress`): the relay commits at the event after them.
   */
  opening?: boolean
  /** An in-band error event went by. */
  error: UpstreamErrorInfo | null
  /**
   * An error event went by whose stream goes on to its failed end (Responses: `error`, then
   * `response.failed`): what the stream failed with if it ends without that end, or stops there.
   */
  errorSaid?: UpstreamErrorInfo
  /**
   * An event whose data is not JSON went by: not sent on (a client's parser would fail on it with
   * no word of why), and the stream fails there as a translated one does.
   */
  unreadable?: boolean
  /** Responses-style status of the final response, when the wire has one. */
  status?: string | null
  /** The tier that served the reply, where it is priced apart (OpenAI's flex, priority): a stream dropped before its usage is billed at it too. */
  serviceTier?: Usage['serviceTier']
}

/**
 * Reads a relayed reply of one wire, event by event, as JSON (never by string matching),
 * and may rewrite an event on the way (the chat tap strips the usage the client did not
 * ask for). It lives beside its adapter: it is that family's knowledge of its own wire.
 */
export interface WireTap {
  readonly state: TapState
  /** One SSE event's data (and event name) → the text to send on for it, or null to swallow it. */
  event(raw: string): string | null
  /**
   * A read of whole events (LF endings, a blank line last, no CR), read where it lies when every
   * event in it is in the one plain shape the tap knows (routing/sse-bytes.ts): the bytes to send
   * on, `b` itself or less what the tap takes out; undefined, having read nothing, for any other
   * read, which then goes to event() as text.
   */
  bytes?(b: Uint8Array): Uint8Array | undefined
  /** A whole non-streamed JSON reply; a string returned replaces it (the responses tap completes the object). */
  json(text: string): string | void
  /**
   * Whether json() may replace the reply. A tap that only reads (chat, messages) reads it after
   * the reply is handed over, off the response's path.
   */
  readonly rewritesJson?: boolean
  /** The text and tool arguments relayed so far, to bill a stream that ended early. */
  producedText(): string
}

export interface TapOptions {
  /** Remove usage the client did not ask for (chat `include_usage` forced on for billing). */
  stripUsage?: boolean
  /** Told of each code-execution container the relayed reply hands the client. */
  containerGiven?: ContainerGiven
  /**
   * Responses wire: the surface's hand on the lifecycle. `observe` sees each response
   * snapshot with its sequence number, and is handed once a reader of the number of the last
   * event relayed (read or not); `finalize` gets the final response object (JSON reply or
   * terminal event) and returns it completed — the gateway's extras added and its thread
   * stored before the event goes out.
   */
  responses?: {
    observe?(response: Record<string, unknown>, sequence: number, lastSequence: () => number): void
    /**
     * Each snapshot the stream opens with (`response.created`, `.in_progress`, `.queued`) as the
     * client is to see it: the response in the upstream's place, or undefined to relay the event
     * as it came. (observe then sees the one relayed.)
     */
    opened?(response: Record<string, unknown>): Record<string, unknown> | undefined
    /** Each output item the upstream completed (`response.output_item.done`), at its index: what a failure after it still shows. */
    itemDone?(item: Record<string, unknown>, outputIndex: number): void
    finalize(response: Record<string, unknown>): Record<string, unknown>
    /**
     * The frames that end the relayed stream, in the surface's own terms, for the upstream's
     * terminal event `type` (`response.completed`, `response.incomplete`, `response.failed`)
     * carrying the finalized response; `sequence` is the upstream event's number (undefined
     * in recordings from before there were any). What the upstream sent for a failure goes
     * out first, unchanged; a completion is replaced by what this returns.
     */
    terminal(type: string, event: Record<string, unknown>, sequence: number | undefined): string
    /** Resolves once what finalize stored is committed; the relay holds the last bytes until then. */
    durable?(): Promise<void>
  }
}

/** The fast path of one wire: the checked body goes upstream as is and the reply comes back raw. */
export interface Passthrough {
  /**
   * POSTs the body (model replaced by the upstream id) with the adapter's retries and error
   * mapping; `accept` turns the 2xx Response into the result inside the attempt, so a
   * retryable UpstreamError it throws (an error as the first event) is retried like a 5xx.
   */
  call<T>(body: Record<string, unknown>, ctx: CallContext, accept: (res: Response, idle: Watch) => Promise<T>): Promise<T>
  tap(opts?: TapOptions): WireTap
  /** The prompt of a body as text, to bill a dropped stream whose upstream never said. */
  promptText(body: Record<string, unknown>): string
}

export interface ProviderAdapter {
  readonly name: string
  readonly kind: ProviderKind
  generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse>
  /**
   * Resolves once the upstream has accepted the request, so a failure before any
   * output rejects with an UpstreamError (an ordinary status for the client).
   * Failures after that arrive as an `error` event.
   */
  stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>>
  /** The wires this upstream speaks natively. */
  readonly passthrough?: Partial<Record<Wire, Passthrough>>
  /** Input tokens of a request as the upstream counts them, where it can (messages count_tokens). */
  countTokens?(req: GenerationRequest, ctx: CallContext): Promise<number>
}
