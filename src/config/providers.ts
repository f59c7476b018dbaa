// What a provider is, as configured: its kind (the wire it speaks) and where and how to reach
// it. Configuration's own facts; the adapter contract (routing/contract.ts) takes them from here.

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

/**
 * One place a model is served: a provider (by its configured id) and the model id that
 * provider knows it by. A model's deployments are tried by `priority` (lower first: every
 * priority-1 deployment before any priority-2 one); within a priority, `weight` shares the load.
 */
export interface Deployment {
  provider: string
  upstreamId: string
  weight: number
  priority: number
}

/** An upstream failure worth another deployment, before the client saw a byte: an HTTP status, a timeout, or no connection. */
export type RetryOn = number | 'timeout' | 'connect'

/** How requests move between deployments (config `routing`). */
export interface RoutingSettings {
  /** How long a deployment rests after `failuresToCool` failures in a row (or a 429's Retry-After). */
  cooldownMs: number
  failuresToCool: number
  retryOn: RetryOn[]
}

export const DEFAULT_ROUTING: RoutingSettings = {
  cooldownMs: 30_000,
  failuresToCool: 3,
  retryOn: [429, 500, 502, 503, 504, 529, 'timeout', 'connect'],
}
