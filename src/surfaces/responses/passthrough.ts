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
import type { CatalogModel } from '../../config/catalog.ts'
import { reasoningModelOf } from './thread.ts'
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
 * Anthropic would refuse OpenAI's. So does a stored turn's reasoning when this turn goes to
 * another model, which may be served elsewhere (another organisation cannot decrypt it either).
 */
function forUpstream(items: Item[], modelId: string): Item[] {
  const kept = items.filter((it) => it.type !== 'reasoning' || (typeof it.encrypted_content === 'string' && !sealedByGateway(it) && (reasoningModelOf(it) ?? modelId) === modelId))
  return kept.map((it) => (it.type === 'reasoning' || it.type === 'item_reference' ? it : withoutIds([shownItem(it)])[0]))
}

/** A stateless input as the client sent it, but for the reasoning the gateway sealed and the blocks it keeps on a search. */
function forOpenAI(input: unknown): unknown {
  if (!Array.isArray(input) || !input.some((it) => isObj(it) && (sealedByGateway(it) || holdsSearch(it)))) return input
  return input.flatMap((it) => (!isObj(it) ? [it] : sealedByGateway(it) ? [] : [shownItem(it)]))
}

/** What a reasoning model's reply must carry for the gateway to send its reasoning back on a later turn. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content'

/**
 * `include` as it goes up. A reply the gateway keeps for a thread (`store` not false) of a model
 * that reasons asks for the reasoning's encrypted content too: a later turn goes up with
 * `store: false` and the thread's items, and a reasoning item without it cannot go back, so the
 * model would lose its reasoning between a call and its output, which OpenAI's own
 * `previous_response_id` keeps. The client then sees the content, as it sees a Claude model's.
 */
function includeFor(include: unknown, keepsReasoning: boolean): unknown {
  if (!keepsReasoning) return include
  const asked = include === undefined ? [] : Array.isArray(include) ? include : [include]
  return asked.includes(ENCRYPTED_REASONING) ? include : [...asked, ENCRYPTED_REASONING]
}

/**
 * Whether a reply of the model kept for a thread asks for its reasoning whole: the model reasons,
 * and every deployment of it is one provider's. OpenAI's encrypted reasoning is read only where it
 * was made (another organisation, an Azure deployment, refuses it as `invalid_encrypted_content`),
 * and the next turn may go to another deployment: a thread that broke at every turn is worse than
 * one without its reasoning.
 */
export const keepsReasoning = (model: Pick<CatalogModel, 'reasoning' | 'deployments'>): boolean =>
  model.reasoning && new Set(model.deployments.map((d) => d.provider)).size === 1

/** `modelId`: the catalog model it goes to; `reasons`: keepsReasoning of it. */
export function upstreamBody(body: Obj, turn: Turn, compat: string[], modelId: string, reasons = false): Obj {
  const out: Obj = {}
  for (const k of COPIED) if (body[k] !== undefined) out[k] = body[k]
  const include = includeFor(body.include, reasons && turn.store)
  if (include !== undefined) out.include = include
  if (turn.stateful) {
    out.input = forUpstream([...turn.history, ...turn.items], modelId)
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
