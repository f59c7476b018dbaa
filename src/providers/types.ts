// The contract every provider adapter fulfils. An adapter knows nothing of surfaces.
import type { GenerationRequest, GenerationResponse, StreamEvent, UpstreamErrorInfo } from '../ir/types.ts'
import type { CatalogModel } from '../config/catalog.ts'

export type ProviderKind = 'openai' | 'anthropic' | 'mock'

export interface ProviderConfig {
  name: string
  kind: ProviderKind
  baseUrl: string
  apiKey?: string
  timeoutMs: number
  /** Retries on connect errors, 429 and 5xx while nothing has reached the client. */
  maxRetries: number
}

export interface CallContext {
  signal: AbortSignal
  /** The resolved catalog entry; send `model.upstreamId` upstream. */
  model: CatalogModel
  requestId: string
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
}

/** A failure reported by (or on the way to) an upstream, already mapped to the spec's status. */
export class UpstreamError extends Error {
  readonly status: number
  readonly type?: string
  readonly retryAfter?: string
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
    this.retryable = opts.retryable ?? false
  }
  get info(): UpstreamErrorInfo {
    return { status: this.status, message: this.message, type: this.type, retryAfter: this.retryAfter }
  }
}
