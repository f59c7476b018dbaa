// The built-in model catalog: one line a model. Prices and context windows come from
// @pydantic/genai-prices (see catalog.ts); the numbers here are what that library does not
// carry (output caps, surfaces, reasoning support) and a context window to fall back on.
import type { Family } from '../ir/types.ts'
import type { Deployment } from './providers.ts'

export type Surface = 'chat' | 'responses' | 'messages'

/**
 * What a model does not take, where a request may ask it (routing/needs.ts): images or files
 * (PDFs) in the prompt, tools, of OpenAI's tools those GPT-5 brought (custom tools; apply_patch and shell),
 * and OpenAI's structured outputs (a `json_schema` format: "response_format of type
 * 'json_schema' is not supported with this model").
 */
export type Lack = 'images' | 'files' | 'tools' | 'custom-tools' | 'patch-and-shell' | 'json-schema'

export interface ModelRow {
  id: string
  family: Family
  aliases?: string[]
  /** Sent upstream instead of the id (config `upstream_id`). */
  upstreamId?: string
  /** Priced as this id when its own are not priced (a deployment's upstream id; catalog `pricedAs`). */
  pricedAs?: string
  contextWindow: number
  /** Undefined: not known (the upstream decides). */
  maxOutputTokens: number | undefined
  reasoning?: boolean
  summaries?: boolean
  /** Surfaces that may serve the model; all three when absent. */
  surfaces?: Surface[]
  /** What it does not take (config `images: false`, `files: false`, `tools: false`); absent: whatever it is sent. */
  lacks?: Lack[]
  /** Where it is served (config `deployments`); absent: its family's provider. No upstream id: the model's own. */
  deployments?: DeploymentSpec[]
  /** Models to try when every deployment failed (config `fallbacks`). */
  fallbacks?: string[]
}

export type DeploymentSpec = Omit<Deployment, 'upstreamId'> & { upstreamId?: string }

const R = { reasoning: true, summaries: true }
const RESPONSES_ONLY: Surface[] = ['responses']

export const MODELS: ModelRow[] = [
  { id: 'gpt-4o', family: 'openai', aliases: ['gpt-4o-2024-11-20', 'gpt-4o-2024-08-06', 'gpt-4o-2024-05-13'], contextWindow: 128_000, maxOutputTokens: 16_384 },
  { id: 'gpt-4o-mini', family: 'openai', aliases: ['gpt-4o-mini-2024-07-18'], contextWindow: 128_000, maxOutputTokens: 16_384 },
  { id: 'gpt-4.1', family: 'openai', aliases: ['gpt-4.1-2025-04-14'], contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { id: 'gpt-4.1-mini', family: 'openai', aliases: ['gpt-4.1-mini-2025-04-14'], contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { id: 'gpt-4.1-nano', family: 'openai', aliases: ['gpt-4.1-nano-2025-04-14'], contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { id: 'gpt-3.5-turbo', family: 'openai', aliases: ['gpt-3.5-turbo-0125'], contextWindow: 16_385, maxOutputTokens: 4_096, lacks: ['images', 'files', 'json-schema'] },
  { id: 'o1-mini', family: 'openai', aliases: ['o1-mini-2024-09-12'], contextWindow: 128_000, maxOutputTokens: 65_536, reasoning: true, lacks: ['images', 'files', 'tools', 'json-schema'] },
  { id: 'o3-mini', family: 'openai', aliases: ['o3-mini-2025-01-31'], contextWindow: 200_000, maxOutputTokens: 100_000, ...R, lacks: ['images', 'files'] },
  { id: 'o3', family: 'openai', aliases: ['o3-2025-04-16'], contextWindow: 200_000, maxOutputTokens: 100_000, ...R },
  { id: 'o4-mini', family: 'openai', aliases: ['o4-mini-2025-04-16'], contextWindow: 200_000, maxOutputTokens: 100_000, ...R },
  { id: 'gpt-5', family: 'openai', aliases: ['gpt-5-2025-08-07'], contextWindow: 400_000, maxOutputTokens: 128_000, ...R },
  { id: 'gpt-5-mini', family: 'openai', aliases: ['gpt-5-mini-2025-08-07'], contextWindow: 400_000, maxOutputTokens: 128_000, ...R },
  { id: 'gpt-5-nano', family: 'openai', aliases: ['gpt-5-nano-2025-08-07'], contextWindow: 400_000, maxOutputTokens: 128_000, ...R },
  { id: 'gpt-5-codex', family: 'openai', contextWindow: 400_000, maxOutputTokens: 128_000, ...R, surfaces: RESPONSES_ONLY },
  { id: 'gpt-5.1', family: 'openai', aliases: ['gpt-5.1-2025-11-13'], contextWindow: 400_000, maxOutputTokens: 128_000, ...R },
  { id: 'gpt-5.1-codex', family: 'openai', contextWindow: 400_000, maxOutputTokens: 128_000, ...R, surfaces: RESPONSES_ONLY },
  { id: 'gpt-5.1-codex-max', family: 'openai', contextWindow: 400_000, maxOutputTokens: 128_000, ...R, surfaces: RESPONSES_ONLY },
  { id: 'gpt-5.2', family: 'openai', aliases: ['gpt-5.2-2025-12-11'], contextWindow: 400_000, maxOutputTokens: 128_000, ...R },

  { id: 'claude-opus-4-6', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 128_000, reasoning: true },
  { id: 'claude-opus-4-5', family: 'anthropic', aliases: ['claude-opus-4-5-20251101'], contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
  { id: 'claude-opus-4-1', family: 'anthropic', aliases: ['claude-opus-4-1-20250805'], contextWindow: 200_000, maxOutputTokens: 32_000, reasoning: true },
  { id: 'claude-opus-4', family: 'anthropic', aliases: ['claude-opus-4-20250514', 'claude-opus-4-0'], contextWindow: 200_000, maxOutputTokens: 32_000, reasoning: true },
  { id: 'claude-sonnet-4-5', family: 'anthropic', aliases: ['claude-sonnet-4-5-20250929'], contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
  { id: 'claude-sonnet-4', family: 'anthropic', aliases: ['claude-sonnet-4-20250514', 'claude-sonnet-4-0'], contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
  { id: 'claude-3-7-sonnet', family: 'anthropic', aliases: ['claude-3-7-sonnet-20250219', 'claude-3-7-sonnet-latest'], contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
  { id: 'claude-haiku-4-5', family: 'anthropic', aliases: ['claude-haiku-4-5-20251001'], contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
  { id: 'claude-3-5-haiku', family: 'anthropic', aliases: ['claude-3-5-haiku-20241022', 'claude-3-5-haiku-latest'], contextWindow: 200_000, maxOutputTokens: 8_192 },
  { id: 'claude-3-opus', family: 'anthropic', aliases: ['claude-3-opus-20240229', 'claude-3-opus-latest'], contextWindow: 200_000, maxOutputTokens: 4_096 },

  // Always served by the built-in mock provider. Unpriced (cost null) unless the config
  // gives them a price: they stand in for no particular paid model.
  { id: 'mock-gpt', family: 'openai', contextWindow: 128_000, maxOutputTokens: 16_384, ...R },
  { id: 'mock-claude', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 64_000, reasoning: true },
]
