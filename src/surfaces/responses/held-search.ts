// A Claude model's web search, kept in the thread. OpenAI's web_search_call item has no field for
// what a search found, but Claude is to be sent its search back in later turns (its input and its
// result, the pages encrypted), as Anthropic's own clients do, or it loses what it read. So the
// gateway keeps those blocks on the item where it stores the thread (a stored response, a
// conversation), under a field of its own, and never shows the field: the client's copy of the
// item is OpenAI's shape, every stored item read back for a client or sent to OpenAI loses it,
// and the IR path reads it back into the search (decode.ts), whose blocks only Claude is sent.
// A client that keeps the conversation itself (store: false) has no such field; where it carries
// reasoning's sealed content back (Codex), the blocks ride to it in a reasoning item of the
// gateway's instead (reasoning.ts), as Claude's thinking does.
import type { Part } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'
import type { Item } from './items.ts'
import { keptBlocks, keptSearchOf, type KeptSearch } from '../../ir/kept-search.ts'

type Search = Extract<Part, { type: 'web-search' }>

const FIELD = 'switchyard_search'

/** The blocks of the searches the encoder made items of, by item, until they are stored. */
const held = new WeakMap<object, KeptSearch>()

/** The search's blocks go with its item when the item is stored. */
export function holdSearch(item: Item, p: Search): void {
  const kept = keptBlocks(p)
  if (kept) held.set(item, kept)
}

/** Items as the thread stores them: each search's blocks on its item. */
export function withHeld(items: Item[]): Item[] {
  return items.some((it) => held.has(it)) ? items.map((it) => (held.has(it) ? { ...it, [FIELD]: held.get(it) } : it)) : items
}

/** A stored item holding a search's blocks under the gateway's field. */
export const holdsSearch = (it: object): boolean => FIELD in it

/** An item as a client or OpenAI is given it: without the gateway's field. */
export function shownItem<T extends object>(it: T): T {
  if (!holdsSearch(it)) return it
  const { [FIELD]: _, ...rest } = it as Record<string, unknown>
  return rest as T
}

/** Items as a client or OpenAI is given them (the same list where none holds the field). */
export function shownItems<T>(items: T[]): T[] {
  return items.some((it) => isObj(it) && holdsSearch(it)) ? items.map((it) => (isObj(it) ? shownItem(it) : it)) : items
}

/** A stored web_search_call item's search as the IR has it, its blocks with it; undefined for any other item, or one without them. */
export function searchOf(it: Record<string, unknown>): Search | undefined {
  if (it.type !== 'web_search_call') return undefined
  const query = isObj(it.action) && typeof it.action.query === 'string' ? it.action.query : ''
  return searchFrom(it[FIELD], query, it.status === 'failed')
}

/** A search as the IR has it from blocks the gateway kept (`h`, as keptBlocks made them); undefined where `h` is not in their shape. */
export function searchFrom(h: unknown, query: string, failed: boolean): Search | undefined {
  const kept = isObj(h) ? keptSearchOf(h.id, h.input, h.content) : undefined
  if (!kept) return undefined
  return { type: 'web-search', id: kept.id, query, sources: [], status: failed ? 'failed' : 'completed', providerData: { anthropic: { input: kept.input, content: kept.content } } }
}
