// The IR's web search as Anthropic's web search server tool (the searches run at Anthropic).
import type { GenerationRequest, WebSearch } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'

export function webSearchTool(s: WebSearch): Record<string, unknown> {
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' }
  if (s.maxUses !== undefined) tool.max_uses = s.maxUses
  if (s.allowedDomains) tool.allowed_domains = s.allowedDomains
  if (s.userLocation) tool.user_location = { type: 'approximate', ...s.userLocation }
  return tool
}

/** The request offers a web search: the IR's (Responses, chat), or one of Anthropic's tools a messages request carries as they came. */
export function offersSearch(req: GenerationRequest): boolean {
  const carried = req.providerData?.anthropic?.tools
  return req.webSearch !== undefined || (Array.isArray(carried) && carried.some((t) => isObj(t) && typeof t.type === 'string' && t.type.startsWith('web_search_')))
}
