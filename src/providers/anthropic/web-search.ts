// The IR's web search as Anthropic's web search server tool (the searches run at Anthropic).
import type { WebSearch } from '../../ir/types.ts'

export function webSearchTool(s: WebSearch): Record<string, unknown> {
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' }
  if (s.maxUses !== undefined) tool.max_uses = s.maxUses
  if (s.allowedDomains) tool.allowed_domains = s.allowedDomains
  if (s.userLocation) tool.user_location = { type: 'approximate', ...s.userLocation }
  return tool
}
