// The body an OpenAI Responses upstream gets: the official spelling of everything the
// client sent (aliases resolved: `messages` → `input`, `system` → `instructions`,
// `reasoning_effort`/`reasoning_summary` → `reasoning`, `response_format` → `text.format`,
// `mcp_servers` → MCP tools), the gateway's own state parameters taken out. When the
// gateway's thread is involved the whole input goes up with `store: false`, item ids
// stripped (an item_reference keeps its, which it is); otherwise the client's input goes as
// it came. Either way a Claude model's thinking, which the gateway sealed, stays behind.
import type { Item } from './items.ts'
import { withoutIds } from './items.ts'
import type { Turn } from './validate.ts'
import { sealedByGateway } from './reasoning.ts'
import { holdsSearch, shownItem } from './held-search.ts'
import { isObj } from '../../lib/json.ts'
import { copiedAsIs } from '../../routing/params.ts'
import { PARAMS } from './params.ts'

type Obj = Record<string, unknown>

/** Official Responses parameters copied as they are: the table's rows with no rule for GPT models, not reshaped. */
const COPIED = copiedAsIs(PARAMS)

function mcpTools(servers: Obj[]): Obj[] {
  return servers.map((s) => {
    const t: Obj = { type: 'mcp', server_label: s.name, server_url: s.url, require_approval: 'never' }
    if (typeof s.authorization_token === 'string') t.authorization = s.authorization_token
    const allowed = (s.tool_configuration as Obj | undefined)?.allowed_tools
    if (Array.isArray(allowed)) t.allowed_tools = allowed
    return t
  })
}

/**
 * Reasoning items the upstream never stored can only go back with their encrypted content
 * (and keep their id, which that content is bound to); an item_reference is its id (one the
 * gateway did not replace, of an item the key was given: validate.ts); every other item loses
 * its id, and a search the gateway kept for Claude its blocks (held-search.ts). A Claude model's
 * thinking, sealed by the gateway, stays behind: OpenAI refuses content it cannot decrypt, as
 * Anthropic would refuse OpenAI's.
 */
function forUpstream(items: Item[]): Item[] {
  const kept = items.filter((it) => it.type !== 'reasoning' || (typeof it.encrypted_content === 'string' && !sealedByGateway(it)))
  return kept.map((it) => (it.type === 'reasoning' || it.type === 'item_reference' ? it : withoutIds([shownItem(it)])[0]))
}

/** A stateless input as the client sent it, but for the reasoning the gateway sealed and the blocks it keeps on a search. */
function forOpenAI(input: unknown): unknown {
  if (!Array.isArray(input) || !input.some((it) => isObj(it) && (sealedByGateway(it) || holdsSearch(it)))) return input
  return input.flatMap((it) => (!isObj(it) ? [it] : sealedByGateway(it) ? [] : [shownItem(it)]))
}

export function upstreamBody(body: Obj, turn: Turn, compat: string[]): Obj {
  const out: Obj = {}
  for (const k of COPIED) if (body[k] !== undefined) out[k] = body[k]
  if (turn.stateful) {
    out.input = forUpstream([...turn.history, ...turn.items])
    out.store = false
  } else {
    // the client's input as it came, unless the gateway replaced references to its own items
    out.input = forOpenAI(body.input !== undefined && !turn.referenced ? body.input : turn.items)
    if (body.store !== undefined) out.store = body.store
  }
  if (turn.instructions) out.instructions = turn.instructions
  const tools: Obj[] = [...turn.tools]
  if (Array.isArray(body.mcp_servers)) tools.push(...mcpTools(body.mcp_servers as Obj[]))
  if (body.web_search_options !== undefined) tools.push({ type: 'web_search', ...(body.web_search_options as Obj) })
  if (tools.length > 0) out.tools = tools
  if (turn.toolChoice !== undefined) out.tool_choice = turn.toolChoice
  if (turn.effort !== undefined || turn.summary !== undefined || body.reasoning !== undefined) {
    out.reasoning = { ...(body.reasoning as Obj | undefined), effort: turn.effort, summary: turn.summary }
    for (const k of ['effort', 'summary', 'generate_summary'] as const) if ((out.reasoning as Obj)[k] === undefined) delete (out.reasoning as Obj)[k]
  }
  if (turn.format !== undefined || turn.verbosity !== undefined) {
    const text: Obj = {}
    if (turn.format) text.format = turn.format
    if (turn.verbosity) text.verbosity = turn.verbosity
    out.text = text
  }
  return out
}
