// OpenAI usage → IR disjoint buckets: prompt_tokens includes the cached tokens and those
// written to the cache (gpt-5.6 and later price a write above input), so the uncached,
// unwritten input is what is left.
import type { Usage } from '../../ir/types.ts'
import { pricedTier } from '../../config/service-tiers.ts'
import { servedWord } from '../../ir/served.ts'
import { countOf } from '../counts.ts'

export interface OpenAIUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null; audio_tokens?: number | null } | null
  completion_tokens_details?: { reasoning_tokens?: number | null; audio_tokens?: number | null } | null
  /** Set by the gateway on usage it counted for an upstream that sent none (counted-usage.ts). */
  switchyard_counted?: boolean
}

/** `tier`: the reply's `service_tier`, which prices its tokens (flex, priority) and is kept as said for the record. */
export function usageFromOpenAI(u: OpenAIUsage | null | undefined, tier?: unknown): Usage {
  const prompt = countOf(u?.prompt_tokens) ?? 0
  const cached = Math.min(countOf(u?.prompt_tokens_details?.cached_tokens) ?? 0, prompt)
  const written = cacheWrites(u?.prompt_tokens_details?.cache_write_tokens, prompt - cached)
  const out: Usage = {
    inputTokens: Math.max(0, prompt - cached - written),
    outputTokens: countOf(u?.completion_tokens) ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
  }
  const reasoning = countOf(u?.completion_tokens_details?.reasoning_tokens)
  if (reasoning !== undefined) out.reasoningTokens = reasoning
  // audio is priced apart from text; the cached part of a prompt is taken to be its text
  const audioIn = Math.min(countOf(u?.prompt_tokens_details?.audio_tokens) ?? 0, out.inputTokens)
  if (audioIn > 0) out.inputAudioTokens = audioIn
  const audioOut = Math.min(countOf(u?.completion_tokens_details?.audio_tokens) ?? 0, out.outputTokens)
  if (audioOut > 0) out.outputAudioTokens = audioOut
  if (u?.switchyard_counted === true) out.counted = true
  const serviceTier = pricedTier(tier)
  if (serviceTier) out.serviceTier = serviceTier
  const said = servedWord(tier)
  if (said) out.served = { serviceTier: said }
  return out
}

/** A usage's `cache_write_tokens` (chat and Responses alike): a count, at most the prompt it is part of. */
export function cacheWrites(v: unknown, most: number): number {
  return Math.min(countOf(v) ?? 0, Math.max(0, most))
}
