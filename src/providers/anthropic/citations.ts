// Claude's web search → the IR: its citations as web sources, its server tool's blocks as a
// search (OpenAI's web_search_call). A web search result's location is what OpenAI's
// `url_citation` shows; the other kinds (a span of a document, a page, a search result the
// client gave) point into what the client sent, and OpenAI's wires have no annotation for them.
import type { SearchStatus, WebSource } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'

export function webSource(c: unknown): WebSource | undefined {
  if (!isObj(c) || c.type !== 'web_search_result_location' || typeof c.url !== 'string') return undefined
  return typeof c.title === 'string' ? { url: c.url, title: c.title } : { url: c.url }
}

export function webSources(list: unknown): WebSource[] {
  if (!Array.isArray(list)) return []
  return list.map(webSource).filter((s): s is WebSource => s !== undefined)
}

/** A web search's query as its server_tool_use block's input holds it (an object, or its JSON text), or ''. */
export function searchQuery(input: unknown): string {
  let v = input
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v)
    } catch {
      return ''
    }
  }
  return isObj(v) && typeof v.query === 'string' ? v.query : ''
}

/** The sources a web_search_tool_result block's content found; an error in their place (`web_search_tool_result_error`) is a failed search. */
export function searchResults(content: unknown): { sources: WebSource[]; status: SearchStatus } {
  if (!Array.isArray(content)) return { sources: [], status: isObj(content) && content.type === 'web_search_tool_result_error' ? 'failed' : 'completed' }
  const sources: WebSource[] = []
  for (const r of content) {
    if (!isObj(r) || r.type !== 'web_search_result' || typeof r.url !== 'string') continue
    sources.push(typeof r.title === 'string' ? { url: r.url, title: r.title } : { url: r.url })
  }
  return { sources, status: 'completed' }
}

/**
 * A finished search's own blocks, kept for a later turn (`providerData.anthropic` of its IR
 * part): the server_tool_use's input and the result's content (the pages, encrypted), which
 * Claude is sent back so it still has what it found. None for a search without its result.
 */
export function keptSearch(input: unknown, content: unknown): { anthropic: { input: unknown; content: unknown } } | undefined {
  if (!Array.isArray(content) && !isObj(content)) return undefined
  let i = input
  if (typeof i === 'string') {
    try {
      i = JSON.parse(i)
    } catch {
      return undefined
    }
  }
  return isObj(i) ? { anthropic: { input: i, content } } : undefined
}

/** A server_tool_use block that is Claude's web search. */
export const isWebSearchUse = (b: { type?: unknown; name?: unknown }): boolean => b.type === 'server_tool_use' && b.name === 'web_search'
