// The shapes the dashboard reads (a subset of each route's answer).
export interface Session {
  role: 'admin' | 'key'
  accounts: string[]
  key?: PublicKey
}

export interface PublicKey {
  id: string
  account: string
  name: string
  key_prefix: string
  status: 'active' | 'inactive'
  credits: number | null
  spent: number
  rpm: number | null
  created_at: number
  last_used_at: number | null
  /** Until when the secret the last rotation replaced still works; null when it does not. */
  previous_key_expires_at: number | null
}

/** What else the costs count, summed in the report's totals and per model (0 where none). */
export interface UsageExtras {
  input_cache_write_1h_tokens: number
  input_audio_tokens: number
  output_audio_tokens: number
  web_search_requests: number
  file_search_requests: number
  image_tool_tokens: number
}

export interface UsageReport {
  granularity: 'hour' | 'day'
  totals: UsageExtras & { total_requests: number; total_tokens: number; input_tokens: number; output_tokens: number; total_cost: number; unpriced_requests: number }
  series: { timestamp: string; requests: number; input_tokens: number; output_tokens: number; cost: number }[]
  top_models: (UsageExtras & { model: string; requests: number; tokens: number; cost: number; unpriced_requests: number; input_cached_tokens: number; reasoning_tokens: number })[]
  series_by_model?: { model: string; series: UsageReport['series'] }[]
}

export interface Generation {
  id: string
  gateway_id: string
  endpoint: string
  stream: boolean
  model: string
  created_at: number
  apiKeyId: string
  api_key_id: string
  account: string
  provider: string
  http_status: number | null
  usage: {
    prompt_tokens: number
    completion_tokens: number
    total_tokens: number
    cache_creation_input_tokens: number
    cache_read_input_tokens: number
    completion_tokens_details?: { reasoning_tokens: number }
    /** What else the cost counts, present only where the reply had any. */
    cache_write_1h_tokens?: number
    audio_input_tokens?: number
    audio_output_tokens?: number
    web_searches?: number
    file_searches?: number
    image_tool?: { model: string | null; input_tokens: number; image_input_tokens: number; cached_tokens: number; cached_image_tokens: number; output_tokens: number; image_output_tokens: number }
  }
  finish_reason: string | null
  status?: string
  cost: number | null
  unpriced: boolean
  /** How the reply was served, as the upstream said (null: it did not). */
  service_tier: string | null
  speed: string | null
  inference_geo: string | null
  latency_ms: number | null
  time_to_first_token_ms: number | null
  error?: string
  batch_id?: string
}

export interface List<T> {
  data: T[]
  has_more: boolean
  last_id?: string | null
  /** Listing of generations: the page stopped at the server's scan budget. */
  partial?: boolean
}

export interface Batch {
  id: string
  status: string
  endpoint: string
  created_at: number
  api_key_id: string
  family: string
  ended_at: number | null
  request_counts: { total: number; completed: number; failed: number }
  progress: { total: number; completed: number; failed: number; done: number; fraction: number; items_per_second: number | null; eta_seconds: number | null; ended: boolean }
}

export interface Providers {
  families: { family: string; served_by: 'upstream' | 'mock'; base_url: string | null }[]
  stats: { provider: string; requests: number; errors: number; error_rate: number; p50_latency_ms: number | null }[]
}

export interface DeploymentRow {
  model: string
  upstream_id: string
  weight: number
  priority: number
  state: 'ok' | 'cooling' | 'half-open' | 'probing'
  cooling_until: number | null
  consecutive_failures: number
  /** Null for an API key: the counts are every account's. */
  last_hour: { requests: number; errors: number; failovers: number; p50_ms: number | null } | null
}

export interface ProviderDeployments {
  at: number
  providers: { id: string; kind: string; base_url: string | null; keys: number | null; deployments: DeploymentRow[] }[]
}
