// Anthropic usage → IR buckets. Anthropic's input_tokens already excludes cache reads and
// writes, so the buckets map one to one.
import type { Usage } from '../../ir/types.ts'
import { premiumsOf } from '../../config/claude-premiums.ts'
import { saidServed } from '../../ir/served.ts'
import { countOf } from '../counts.ts'

export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  /** The cache writes by how long they last: the hour's are priced higher. */
  cache_creation?: { ephemeral_1h_input_tokens?: number | null; ephemeral_5m_input_tokens?: number | null } | null
  /** Server tools run for the request, each priced per use. */
  server_tool_use?: { web_search_requests?: number | null } | null
  /** Of output_tokens, those spent thinking: OpenAI's reasoning tokens. */
  output_tokens_details?: { thinking_tokens?: number | null } | null
  /** How it was served, where priced apart (config/claude-premiums.ts): `fast`, `us`. */
  speed?: string | null
  inference_geo?: string | null
  /** `standard`, `priority` (capacity bought ahead, under a contract's terms) or `batch`: said, not priced. */
  service_tier?: string | null
}

/**
 * The tokens written to the cache: Anthropic's total, or, from a server of its wire that gives only
 * the breakdown by lifetime (`cache_creation`), its parts summed (else its hour's writes, priced
 * within the total, were priced at nothing).
 */
function writesOf(u: AnthropicUsage): number | undefined {
  const total = countOf(u.cache_creation_input_tokens)
  if (total !== undefined) return total
  const minutes = countOf(u.cache_creation?.ephemeral_5m_input_tokens)
  const hour = countOf(u.cache_creation?.ephemeral_1h_input_tokens)
  return minutes === undefined && hour === undefined ? undefined : (minutes ?? 0) + (hour ?? 0)
}

/** A usage that is an object, else none (a server of the wire may send a number or a string there). */
const asUsage = (u: unknown): AnthropicUsage | undefined => (typeof u === 'object' && u !== null && !Array.isArray(u) ? (u as AnthropicUsage) : undefined)

export function usageFromAnthropic(given: AnthropicUsage | null | undefined): Usage {
  const u = asUsage(given)
  const out: Usage = {
    inputTokens: countOf(u?.input_tokens) ?? 0,
    outputTokens: countOf(u?.output_tokens) ?? 0,
    cacheReadTokens: countOf(u?.cache_read_input_tokens) ?? 0,
    cacheWriteTokens: (u && writesOf(u)) ?? 0,
  }
  return u ? withPriced(out, u) : out
}

/**
 * message_delta usage is cumulative and may carry only some fields: the
 * fields it has replace the running ones; nothing is ever added.
 */
export function overwriteUsage(running: Usage, given: AnthropicUsage | null | undefined): Usage {
  const u = asUsage(given)
  if (!u) return running
  return withPriced(
    {
      ...running,
      inputTokens: countOf(u.input_tokens) ?? running.inputTokens,
      outputTokens: countOf(u.output_tokens) ?? running.outputTokens,
      cacheReadTokens: countOf(u.cache_read_input_tokens) ?? running.cacheReadTokens,
      cacheWriteTokens: writesOf(u) ?? running.cacheWriteTokens,
    },
    u,
  )
}

/** The counts priced apart from the four buckets, where the usage has them (and they are not 0). */
function withPriced(out: Usage, u: AnthropicUsage): Usage {
  const hour = countOf(u.cache_creation?.ephemeral_1h_input_tokens)
  if (hour !== undefined) {
    if (hour > 0) out.cacheWrite1hTokens = hour
    else delete out.cacheWrite1hTokens
  }
  // fast mode, US-only inference: said where the usage says how it was served (a delta that leaves them out keeps them)
  const premiums = premiumsOf(u)
  if ('speed' in u) {
    if (premiums.speed) out.speed = premiums.speed
    else delete out.speed
  }
  if ('inference_geo' in u) {
    if (premiums.inferenceGeo) out.inferenceGeo = premiums.inferenceGeo
    else delete out.inferenceGeo
  }
  // and in its own words, standard ones too, for the record
  if ('speed' in u) out = saidServed(out, 'speed', u.speed)
  if ('inference_geo' in u) out = saidServed(out, 'inferenceGeo', u.inference_geo)
  if ('service_tier' in u) out = saidServed(out, 'serviceTier', u.service_tier)
  // a part of the output tokens, as OpenAI's reasoning tokens are (a delta that leaves it out keeps it)
  const thinking = countOf(u.output_tokens_details?.thinking_tokens)
  if (thinking !== undefined) out.reasoningTokens = thinking
  const searches = countOf(u.server_tool_use?.web_search_requests)
  if (searches !== undefined) {
    if (searches > 0) out.webSearches = searches
    else delete out.webSearches
  }
  return out
}
