// A Claude web search's own blocks, as the IR keeps them on its part (`providerData.anthropic`):
// the server_tool_use's input and the result's content (the pages, encrypted). Claude is sent
// them back in a later turn so it still has what it found (the Anthropic request), a messages
// client is shown them, and a Responses thread or client keeps them for the next turn. One
// reading of them for all, and one form of the two blocks.
import { isObj } from '../lib/json.ts'
import type { Part } from './types.ts'

type Search = Extract<Part, { type: 'web-search' }>

/** A search's two blocks as kept: the server_tool_use's id and input, and its result's content. */
export interface KeptSearch {
  id: string
  input: Record<string, unknown>
  /** The list of results, or Anthropic's error object. */
  content: unknown[] | Record<string, unknown>
}

/**
 * The id the built-in mock gives a search of its Claude models. Its pages are the mock's own, which
 * a real Claude would refuse as not its own: a thread the mock began that goes on with a real
 * Claude model (an Anthropic key configured later) leaves its searches behind.
 */
export const MOCK_SEARCH_ID = 'srvtoolu_mock_'

/** The blocks in their shape, else undefined (a search whose result never came, another model's, a client's forgery of another shape). */
export function keptSearchOf(id: unknown, input: unknown, content: unknown): KeptSearch | undefined {
  if (typeof id !== 'string' || id === '' || !isObj(input) || !(Array.isArray(content) || isObj(content))) return undefined
  return { id, input, content }
}

/** A search part's kept blocks: those of a finished search of Claude's. */
export const keptBlocks = (p: Search): KeptSearch | undefined => keptSearchOf(p.id, p.providerData?.anthropic?.input, p.providerData?.anthropic?.content)

/** The two blocks as Anthropic's wire says them. */
export const anthropicSearchBlocks = (k: KeptSearch): Record<string, unknown>[] => [
  { type: 'server_tool_use', id: k.id, name: 'web_search', input: k.input },
  { type: 'web_search_tool_result', tool_use_id: k.id, content: k.content },
]
