// The internal representation: one provider-neutral model of a generation request,
// its result, and its stream of events. Surfaces decode into it and encode out of it;
// provider adapters translate it to and from their wire. Plain data, no I/O.

import type { ContainerCounts } from '../billing/containers.ts'
export type Family = 'openai' | 'anthropic'

export type Role = 'system' | 'user' | 'assistant' | 'tool'

/**
 * Where a media part came from. `at`, on a source the gateway resolves (a file id, a URL) or an
 * adapter may refuse (inline data of a type the target does not take), is where the client's
 * request names it, for an error that must name the field as it was sent (a surface whose items
 * are not the IR's messages one for one); without it, the IR's path.
 */
export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string; at?: string }
  | { kind: 'url'; url: string; at?: string }
  | { kind: 'text'; mediaType: string; data: string }
  | { kind: 'file'; fileId: string; at?: string }

/** Provider-only data rides here and goes back only to its own family. */
export type ProviderData = Partial<Record<Family, Record<string, unknown>>>

/** A source the model cited (a Claude web search's result): OpenAI's `url_citation`. */
export interface WebSource {
  url: string
  title?: string
}

/** How a web search the upstream ran ended. */
export type SearchStatus = 'completed' | 'failed' | 'incomplete'

/** A source cited for the characters `start` to `end` of its text part. */
export type UrlCitation = WebSource & { start: number; end: number }

export type Part =
  /** `providerData.anthropic.citations`: Claude's own citations of the text, as it sent them (its web search's and a document's). */
  | { type: 'text'; text: string; cacheControl?: unknown; citations?: UrlCitation[]; providerData?: ProviderData }
  | { type: 'image'; source: MediaSource; detail?: 'auto' | 'low' | 'high' | 'original'; cacheControl?: unknown }
  | { type: 'document'; source: MediaSource; title?: string; cacheControl?: unknown }
  /**
   * `arguments` is the JSON text exactly as the model produced it. `at`, on a call a client sent
   * back as text, is where its request holds that text, for an adapter that must parse it (as a
   * media source's `at`).
   */
  | { type: 'tool-call'; id: string; name: string; arguments: string; at?: string; providerData?: ProviderData }
  | { type: 'tool-result'; toolCallId: string; content: string | Part[]; isError?: boolean; cacheControl?: unknown }
  /** Thinking / reasoning. `signature` and `redacted` are Anthropic's and must be echoed byte for byte. */
  | { type: 'reasoning'; text: string; signature?: string; redacted?: string; providerData?: ProviderData }
  /**
   * A web search the upstream ran itself (Claude's web search server tool): OpenAI's
   * `web_search_call`. `failed`: it answered with an error; `incomplete`: the reply ended before
   * its result (Claude's pause_turn, to be continued). `providerData.anthropic`: the search's own
   * blocks as Claude sent them (its input and its result's content, the pages encrypted), which
   * go back to it in a later turn so it still has what it found.
   */
  | { type: 'web-search'; id: string; query: string; sources: WebSource[]; status: SearchStatus; providerData?: ProviderData }

export interface Message {
  role: Role
  content: Part[]
  /** OpenAI `name` on a message (participant name); dropped for Anthropic. */
  name?: string
}

export interface Tool {
  name: string
  description?: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
  strict?: boolean
  cacheControl?: unknown
  providerData?: ProviderData
}

export type ToolChoice =
  | { type: 'auto'; disableParallel?: boolean }
  | { type: 'none' }
  | { type: 'required'; disableParallel?: boolean }
  | { type: 'tool'; name: string; disableParallel?: boolean }

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string }

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max' | 'none'

export interface ReasoningConfig {
  effort?: ReasoningEffort
  /** Explicit thinking budget (Anthropic `thinking.budget_tokens`). */
  budgetTokens?: number
  summary?: 'auto' | 'concise' | 'detailed' | 'none'
}

/** The model may search the web, the upstream running the searches (OpenAI's web_search tool → Claude's web search tool). */
export interface WebSearch {
  allowedDomains?: string[]
  /** Approximate: city, region, country, timezone. */
  userLocation?: Record<string, string>
  maxUses?: number
}

export interface GenerationRequest {
  /** The model id as the client named it (an alias resolves through the catalog). */
  model: string
  system?: Part[]
  messages: Message[]
  maxTokens?: number
  temperature?: number
  topP?: number
  topK?: number
  stop?: string[]
  tools?: Tool[]
  toolChoice?: ToolChoice
  parallelToolCalls?: boolean
  webSearch?: WebSearch
  reasoning?: ReasoningConfig
  responseFormat?: ResponseFormat
  stream: boolean
  /** The client asked for usage in the stream (chat `stream_options.include_usage`). */
  includeUsage?: boolean
  user?: string
  metadata?: Record<string, unknown>
  /** Beta feature tokens to send upstream (Anthropic `anthropic-beta`). */
  betas?: string[]
  /** Parameters of one family carried as-is to that family's upstream only. */
  providerData?: ProviderData
}

/**
 * Disjoint token buckets: `inputTokens` is uncached input only;
 * cache reads and writes are counted apart. OpenAI's `prompt_tokens` is their sum.
 */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  reasoningTokens?: number
  /** Of cacheWriteTokens, those written to last an hour (Anthropic's `ttl: "1h"`): priced above the 5-minute ones. */
  cacheWrite1hTokens?: number
  /** Of inputTokens and of outputTokens, audio (OpenAI's audio models): priced apart from text. */
  inputAudioTokens?: number
  outputAudioTokens?: number
  /** Web searches the upstream ran for the request (Anthropic's server tool, OpenAI's web_search_call): priced per search. */
  webSearches?: number
  /** File searches the upstream ran (OpenAI's file_search_call): priced per call. */
  fileSearches?: number
  /** OpenAI's image generation tool's tokens (Responses `tool_usage.image_gen`): priced at its image model's rates (config/image-prices.ts). */
  imageGen?: ImageGenUsage
  /** New code-interpreter containers the reply made, by memory tier (billing/containers.ts): priced a session each. */
  containers?: ContainerCounts
  /** OpenAI's processing tier that served the request, where it is priced apart from standard, or not priced at all (ultrafast; config/service-tiers.ts). */
  serviceTier?: 'flex' | 'priority' | 'ultrafast'
  /** Anthropic's fast mode served it (`speed: "fast"`): priced apart (config/claude-premiums.ts). */
  speed?: 'fast'
  /** Anthropic ran it in the US only (`inference_geo: "us"`): priced apart on newer models (config/claude-premiums.ts). */
  inferenceGeo?: 'us'
  /**
   * How the reply says it was served, in its own words (OpenAI's `service_tier`, Anthropic's
   * `speed` and `inference_geo`), also where that costs the standard price (`default`,
   * `standard`, `global`): shown in its record. The fields above are what prices it.
   */
  served?: Served
  /** The upstream reported none: the gateway counted these with its own tokenizer. */
  counted?: true
}

/** A reply's own words for how it was served (`Usage.served`). */
export interface Served {
  serviceTier?: string
  speed?: string
  inferenceGeo?: string
}

/**
 * The tokens of OpenAI's image model, run by the Responses image generation tool, as its
 * `tool_usage.image_gen` counts them: each detail a part of its total (not disjoint buckets).
 */
export interface ImageGenUsage {
  /** The image model the tool ran (its `model`), when known: unknown or unpriced, the dearest known rates. */
  model?: string
  /** Every input token, text and image, cached or not. */
  inputTokens: number
  /** Of inputTokens, image tokens. */
  imageInputTokens: number
  /** Of inputTokens, those read from the cache (of them, `cachedImageTokens` image ones). */
  cachedTokens: number
  cachedImageTokens: number
  outputTokens: number
  /** Of outputTokens, image tokens (all of them when the reply does not say). */
  imageOutputTokens: number
}

export type FinishReason =
  | 'stop'
  | 'length'
  | 'tool_calls'
  | 'content_filter'
  | 'refusal'
  | 'pause'
  | 'context_exceeded'
  | 'error'
  | 'other'

/** Unified and raw side by side, so nothing the provider said is lost. */
export interface Finish {
  reason: FinishReason
  raw?: string
  /** The stop sequence that matched, when known. */
  stopSequence?: string | null
}

export interface GenerationResponse {
  id: string
  /** Model id as reported by the upstream. */
  model: string
  /** Epoch seconds. */
  created: number
  /** Text, tool-call and reasoning parts, in the order the model produced them. */
  content: Part[]
  finish: Finish
  usage: Usage
  providerData?: ProviderData
}

export interface UpstreamErrorInfo {
  /** The spec status the gateway answers with (400, 401, 402, 404, 413, 429, 5xx). */
  status: number
  message: string
  /** Provider error type/code, e.g. `overloaded_error`, `invalid_request_error`. */
  type?: string
  retryAfter?: string
  /**
   * The HTTP status the upstream answered with, when it answered (a trace's
   * `http.response.status_code`). Not read by `retry_on`, which matches by the mapping.
   */
  answeredWith?: number
}

/**
 * Stream events are noun-verb; a stream is start, content events, then finish or error.
 * Text and reasoning come in blocks (`*-start`, deltas, `*-end`) as tool inputs do; an
 * adapter may leave the boundaries out, and `withBlocks` (blocks.ts) derives them once for
 * every encoder (messages `content_block_start/stop`, responses `output_item.added/done`).
 */
export type StreamEvent =
  /** `usage`: what the upstream counted before any output (Anthropic's `message_start`), when it says. */
  /** `usage`: what the upstream says at its start (Claude: the prompt's); `serviceTier`: the tier serving it, where said then (OpenAI's chunks). */
  | { type: 'start'; id: string; model: string; created: number; usage?: Usage; serviceTier?: Usage['serviceTier'] }
  | { type: 'text-start' }
  /** `block`: the first text of a text block of the upstream's own (Claude's): a surface of that wire starts a block there, the others read on. */
  | { type: 'text-delta'; text: string; block?: true }
  /** `cut`: ended by the stream's failure, not by the model (blocks.ts). */
  | { type: 'text-end'; cut?: true }
  /** The last `span` characters of the text so far cite `sources` (a cited Claude text block, at its end). */
  | { type: 'text-citations'; sources: WebSource[]; span: number; providerData?: ProviderData }
  | { type: 'reasoning-start' }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'reasoning-end'; cut?: true }
  | { type: 'reasoning-signature'; signature: string }
  | { type: 'reasoning-redacted'; data: string }
  /** A web search the upstream runs itself begins (`id`: the upstream's), and ends with its query and what it found. */
  | { type: 'web-search-start'; id: string }
  | { type: 'web-search-end'; id: string; query: string; sources: WebSource[]; status: SearchStatus; providerData?: ProviderData }
  | { type: 'tool-input-start'; index: number; id: string; name: string }
  | { type: 'tool-input-delta'; index: number; delta: string }
  | { type: 'tool-input-end'; index: number }
  /** Cumulative usage so far; the latest one wins. */
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; finish: Finish; usage: Usage }
  | { type: 'error'; error: UpstreamErrorInfo }

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
}

/** OpenAI-style prompt_tokens: every input token, cached or not. */
export function promptTokens(u: Usage): number {
  return u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens
}
