// Chat-style request body → checked body → IR. Every problem is a 400 whose message
// names the field (`messages[2].content[0].type: …`), found before any upstream call.
import { own } from '../../lib/own.ts'
import { checkOwnedValues, directToIR, type RulesOutcome } from '../../routing/params.ts'
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import type { GenerationRequest, MediaSource, Message, Part, ResponseFormat, Tool, ToolChoice } from '../../ir/types.ts'
import { typeName } from '../../routing/router.ts'
import type { Counterpart } from '../../routing/translate.ts'
import { PARAMS, PARAM_SCHEMAS, type ChatBody } from './params.ts'
import { knownParams } from '../checks.ts'
import {
  type ChatFunction,
  type ChatTool,
  type ChatToolChoice,
  firstError,
  FunctionCallObject,
  FunctionTool,
  LegacyFunction,
  MESSAGE_BY_ROLE,
  PARTS_BY_ROLE,
  RESPONSE_FORMATS,
  ToolChoiceObject,
} from './schema.ts'
import { isObj } from '../../lib/json.ts'

type Body = Record<string, unknown>
type Obj = Record<string, unknown>


/**
 * The body as an object with its null-valued parameters left out (the official API
 * treats `null` as "not given"), or a 400: not an object, or unknown parameters.
 */
export function normalizeBody(raw: unknown): Body {
  const body = knownParams(raw, PARAMS)
  if (body.messages === undefined) throw badRequest('messages: required')
  return body
}

function fail(message: string | null) {
  if (message) throw badRequest(message)
}

/** Every value rule of the chat surface, for a body whose model is known; after it, the body is a ChatBody. */
export function validateChat(body: Body, model: CatalogModel): asserts body is Body & ChatBody {
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) fail(firstError(schema, body[k], k))
  }
  checkOwnedValues(PARAMS, body, model)
  for (const k of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = body[k]
    if (typeof v === 'number' && v > model.contextWindow) {
      throw badRequest(`${k}: ${v} exceeds the context window of ${model.id} (${model.contextWindow} tokens)`)
    }
  }
  validateMessages(body.messages as unknown[])
  if (body.response_format !== undefined) validateResponseFormat(body.response_format)
  const toolNames = body.tools !== undefined ? validateTools(body.tools as unknown[]) : []
  const fnNames = body.functions !== undefined ? validateFunctions(body.functions) : []
  if (body.tool_choice !== undefined) validateToolChoice(body.tool_choice, toolNames)
  if (body.function_call !== undefined) validateFunctionCall(body.function_call, fnNames)
  const effort = body.thinking as Obj | undefined
  if (effort?.type === 'enabled' && effort.budget_tokens === undefined) throw badRequest('thinking.budget_tokens: required when thinking.type is "enabled"')
}

function validateMessages(messages: unknown[]) {
  let hasUser = false
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    const role = m.role
    if (role === undefined) throw badRequest(`${at}.role: required`)
    const fields = own(MESSAGE_BY_ROLE, role)
    if (!fields) throw badRequest(`${at}.role: expected one of "system", "developer", "user", "assistant", "tool", "function"`)
    fail(firstError(fields, m, at))
    if (role === 'user') hasUser = true
    validateContent(m, role as string, at)
  })
  if (!hasUser) throw badRequest('messages: at least one message with role "user" is required')
}

function validateContent(m: Obj, role: string, at: string) {
  const c = m.content
  const optional = role === 'assistant' && (m.tool_calls !== undefined || m.function_call != null || m.refusal != null)
  if (c === undefined || c === null) {
    if (optional || role === 'function') return
    throw badRequest(`${at}.content: required`)
  }
  if (typeof c === 'string') return
  if (role === 'function') throw badRequest(`${at}.content: expected a string`)
  if (!Array.isArray(c)) throw badRequest(`${at}.content: expected a string or an array of content parts, got ${typeName(c)}`)
  const allowed = PARTS_BY_ROLE[role]!
  c.forEach((p, j) => {
    const pat = `${at}.content[${j}]`
    if (!isObj(p)) throw badRequest(`${pat}: expected a content part object, got ${typeName(p)}`)
    const schema = own(allowed, p.type)
    if (!schema) {
      const kinds = Object.keys(allowed).map((k) => `"${k}"`).join(', ')
      throw badRequest(`${pat}.type: expected one of ${kinds} in a ${role} message${p.type === undefined ? '' : `, got ${JSON.stringify(p.type).slice(0, 40)}`}`)
    }
    fail(firstError(schema, p, pat))
  })
}

function validateResponseFormat(rf: unknown) {
  if (!isObj(rf)) throw badRequest(`response_format: expected an object, got ${typeName(rf)}`)
  const schema = own(RESPONSE_FORMATS, rf.type)
  if (!schema) throw badRequest('response_format.type: expected one of "text", "json_object", "json_schema"')
  fail(firstError(schema, rf, 'response_format'))
}

function validateTools(tools: unknown[]): string[] {
  const names: string[] = []
  tools.forEach((tool, i) => {
    if (!isObj(tool)) throw badRequest(`tools[${i}]: expected a tool object, got ${typeName(tool)}`)
    if (tool.type !== 'function') throw badRequest(`tools[${i}].type: expected "function" (the only tool type this gateway accepts)`)
    fail(firstError(FunctionTool, tool, `tools[${i}]`))
    const name = ((tool as Obj).function as Obj).name as string
    if (names.includes(name)) throw badRequest(`tools[${i}].function.name: duplicate tool name "${name}"`)
    names.push(name)
  })
  return names
}

function validateFunctions(fns: unknown): string[] {
  const list = fns as unknown[]
  if (!Array.isArray(list)) throw badRequest('functions: expected an array')
  list.forEach((f, i) => fail(firstError(LegacyFunction, f, `functions[${i}]`)))
  return list.map((f) => (f as Obj).name as string)
}

function validateToolChoice(tc: unknown, names: string[]) {
  if (typeof tc === 'string') {
    if (!['none', 'auto', 'required'].includes(tc)) throw badRequest('tool_choice: expected "none", "auto", "required" or { type: "function", function: { name } }')
    if (tc === 'required' && names.length === 0) throw badRequest('tool_choice: "required" needs at least one tool in tools')
    return
  }
  fail(firstError(ToolChoiceObject, tc, 'tool_choice'))
  const name = ((tc as Obj).function as Obj).name as string
  // A forced tool must exist, or the upstream answers with an opaque error.
  if (!names.includes(name)) throw badRequest(`tool_choice.function.name: "${name}" is not among the tools`)
}

function validateFunctionCall(fc: unknown, names: string[]) {
  if (fc === 'none' || fc === 'auto') return
  if (typeof fc === 'string') throw badRequest('function_call: expected "none", "auto" or { name }')
  fail(firstError(FunctionCallObject, fc, 'function_call'))
  const name = (fc as Obj).name as string
  if (!names.includes(name)) throw badRequest(`function_call.name: "${name}" is not among the functions`)
}

// ───────────────────────────── wire → IR ─────────────────────────────

const DATA_URL = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s

/** An image / file URL as an IR media source, or a 400 naming `at`. */
export function mediaSource(url: string, at: string): MediaSource {
  if (url.startsWith('https://')) return { kind: 'url', url }
  const m = DATA_URL.exec(url)
  if (!m) throw badRequest(`${at}: expected a base64 data URL (data:<media type>;base64,<data>) or an https:// URL`)
  return { kind: 'base64', mediaType: m[1]!, data: m[3]! }
}

function textParts(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  const out: Part[] = []
  for (const p of content as Obj[]) {
    if (p.type === 'text') out.push(withCache({ type: 'text', text: p.text as string }, p))
    else if (p.type === 'refusal') out.push({ type: 'text', text: p.refusal as string })
  }
  return out
}

function withCache<P extends Part>(part: P, wire: Obj): P {
  if (wire.cache_control !== undefined) (part as { cacheControl?: unknown }).cacheControl = wire.cache_control
  return part
}

function userParts(content: unknown, at: string, model: CatalogModel): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return (content as Obj[]).map((p, j): Part => {
    const pat = `${at}.content[${j}]`
    switch (p.type) {
      case 'image_url': {
        const img = p.image_url as Obj
        return withCache({ type: 'image', source: mediaSource(img.url as string, `${pat}.image_url.url`), detail: img.detail as 'auto' | 'low' | 'high' | undefined }, p)
      }
      case 'file': {
        const f = p.file as Obj
        const title = f.filename as string | undefined
        if (typeof f.file_data === 'string') return withCache({ type: 'document', source: mediaSource(f.file_data, `${pat}.file.file_data`), title }, p)
        if (typeof f.file_id === 'string') return withCache({ type: 'document', source: { kind: 'file', fileId: f.file_id }, title }, p)
        throw badRequest(`${pat}.file: one of file_data or file_id is required`)
      }
      case 'input_audio':
        throw badRequest(`${pat}: input_audio parts are not supported for model ${model.id}`)
      default:
        return withCache({ type: 'text', text: p.text as string }, p)
    }
  })
}

function toMessages(wire: Obj[], model: CatalogModel): { system: Part[]; messages: Message[] } {
  const system: Part[] = []
  const messages: Message[] = []
  // Legacy `function` results carry only a name: pair each with the latest call of that name.
  const fnCallIds = new Map<string, string>()
  wire.forEach((m, i) => {
    const at = `messages[${i}]`
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(m.content))
        return
      case 'user':
        messages.push({ role: 'user', content: userParts(m.content, at, model), name: m.name as string | undefined })
        return
      case 'assistant': {
        // `content: ""` beside tool calls is no text at all.
        const content = textParts(m.content ?? (m.refusal as string | undefined)).filter((p) => p.type !== 'text' || p.text !== '')
        for (const tc of (m.tool_calls as Obj[] | undefined) ?? []) {
          const fn = tc.function as Obj
          content.push({ type: 'tool-call', id: tc.id as string, name: fn.name as string, arguments: fn.arguments as string })
        }
        const fc = m.function_call as Obj | undefined
        if (fc) {
          const id = `call_fn_${i}`
          fnCallIds.set(fc.name as string, id)
          content.push({ type: 'tool-call', id, name: fc.name as string, arguments: fc.arguments as string })
        }
        messages.push({ role: 'assistant', content, name: m.name as string | undefined })
        return
      }
      case 'tool':
      case 'function': {
        const toolCallId = m.role === 'tool' ? (m.tool_call_id as string) : (fnCallIds.get(m.name as string) ?? `call_fn_${m.name}`)
        const text = typeof m.content === 'string' ? m.content : textParts(m.content).map((p) => (p as { text: string }).text).join('')
        const part: Part = { type: 'tool-result', toolCallId, content: text }
        const last = messages[messages.length - 1]
        // Consecutive results answer one assistant turn: keep them in one message.
        if (last?.role === 'tool') last.content.push(part)
        else messages.push({ role: 'tool', content: [part] })
        return
      }
    }
  })
  return { system, messages }
}

/** `tools` and `functions` as validateChat left them (each item checked by its schema). */
function toTools(body: ChatBody): Tool[] | undefined {
  const out: Tool[] = []
  for (const t of (body.tools ?? []) as ChatTool[]) {
    const f = t.function
    out.push({
      name: f.name,
      description: f.description,
      parameters: f.parameters ?? { type: 'object', properties: {} },
      strict: typeof f.strict === 'boolean' ? f.strict : undefined,
    })
  }
  for (const f of (body.functions ?? []) as ChatFunction[]) {
    out.push({ name: f.name, description: f.description, parameters: f.parameters ?? { type: 'object', properties: {} } })
  }
  return out.length > 0 ? out : undefined
}

function toToolChoice(body: ChatBody): ToolChoice | undefined {
  const tc = (body.tool_choice ?? body.function_call) as ChatToolChoice | { name: string } | undefined
  if (tc === undefined) return undefined
  if (tc === 'none' || tc === 'auto' || tc === 'required') return { type: tc }
  return { type: 'tool', name: 'function' in tc ? tc.function.name : tc.name }
}

function toResponseFormat(rf: unknown): ResponseFormat | undefined {
  if (!isObj(rf)) return undefined
  if (rf.type !== 'json_schema') return { type: rf.type as 'text' | 'json_object' }
  const js = rf.json_schema as Obj
  return {
    type: 'json_schema',
    name: js.name as string,
    schema: js.schema as Obj | undefined,
    strict: typeof js.strict === 'boolean' ? js.strict : undefined,
    description: js.description as string | undefined,
  }
}

/** OpenAI-only parameters with no IR field: carried to an OpenAI-family upstream as they are. */
const OPENAI_CARRIED = [
  'n', 'seed', 'logit_bias', 'store', 'frequency_penalty', 'presence_penalty', 'service_tier', 'logprobs',
  'top_logprobs', 'audio', 'modalities', 'prediction', 'verbosity', 'web_search_options', 'safety_identifier',
  'prompt_cache_retention',
]
/** Anthropic parameters with no IR field, carried to an Anthropic upstream as they are. */
const ANTHROPIC_CARRIED = ['cache_control', 'output_config', 'context_management', 'container', 'mcp_servers', 'inference_geo']

/**
 * A checked body → IR. Parameters the family rules removed are gone; their
 * counterparts (translate mode) are merged in. `prompt_cache_key` is never forwarded:
 * prompt-cache scoping is internal to the gateway, and a client's key would
 * let it share or probe cache entries across tenants upstream.
 */
export function toIR(checked: ChatBody, model: CatalogModel, rules: RulesOutcome): GenerationRequest {
  const body: ChatBody & Body = { ...checked }
  for (const k of rules.removed) delete body[k]
  const c: Counterpart = rules.counterpart
  const { system, messages } = toMessages(body.messages as Obj[], model)

  const stop = [...toStops(body.stop), ...(body.stop_sequences ?? []), ...(c.stop ?? [])]
  const tools = toTools(body) ?? c.tools
  let toolChoice = toToolChoice(body) ?? c.toolChoice
  const disableParallel = body.parallel_tool_calls === false || c.disableParallel === true
  if (disableParallel && tools && toolChoice?.type !== 'none') toolChoice = { ...(toolChoice ?? { type: 'auto' }), disableParallel: true } as ToolChoice

  const req: GenerationRequest = {
    model: body.model ?? model.id,
    messages,
    stream: body.stream === true,
  }
  if (system.length > 0) req.system = system
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? c.maxTokens
  if (maxTokens !== undefined) req.maxTokens = maxTokens
  directToIR(body, PARAMS, req)
  if (stop.length > 0) req.stop = stop
  if (tools) req.tools = tools
  if (toolChoice) req.toolChoice = toolChoice
  if (body.parallel_tool_calls !== undefined) req.parallelToolCalls = body.parallel_tool_calls
  else if (c.disableParallel) req.parallelToolCalls = false
  const reasoning = { ...c.reasoning }
  if (body.reasoning_effort !== undefined) reasoning.effort = body.reasoning_effort as NonNullable<typeof reasoning.effort>
  const thinking = body.thinking
  if (thinking?.type === 'enabled') reasoning.budgetTokens = thinking.budget_tokens
  if (Object.keys(reasoning).length > 0) req.reasoning = reasoning
  const rf = toResponseFormat(body.response_format) ?? c.responseFormat
  if (rf) req.responseFormat = rf
  if (req.stream) req.includeUsage = body.stream_options?.include_usage === true
  const user = body.user ?? c.user
  if (user !== undefined) req.user = user
  if (body.metadata !== undefined) req.metadata = body.metadata

  const carried = model.family === 'openai' ? OPENAI_CARRIED : ANTHROPIC_CARRIED
  const extra: Obj = {}
  for (const k of carried) if (body[k] !== undefined) extra[k] = body[k]
  if (thinking && thinking.type !== 'enabled' && model.family === 'anthropic') extra.thinking = thinking
  if (Object.keys(extra).length > 0) req.providerData = { [model.family]: extra }
  return req
}

function toStops(stop: string | string[] | undefined): string[] {
  if (stop === undefined) return []
  return typeof stop === 'string' ? [stop] : stop
}
