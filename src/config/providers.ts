// What a provider is, as configured: its kind (the wire it speaks) and where and how to reach
// it. Configuration's own facts; the adapter contract (routing/contract.ts) takes them from here.

import type { Family } from '../ir/types.ts'

/**
 * The wire a provider speaks: `openai` and `anthropic` (the families' own APIs),
 * `openai-compatible` (another server speaking chat completions: vLLM, Ollama, Groq, …),
 * `azure-openai` (deployment paths, `api-version`, the `api-key` header), and the built-in `mock`.
 */
export type ProviderKind = 'openai' | 'anthropic' | 'openai-compatible' | 'azure-openai' | 'mock'

/** The kinds a config file may name (the mock is built in, always there as `mock`). */
export const CONFIG_KINDS = ['openai', 'anthropic', 'openai-compatible', 'azure-openai'] as const

export interface ProviderConfig {
  /** Its id in the config: what deployments name, records and logs show. */
  id: string
  /** The same as `id` (upstream error messages say "upstream <name>"). */
  name: string
  kind: ProviderKind
  baseUrl: string
  /** Its key pool, used round-robin per call; empty: no credentials are sent. */
  apiKeys: string[]
  /** The pool's first key (what single-key code shows, masked). */
  apiKey?: string
  /** azure-openai: the `api-version` query parameter. */
  apiVersion?: string
  /** The Responses API is passed through to this upstream (`{baseUrl}/responses`); otherwise served over chat completions. */
  responses: boolean
  timeoutMs: number
  /** Retries on connect errors, 429 and 5xx while nothing has reached the client. */
  maxRetries: number
}

/** The built-in mock's provider id (and kind). */
export const MOCK_ID = 'mock'

/** The family whose requests a kind's wire carries (undefined: the mock, which serves both). */
export function familyOfKind(kind: ProviderKind): Family | undefined {
  if (kind === 'mock') return undefined
  return kind === 'anthropic' ? 'anthropic' : 'openai'
}

/**
 * The provider a model of `family` without deployments of its own is served by: the first
 * configured provider of the family's own kind (`openai` / `anthropic`; in the shorthand form
 * the provider of that id), else the mock.
 */
export function defaultProviderId(providers: Record<string, ProviderConfig>, family: Family): string {
  for (const p of Object.values(providers)) if (p.kind === family) return p.id
  return MOCK_ID
}

/** The configured provider a family's models go to by default; undefined: the mock serves them. */
export function familyProvider(providers: Record<string, ProviderConfig>, family: Family): ProviderConfig | undefined {
  return providers[defaultProviderId(providers, family)]
}

/** A provider's kind by id (the mock's included); undefined for an id not configured. */
export function kindOf(providers: Record<string, ProviderConfig>, id: string): ProviderKind | undefined {
  return id === MOCK_ID ? 'mock' : providers[id]?.kind
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
  /** How long a request may spend reaching an upstream, failovers included: no call starts after it, and one under way until its first byte ends at it (504). */
  deadlineMs: number
}

export const DEFAULT_ROUTING: RoutingSettings = {
  cooldownMs: 30_000,
  failuresToCool: 3,
  retryOn: [429, 500, 502, 503, 504, 529, 'timeout', 'connect'],
  deadlineMs: 600_000,
}

/** An upstream key as logs and `switchyard config` show it: its last four characters at most, and its length. */
export function maskKey(key: string): string {
  return key.length >= 20 ? `…${key.slice(-4)} (${key.length} chars)` : `***(${key.length} chars)`
}
