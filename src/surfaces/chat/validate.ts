// Chat-style request body → checked body. Every problem is a 400 whose message names the
// field (`messages[2].content[0].type: …`), found before any upstream call.
import { own } from '../../lib/own.ts'
import { checkOwnedValues } from '../../routing/params.ts'
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { searchesEachReply } from '../../billing/server-tools.ts'
import { typeName } from '../../routing/router.ts'
import { PARAMS, PARAM_SCHEMAS, type ChatBody } from './params.ts'
import { checkValue, knownParams, quotedIds } from '../checks.ts'
import {
  AllowedToolsChoice,
  CustomTool,
  CustomToolCall,
  CustomToolChoice,
  firstError,
  FunctionCallObject,
  FunctionTool,
  FunctionToolCall,
  LegacyFunction,
  MESSAGE_BY_ROLE,
  PARTS_BY_ROLE,
  RESPONSE_FORMATS,
  ToolChoiceObject,
  toolName,
  type ChatFunction,
  type ChatMessage,
  type ChatResponseFormat,
  type ChatRole,
  type ChatTool,
  type ChatToolChoice,
} from './schema.ts'
import type { TSchema } from '@sinclair/typebox'
import { isObj, type Obj } from '../../lib/json.ts'
import { checkDataUrlIn } from '../../media/inline-data.ts'
import { checkCustomFormat } from '../custom-tools.ts'

type Body = Record<string, unknown>


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

/** A body validateChat passed: each parameter by its row's schema, and the parts it checks itself by their declared types. */
export type CheckedChatBody = ChatBody & {
  messages: ChatMessage[]
  response_format?: ChatResponseFormat
  tools?: ChatTool[]
  functions?: ChatFunction[]
  tool_choice?: ChatToolChoice
  function_call?: 'none' | 'auto' | { name: string }
}

/** Every value rule of the chat surface, for a body whose model is known; after it, the body is a CheckedChatBody. */
export function validateChat(body: Body, model: CatalogModel): asserts body is Body & CheckedChatBody {
  checkParams(body)
  checkOwnedValues(PARAMS, body, model)
  // A search model runs one search for the request and answers once: OpenAI refuses `n` for it
  // ("Model incompatible request argument supplied: n"), so several answers are never billed
  // (the record's one search a request, the hold's one a choice, agree)
  if (typeof body.n === 'number' && body.n > 1 && searchesEachReply(model) > 0) throw badRequest(`n: ${model.id} searches the web and gives one answer a request; n above 1 is not supported for it`)
  for (const k of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = body[k]
    if (typeof v === 'number' && v > model.contextWindow) {
      throw badRequest(`${k}: ${v} exceeds the context window of ${model.id} (${model.contextWindow} tokens)`)
    }
  }
  // normalizeBody made sure of it; said again for the type checker
  if (body.messages === undefined) throw badRequest('messages: required')
  validateMessages(body.messages)
  if (body.response_format !== undefined) validateResponseFormat(body.response_format)
  if (body.tools !== undefined) validateTools(body.tools)
  if (body.functions !== undefined) validateFunctions(body.functions)
  if (body.tool_choice !== undefined) validateToolChoice(body.tool_choice, body.tools ?? [])
  if (body.function_call !== undefined) validateFunctionCall(body.function_call, body.functions?.map((f) => f.name) ?? [])
  const thinking = body.thinking
  if (thinking?.type === 'enabled' && thinking.budget_tokens === undefined) throw badRequest('thinking.budget_tokens: required when thinking.type is "enabled"')
}

/** Each parameter against its row's schema. */
function checkParams(body: Body): asserts body is Body & ChatBody {
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) fail(firstError(schema, body[k], k))
  }
}

const isRole = (r: unknown): r is ChatRole => typeof r === 'string' && Object.hasOwn(MESSAGE_BY_ROLE, r)

function validateMessages(messages: unknown[]): asserts messages is ChatMessage[] {
  let hasUser = false
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    const role = m.role
    if (role === undefined) throw badRequest(`${at}.role: required`)
    if (!isRole(role)) throw badRequest(`${at}.role: expected one of "system", "developer", "user", "assistant", "tool", "function"`)
    // each tool call by its kind first, so that a 400 names the very field
    if (role === 'assistant' && Array.isArray(m.tool_calls)) {
      m.tool_calls.forEach((tc, j) => isObj(tc) && fail(firstError(tc.type === 'custom' ? CustomToolCall : FunctionToolCall, tc, `${at}.tool_calls[${j}]`)))
    }
    fail(firstError(MESSAGE_BY_ROLE[role], m, at))
    if (role === 'user') hasUser = true
    validateContent(m, role, at)
  })
  if (!hasUser) throw badRequest('messages: at least one message with role "user" is required')
  checkToolAnswers(messages as ChatMessage[])
}

/**
 * Each tool message answers a call of the assistant message before it (other tool messages
 * between), and each call is answered before the conversation goes on, as OpenAI requires.
 * Claude refuses the same turns too, but in its own terms (a translated turn's indices, not the
 * client's), and the mock would take them: this names the client's field for every model.
 */
function checkToolAnswers(messages: ChatMessage[]): void {
  let calls: ReadonlySet<string> = new Set()
  let unanswered = new Set<string>()
  let callsAt = -1
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      if (!calls.has(m.tool_call_id)) {
        throw badRequest(`messages[${i}].tool_call_id: ${quotedIds([m.tool_call_id])} answers no tool call of the assistant message before it`)
      }
      unanswered.delete(m.tool_call_id)
      return
    }
    if (unanswered.size > 0) {
      const ids = quotedIds(unanswered)
      throw badRequest(`messages[${callsAt}].tool_calls: ${ids} ${unanswered.size > 1 ? 'have' : 'has'} no tool message answering ${unanswered.size > 1 ? 'them' : 'it'} before messages[${i}]`)
    }
    const ids = m.role === 'assistant' ? (m.tool_calls ?? []).map((tc) => tc.id) : []
    calls = new Set(ids)
    unanswered = new Set(ids)
    callsAt = i
  })
}

function validateContent(m: Obj, role: ChatRole, at: string) {
  const c = m.content
  const optional = role === 'assistant' && (m.tool_calls !== undefined || m.function_call != null || m.refusal != null || m.audio != null)
  if (c === undefined || c === null) {
    if (optional || role === 'function') return
    throw badRequest(`${at}.content: required`)
  }
  if (typeof c === 'string') return
  if (role === 'function') throw badRequest(`${at}.content: expected a string`)
  if (!Array.isArray(c)) throw badRequest(`${at}.content: expected a string or an array of content parts, got ${typeName(c)}`)
  const allowed: Readonly<Record<string, TSchema>> = PARTS_BY_ROLE[role]
  c.forEach((p, j) => {
    const pat = `${at}.content[${j}]`
    if (!isObj(p)) throw badRequest(`${pat}: expected a content part object, got ${typeName(p)}`)
    const schema = own(allowed, p.type)
    if (!schema) {
      const kinds = Object.keys(allowed).map((k) => `"${k}"`).join(', ')
      throw badRequest(`${pat}.type: expected one of ${kinds} in a ${role} message${p.type === undefined ? '' : `, got ${JSON.stringify(p.type).slice(0, 40)}`}`)
    }
    fail(firstError(schema, p, pat))
    checkInlineMedia(p, pat)
  })
}

/**
 * A part's inline data (an image's or a file's `data:` URL) checked before any upstream call; an
 * image declared as another image format goes as the one its bytes are, as an uploaded file does.
 * (A document type a Claude model cannot take is the Anthropic adapter's to refuse, naming this field.)
 */
function checkInlineMedia(p: Obj, pat: string) {
  if (p.type === 'image_url' && isObj(p.image_url)) checkDataUrlIn(p.image_url, 'url', `${pat}.image_url.url`, 'image')
  if (p.type === 'file' && isObj(p.file)) checkDataUrlIn(p.file, 'file_data', `${pat}.file.file_data`, 'document')
}

function validateResponseFormat(rf: unknown): asserts rf is ChatResponseFormat {
  if (!isObj(rf)) throw badRequest(`response_format: expected an object, got ${typeName(rf)}`)
  const schema = own(RESPONSE_FORMATS, rf.type)
  if (!schema) throw badRequest('response_format.type: expected one of "text", "json_object", "json_schema"')
  checkValue(schema, rf, 'response_format')
}

/** Function and custom tools; a tool name twice is a 400. */
function validateTools(tools: unknown[]): asserts tools is ChatTool[] {
  const names = new Set<string>()
  tools.forEach((tool, i) => {
    if (!isObj(tool)) throw badRequest(`tools[${i}]: expected a tool object, got ${typeName(tool)}`)
    if (tool.type !== 'function' && tool.type !== 'custom') throw badRequest(`tools[${i}].type: expected "function" or "custom"`)
    checkValue(tool.type === 'custom' ? CustomTool : FunctionTool, tool, `tools[${i}]`)
    // a Claude model is offered the grammar in the tool's description (custom-tools.ts); one of the wrong shape was left out
    if (tool.type === 'custom') checkCustomFormat(tool.custom.format, `tools[${i}].custom.format`)
    const name = toolName(tool as ChatTool)
    if (names.has(name)) throw badRequest(`tools[${i}].${tool.type}.name: duplicate tool name "${name}"`)
    names.add(name)
  })
}

function validateFunctions(fns: unknown): asserts fns is ChatFunction[] {
  if (!Array.isArray(fns)) throw badRequest('functions: expected an array')
  fns.forEach((f, i) => fail(firstError(LegacyFunction, f, `functions[${i}]`)))
}

const MODES: ReadonlySet<unknown> = new Set(['none', 'auto', 'required'])

const CHOICES = 'expected "none", "auto", "required", { type: "function", function: { name } }, { type: "custom", custom: { name } } or { type: "allowed_tools", allowed_tools: { mode, tools } }'

function validateToolChoice(tc: unknown, tools: ChatTool[]): asserts tc is ChatToolChoice {
  if (typeof tc === 'string') {
    if (!MODES.has(tc)) throw badRequest(`tool_choice: ${CHOICES}`)
    if (tc === 'required' && tools.length === 0) throw badRequest('tool_choice: "required" needs at least one tool in tools')
    return
  }
  if (!isObj(tc)) throw badRequest(`tool_choice: ${CHOICES}`)
  // A named tool must exist, or the upstream answers with an opaque error.
  const among = (kind: 'function' | 'custom', name: string, at: string) => {
    if (!tools.some((t) => t.type === kind && toolName(t) === name)) throw badRequest(`${at}: "${name.slice(0, 64)}" is not among the tools`)
  }
  switch (tc.type) {
    case 'function':
      checkValue(ToolChoiceObject, tc, 'tool_choice')
      return among('function', tc.function.name, 'tool_choice.function.name')
    case 'custom':
      checkValue(CustomToolChoice, tc, 'tool_choice')
      return among('custom', tc.custom.name, 'tool_choice.custom.name')
    case 'allowed_tools':
      checkValue(AllowedToolsChoice, tc, 'tool_choice')
      tc.allowed_tools.tools.forEach((t, i) => among(t.type, toolName(t), `tool_choice.allowed_tools.tools[${i}].${t.type}.name`))
      return
    default:
      throw badRequest(`tool_choice: ${CHOICES}`)
  }
}

function validateFunctionCall(fc: unknown, names: string[]): asserts fc is 'none' | 'auto' | { name: string } {
  if (fc === 'none' || fc === 'auto') return
  if (typeof fc === 'string') throw badRequest('function_call: expected "none", "auto" or { name }')
  checkValue(FunctionCallObject, fc, 'function_call')
  const name = fc.name
  if (!names.includes(name)) throw badRequest(`function_call.name: "${name}" is not among the functions`)
}
