// Claude's citations → the IR's web sources. A web search result's location is what OpenAI's
// `url_citation` shows; the other kinds (a span of a document, a page, a search result the
// client gave) point into what the client sent, and OpenAI's wires have no annotation for them.
import type { WebSource } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'

export function webSource(c: unknown): WebSource | undefined {
  if (!isObj(c) || c.type !== 'web_search_result_location' || typeof c.url !== 'string') return undefined
  return typeof c.title === 'string' ? { url: c.url, title: c.title } : { url: c.url }
}

export function webSources(list: unknown): WebSource[] {
  if (!Array.isArray(list)) return []
  return list.map(webSource).filter((s): s is WebSource => s !== undefined)
}
