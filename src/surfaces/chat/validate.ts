// Chat-style request body → checked body. Every problem is a 400 whose message names the
// field (`messages[2].content[0].type: …`), found before any upstream call.
import { own } from '../../lib/own.ts'
import { checkOwnedValues } from '../../routing/params.ts'
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { PARAMS, PARAM_SCHEMAS, type ChatBody } from './params.ts'
import { knownParams } from '../checks.ts'
import {
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
