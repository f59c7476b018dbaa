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
