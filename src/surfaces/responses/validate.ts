// Responses-style request body → a checked turn: every problem a 400 naming the field,
// found before any upstream call. The result (`Turn`) is the one
// shape decode, pass-through and encoders read: the official Responses spelling of the
// request, whichever aliases the client used, plus the thread it continues.
import { checkOwnedValues, type CrossFamilyMode } from '../../routing/params.ts'
import { PARAMS, PARAM_SCHEMAS, type ResponsesBody } from './params.ts'
import { outputLimit, type CatalogModel } from '../../config/catalog.ts'
import { badRequest, HttpError } from '../../http/errors.ts'
import { firstError, knownParams } from '../checks.ts'
import { checkCallAnswers } from './call-answers.ts'
import { inputItems, messagesItems, toolOutputItems, withoutIds, type Item } from './items.ts'
import { legacyFunctions, tool, toolChoice } from './tools.ts'
import type { References, ThreadStore } from './thread.ts'
import type { Turn } from './turn.ts'
import { responseOfItem, unknownGatewayItem } from './item-ids.ts'
import type { ResponsesFormat } from './schema.ts'

export type { Turn }
import { isObj } from '../../lib/json.ts'
import { codeInterpreterContainer, type NamedContainer } from '../../containers/check.ts'
import type { ConversationStore } from './conversations/store.ts'
import { isConversationId } from './conversations/shapes.ts'
import { conversationHistory } from './conversations/turn.ts'

type Body = Record<string, unknown>

function formatOf(body: ResponsesBody): ResponsesFormat | undefined {
  const format = body.text?.format
  if (format) return format
  const rf = body.response_format
  if (!rf) return undefined
  if (rf.type !== 'json_schema') return { type: rf.type }
  const js = rf.json_schema
  return { type: 'json_schema', name: js.name, schema: js.schema, strict: js.strict ?? undefined }
}

/** The body with only known parameters, each value checked by its row's rule: a ResponsesBody. */
export function normalizeResponsesBody(raw: unknown): Body & ResponsesBody {
  const body = knownParams(raw, PARAMS)
  // `input` as one object with content is one message (a user's unless it names a role): made
  // the list every path takes here, once, so the upstream, the thread and batches see one shape
  const input = body.input
  if (isObj(input) && input.content !== undefined) body.input = [{ role: 'user', ...input }]
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) {
      const e = firstError(schema, body[k], k)
      if (e) throw badRequest(e)
    }
  }
  return body
}

/** Referenced items at most a request resolves. */
const MAX_REFERENCES = 1_000

/**
 * Item types an OpenAI upstream fills in from its store when one comes by its id without the
 * field that holds it: a reasoning item without its encrypted content, an image generation
 * call without its image (multi-turn image editing names the image so).
 */
const HELD_BY: Partial<Record<string, string>> = { reasoning: 'encrypted_content', image_generation_call: 'result' }

/**
 * `item_reference`s to items of the gateway's own replies, replaced by the stored items: a model
 * served through the IR reads nothing else, and OpenAI's store does not know them. Any other is
 * left as it came: for OpenAI's own Responses API (its store's items); on the IR path one in the
 * gateway's form is refused (decode.ts), another left out and named. Returns the places of those
 * left, and of items given by their id alone (HELD_BY), which OpenAI's store fills in.
 */
async function referencedItems(items: Item[], vc: Owner, field = 'input', kept = false): Promise<{ found: boolean; byId: number[] }> {
  let n = 0
  let found = false
  const byId: number[] = []
  const refs: References = { seen: new Map(), bytes: 0, missed: false }
  for (const [i, it] of items.entries()) {
    // (an id of the gateway's own form is in no store of OpenAI's: nothing to read)
    const held = HELD_BY[it.type]
    if (held !== undefined && typeof it.id === 'string' && typeof it[held] !== 'string' && responseOfItem(it.id) === undefined) byId.push(i)
    if (it.type !== 'item_reference' || typeof it.id !== 'string') continue
    if (++n > MAX_REFERENCES) throw badRequest(`${field}[${i}]: more than ${MAX_REFERENCES} item references in one request`)
    const item = await vc.threads.referenced(vc.apiKeyId, it.id, refs)
    if (item) {
      // its id is the gateway's, which an OpenAI upstream would look up in its own store
      items[i] = withoutIds([item])[0]!
      found = true
      continue
    }
    const upstream = kept && responseOfItem(it.id) === undefined ? await vc.threads.upstreamItem(vc.apiKeyId, it.id, refs) : undefined
    if (upstream && whole(upstream)) {
      items[i] = upstream
      found = true
      continue
    }
    byId.push(i)
  }
  return { found, byId }
}

/** Whether an item holds what an upstream's store would fill in for it (HELD_BY). */
const whole = (it: Item) => {
  const held = HELD_BY[it.type]
  return held === undefined || typeof it[held] === 'string'
}

/** An id to ask after: where the request names it (an item OpenAI's store holds under it). */
interface Asked {
  at: string
  id: string
  /** An item_reference (one in the gateway's own form is refused as decode.ts says it). */
  reference?: boolean
}

/**
 * An OpenAI upstream reads an item named by id alone from its store, which holds the items of
 * every key of the operator's account: such an id must be of an item the gateway gave this key
 * (an output item of a response it stored for it), or the request is refused as OpenAI refuses an
 * id it does not know. `places` are those referencedItems returned; `stateful` turns send no
 * item by its id alone but a reference (passthrough.ts). An `mcp_approval_response` names the
 * approval request it answers: one the request's items or its thread hold is there to read;
 * another, by its id. (A code interpreter's container is the grants' to check: containersNamed.)
 */
async function checkOwnership(items: Item[], history: Item[], places: number[], stateful: boolean, vc: Owner, field = 'input'): Promise<void> {
  const asked: Asked[] = places
    .filter((i) => items[i]!.type === 'item_reference' || !stateful)
    .map((i) => ({ at: `${field}[${i}]`, id: items[i]!.id as string, reference: items[i]!.type === 'item_reference' }))
  let requests: Set<unknown> | undefined
  for (const [i, it] of items.entries()) {
    if (it.type !== 'mcp_approval_response' || typeof it.approval_request_id !== 'string') continue
    requests ??= new Set([...history, ...items].filter((x) => x.type === 'mcp_approval_request').map((x) => x.id))
    if (!requests.has(it.approval_request_id)) asked.push({ at: `${field}[${i}]`, id: it.approval_request_id })
  }
  if (asked.length === 0) return
  const owned = await vc.threads.owned(vc.apiKeyId, asked.map((a) => a.id))
  const bad = asked.find((a) => !owned.has(a.id))
  if (bad === undefined) return
  const id = bad.id.slice(0, 80)
  // one in the gateway's own form: as the IR path says it (decode.ts)
  if (bad.reference && responseOfItem(bad.id) !== undefined) throw unknownGatewayItem(bad.at, id)
  throw new HttpError(404, `${bad.at}: Item with id '${id}' not found: not an item this gateway gave this key (another key's, one of a reply stored with store: false, deleted or expired); send the item itself`)
}

/**
 * Items added to a conversation outside a turn (the Conversations API's create and items
 * routes), checked as a turn's input is: each of its turns sends them upstream as its history,
 * where an item_reference is read from OpenAI's store, which holds every key's items. A
 * reference to an item of the gateway's own replies is replaced by that item (in place); any
 * other must name an item this key was given, or it is refused as a turn's input would be.
 */
export async function checkAddedItems(items: Item[], vc: Owner): Promise<void> {
  const { byId } = await referencedItems(items, vc, 'items', true)
  await checkOwnership(items, [], byId, true, vc, 'items')
}

/**
 * The code interpreter containers a request names by id, in its tools and in its items'
 * `additional_tools`: each holds the files of the key whose call made it, so the pipeline lets
 * one go only to the key a reply gave it (containers/check.ts), stored or not.
 */
function containersNamed(items: Item[], tools: unknown[]): NamedContainer[] {
  const named = tools.flatMap((t, j) => codeInterpreterContainer(t, `tools[${j}]`))
  for (const [i, it] of items.entries()) if (it.type === 'additional_tools') it.tools.forEach((t, j) => named.push(...codeInterpreterContainer(t, `input[${i}].tools[${j}]`)))
  return named
}

/** Whose items a request may name, and where they are kept. */
type Owner = Pick<ValidateContext, 'apiKeyId' | 'threads'>

export interface ValidateContext {
  apiKeyId: string
  threads: ThreadStore
  /** The Conversations API's store: a `conv_…` conversation is read from it (none: every name is a thread's). */
  conversations?: ConversationStore
  mode: CrossFamilyMode
}

/** Every value rule of the responses surface for a normalized body whose model is known, and the thread it continues. */
export async function validateResponses(body: Body & ResponsesBody, model: CatalogModel, vc: ValidateContext): Promise<Turn> {
  if (body.input !== undefined && body.messages !== undefined) throw badRequest('input, messages: give one of them, not both')
  checkOwnedValues(PARAMS, body, model)
  // where each item's call id is in the client's body (the chat-style `messages` spell them their own way)
  const idPlaces: string[] = []
  const items = body.input !== undefined ? inputItems(body.input) : body.messages !== undefined ? messagesItems(body.messages, idPlaces) : []
  const given = items.length
  if (body.tool_outputs !== undefined) {
    if (body.previous_response_id === undefined && body.conversation === undefined) throw badRequest('tool_outputs: needs previous_response_id (the response that asked for them)')
    items.push(...toolOutputItems(body.tool_outputs))
  }
  const conversation = typeof body.conversation === 'string' ? body.conversation : body.conversation?.id
  // one made through the Conversations API holds its items itself; another name is a thread's
  const made = conversation !== undefined && vc.conversations !== undefined && isConversationId(conversation) ? conversation : undefined
  // a stored turn's input joins its conversation, kept until deleted: the items it references go in whole
  const { found: referenced, byId } = await referencedItems(items, vc, 'input', made !== undefined && body.store !== false)
  if (items.length === 0 && body.previous_response_id === undefined) throw badRequest('input: required (a string, an array of items or content parts, or an object with content)')

  const r = body.reasoning
  const effort = body.reasoning_effort ?? r?.effort ?? undefined
  const rawSummary = body.reasoning_summary ?? r?.summary ?? r?.generate_summary ?? undefined
  const summary = rawSummary === 'none' ? undefined : rawSummary
  const where = body.reasoning_summary !== undefined ? 'reasoning_summary' : 'reasoning.summary'
  if (summary && model.family === 'anthropic' && vc.mode === 'reject') {
    throw badRequest(`${where}: "${summary}" needs a GPT-5-family model; Claude-family model ${model.id} has no reasoning summaries (use "none")`)
  }
  if (summary && model.family === 'openai' && !model.reasoningSummaries) throw badRequest(`${where}: model ${model.id} does not produce reasoning summaries (use "none")`)
  if (effort && effort !== 'none' && !model.reasoning) throw badRequest(`${body.reasoning_effort !== undefined ? 'reasoning_effort' : 'reasoning.effort'}: model ${model.id} does not support reasoning`)

  const max = body.max_output_tokens
  const cap = outputLimit(model)
  if (cap && max !== undefined && max > cap.limit) throw badRequest(`max_output_tokens: ${max} is greater than the ${cap.what} of ${model.id} (${cap.limit} tokens)`)

  const tools = [...(body.tools ?? []).map((t, i) => tool(t, `tools[${i}]`)), ...(body.functions ? legacyFunctions(body.functions) : [])]
  const choice = body.tool_choice ?? (body.function_call === undefined ? undefined : typeof body.function_call === 'string' ? body.function_call : { type: 'function', name: body.function_call.name })
  const where2 = body.tool_choice !== undefined ? 'tool_choice' : 'function_call'

  // as OpenAI's: a conversation continues from its own latest response, not another one named
  if (conversation !== undefined && body.previous_response_id !== undefined) throw badRequest('previous_response_id, conversation: give one of them; a conversation continues from its own latest response')
  let previous = body.previous_response_id
  let field = 'previous_response_id'
  if (previous === undefined && conversation !== undefined && made === undefined) {
    previous = await vc.threads.latestOf(vc.apiKeyId, conversation)
    field = 'conversation'
  }
  const thread = previous !== undefined ? await vc.threads.history(vc.apiKeyId, previous, field) : undefined
  const history = made !== undefined ? await conversationHistory(vc.conversations!, vc.apiKeyId, made, vc.threads.maxThreadBytes) : (thread?.items ?? [])
  const stateful = previous !== undefined || body.tool_outputs !== undefined || conversation !== undefined
  const idOf = (i: number) =>
    i >= given ? `tool_outputs[${i - given}].tool_call_id` : (idPlaces[i] ?? (Array.isArray(body.input) && body.input.length === given ? `input[${i}].call_id` : 'input'))
  checkCallAnswers(history, items, idOf, made !== undefined ? 'conversation' : field)
  // a Claude model's request reads no OpenAI store (the IR leaves such references out)
  if (model.family === 'openai') await checkOwnership(items, history, byId, stateful, vc)

  const instructions = [body.instructions, body.system].filter((s): s is string => typeof s === 'string' && s !== '').join('\n\n')
  return {
    items,
    history,
    instructions: instructions || undefined,
    tools,
    toolChoice: choice === undefined ? undefined : toolChoice(choice, tools, where2),
    effort,
    summary,
    format: formatOf(body),
    verbosity: body.text?.verbosity ?? body.verbosity ?? undefined,
    store: body.store !== false,
    previousResponseId: previous,
    previous: thread?.head ?? null,
    conversation,
    conversationId: made,
    maxToolCalls: body.max_tool_calls,
    stateful,
    referenced,
    containers: containersNamed(items, tools),
  }
}
