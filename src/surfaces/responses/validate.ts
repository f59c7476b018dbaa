// Responses-style request body → a checked turn: every problem a 400 naming the field,
// found before any upstream call. The result (`Turn`) is the one
// shape decode, pass-through and encoders read: the official Responses spelling of the
// request, whichever aliases the client used, plus the thread it continues.
import { checkOwnedValues, type CrossFamilyMode } from '../../routing/params.ts'
import { PARAMS, PARAM_SCHEMAS, type ResponsesBody } from './params.ts'
import { outputLimit, type CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { firstError, knownParams } from '../checks.ts'
import { inputItems, messagesItems, toolOutputItems, type Item } from './items.ts'
import type { ThreadStore } from './thread.ts'
import type { Turn } from './turn.ts'

export type { Turn }
import { isObj } from '../../lib/json.ts'

type Body = Record<string, unknown>
type Obj = Record<string, unknown>

const quote = (v: unknown) => JSON.stringify(v)?.slice(0, 40) ?? String(v)


const FUNCTION_NAME = /^[a-zA-Z0-9_.-]{1,128}$/

/** A tool in the official flat shape; function and custom tools checked. */
function tool(t: unknown, at: string): Obj {
  if (!isObj(t)) throw badRequest(`${at}: expected a tool object, got ${typeName(t)}`)
  if (typeof t.type !== 'string') throw badRequest(`${at}.type: required`)
  let out = t
  if (t.type === 'function' && isObj(t.function)) {
    const { function: f, ...rest } = t
    out = { ...rest, ...f, type: 'function' }
  }
  if (out.type === 'function' || out.type === 'custom') {
    if (typeof out.name !== 'string' || !FUNCTION_NAME.test(out.name)) throw badRequest(`${at}.name: expected a name of letters, digits, _ . or - (at most 128), got ${quote(out.name)}`)
    if (out.type === 'function' && out.parameters !== undefined && out.parameters !== null && !isObj(out.parameters)) throw badRequest(`${at}.parameters: expected a JSON Schema object`)
  }
  return out
}

function legacyFunctions(v: unknown): Obj[] {
  return (v as unknown[]).map((f, i) => {
    if (!isObj(f)) throw badRequest(`functions[${i}]: expected an object`)
    return tool({ type: 'function', ...f }, `functions[${i}]`)
  })
}

/** tool_choice in the Responses spelling; a named tool must be among the tools. */
function toolChoice(c: unknown, tools: Obj[], at: string): unknown {
  if (typeof c === 'string') {
    if (!['auto', 'none', 'required'].includes(c)) throw badRequest(`${at}: expected "auto", "none", "required" or an object, got ${quote(c)}`)
    return c
  }
  if (!isObj(c) || typeof c.type !== 'string') throw badRequest(`${at}: expected "auto", "none", "required" or { type: "function", name }`)
  if (c.type !== 'function' && c.type !== 'custom') return c
  const name = isObj(c.function) ? c.function.name : c.name
  if (typeof name !== 'string') throw badRequest(`${at}.name: required`)
  if (!tools.some((t) => t.type === c.type && t.name === name)) throw badRequest(`${at}: names ${c.type} tool "${name.slice(0, 64)}", which is not among the tools`)
  return { type: c.type, name }
}

function formatOf(body: Body): Obj | undefined {
  const text = body.text as Obj | undefined
  if (text?.format) return text.format as Obj
  const rf = body.response_format as Obj | undefined
  if (!rf) return undefined
  if (rf.type !== 'json_schema') return { type: rf.type }
  const js = rf.json_schema as Obj
  return { type: 'json_schema', name: js.name, schema: js.schema, strict: js.strict ?? undefined }
}

/** The body with only known parameters, each value checked by its row's rule: a ResponsesBody. */
export function normalizeResponsesBody(raw: unknown): Body & ResponsesBody {
  const body = knownParams(raw, PARAMS)
  // `input` as one object with content is one message (a user's unless it names a role): made
  // the list every path takes here, once, so the upstream, the thread and batches see one shape
  const input = body.input
  if (typeof input === 'object' && input !== null && !Array.isArray(input) && (input as Body).content !== undefined) body.input = [{ role: 'user', ...(input as Body) }]
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) {
      const e = firstError(schema, body[k], k)
      if (e) throw badRequest(e)
    }
  }
  return body
}

export interface ValidateContext {
  apiKeyId: string
  threads: ThreadStore
  mode: CrossFamilyMode
}

/** Every value rule of the responses surface for a normalized body whose model is known, and the thread it continues. */
export async function validateResponses(body: Body & ResponsesBody, model: CatalogModel, vc: ValidateContext): Promise<Turn> {
  if (body.input !== undefined && body.messages !== undefined) throw badRequest('input, messages: give one of them, not both')
  checkOwnedValues(PARAMS, body, model)
  const items = body.input !== undefined ? inputItems(body.input) : body.messages !== undefined ? messagesItems(body.messages) : []
  if (body.tool_outputs !== undefined) {
    if (body.previous_response_id === undefined && body.conversation === undefined) throw badRequest('tool_outputs: needs previous_response_id (the response that asked for them)')
    items.push(...toolOutputItems(body.tool_outputs))
  }
  if (items.length === 0 && body.previous_response_id === undefined) throw badRequest('input: required (a string, an array of items or content parts, or an object with content)')

  const r = body.reasoning as Obj | undefined
  const effort = (body.reasoning_effort ?? r?.effort ?? undefined) as string | undefined
  const rawSummary = (body.reasoning_summary ?? r?.summary ?? r?.generate_summary ?? undefined) as string | undefined
  const summary = rawSummary === 'none' ? undefined : (rawSummary as Turn['summary'])
  const where = body.reasoning_summary !== undefined ? 'reasoning_summary' : 'reasoning.summary'
  if (summary && model.family === 'anthropic' && vc.mode === 'reject') {
    throw badRequest(`${where}: "${summary}" needs a GPT-5-family model; Claude-family model ${model.id} has no reasoning summaries (use "none")`)
  }
  if (summary && model.family === 'openai' && !model.reasoningSummaries) throw badRequest(`${where}: model ${model.id} does not produce reasoning summaries (use "none")`)
  if (effort && effort !== 'none' && !model.reasoning) throw badRequest(`${body.reasoning_effort !== undefined ? 'reasoning_effort' : 'reasoning.effort'}: model ${model.id} does not support reasoning`)

  const max = body.max_output_tokens
  const cap = outputLimit(model)
  if (cap && max !== undefined && max > cap.limit) throw badRequest(`max_output_tokens: ${max} is greater than the ${cap.what} of ${model.id} (${cap.limit} tokens)`)

  const tools = [...((body.tools as unknown[] | undefined) ?? []).map((t, i) => tool(t, `tools[${i}]`)), ...(body.functions ? legacyFunctions(body.functions) : [])]
  const choice = body.tool_choice ?? (body.function_call === undefined ? undefined : typeof body.function_call === 'string' ? body.function_call : { type: 'function', name: (body.function_call as Obj).name })
  const where2 = body.tool_choice !== undefined ? 'tool_choice' : 'function_call'

  const conversation = typeof body.conversation === 'string' ? body.conversation : body.conversation?.id
  let previous = body.previous_response_id
  let field = 'previous_response_id'
  if (previous === undefined && conversation !== undefined) {
    previous = await vc.threads.latestOf(vc.apiKeyId, conversation)
    field = 'conversation'
  }
  const thread = previous !== undefined ? await vc.threads.history(vc.apiKeyId, previous, field) : undefined
  const history = thread?.items ?? []

  const instructions = [body.instructions, body.system].filter((s): s is string => typeof s === 'string' && s !== '').join('\n\n')
  const text = body.text as Obj | undefined
  return {
    items,
    history,
    instructions: instructions || undefined,
    tools,
    toolChoice: choice === undefined ? undefined : toolChoice(choice, tools, where2),
    effort,
    summary,
    format: formatOf(body),
    verbosity: (text?.verbosity ?? body.verbosity ?? undefined) as string | undefined,
    store: body.store !== false,
    previousResponseId: previous,
    previous: thread?.head ?? null,
    conversation,
    maxToolCalls: body.max_tool_calls,
    stateful: previous !== undefined || body.tool_outputs !== undefined || conversation !== undefined,
  }
}
