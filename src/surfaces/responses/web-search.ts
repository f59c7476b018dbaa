// OpenAI's web search tool for a Claude model: Anthropic's web search server tool, which runs the
// searches at Anthropic as OpenAI's runs them at OpenAI, and cites what it found (the sources come
// back as url_citation annotations). Its domain filter and approximate location have the same
// meaning there; `max_tool_calls`, the bound on the built-in tools' calls, bounds the searches.
// How much context a search brings (`search_context_size`) has no counterpart: named. A search
// kept off the live web (`external_web_access: false`, Codex's cached mode) has none either: the
// tool is left out, and named, as the other hosted tools are.
import type { WebSearch } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'
import { approximateLocation } from '../openai-options.ts'
import { messagesBeyond, type BeyondPrompt } from '../../billing/server-tools.ts'

/** OpenAI's names for its web search tool, dated or not. */
export const WEB_SEARCH_TOOLS: ReadonlySet<unknown> = new Set(['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26'])

/** A web search tool a Claude model's web search stands for. */
export const searchesLive = (t: unknown): t is Record<string, unknown> => isObj(t) && WEB_SEARCH_TOOLS.has(t.type) && t.external_web_access !== false

/** A web search tool as its Claude counterpart, and what of it has none. */
export function webSearchOf(t: Record<string, unknown>, maxToolCalls: unknown): { search: WebSearch; leftOut: string[] } {
  const search: WebSearch = {}
  const leftOut: string[] = []
  if (typeof maxToolCalls === 'number' && Number.isInteger(maxToolCalls) && maxToolCalls > 0) search.maxUses = maxToolCalls
  const domains = isObj(t.filters) ? t.filters.allowed_domains : undefined
  if (Array.isArray(domains) && domains.length > 0 && domains.every((d) => typeof d === 'string')) search.allowedDomains = domains as string[]
  const at = approximateLocation(t.user_location)
  if (at) search.userLocation = at
  if (t.search_context_size !== undefined) leftOut.push(`tools.${String(t.type)}.search_context_size`)
  return { search, leftOut }
}

/** What a Claude model's request is held for when its Responses body asks for a web search: Anthropic's loop of searches (billing/server-tools.ts), or none. */
export function claudeSearchHold(tools: readonly unknown[], maxToolCalls: unknown): BeyondPrompt | undefined {
  const t = tools.find(searchesLive)
  if (!t) return undefined
  const { maxUses } = webSearchOf(t, maxToolCalls).search
  return messagesBeyond([{ type: 'web_search_20250305', ...(maxUses !== undefined ? { max_uses: maxUses } : {}) }])
}
