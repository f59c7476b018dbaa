// Messages-style request body → checked body. Every problem is a 400 whose message names
// the field (`messages[2].content[0].type: …`), found before any upstream call.
// The model's family rules are applied apart, from the parameter table (params.ts).
import { checkOwnedValues } from '../../routing/params.ts'
import { PARAMS, PARAM_SCHEMAS, type MessagesBody } from './params.ts'
import type { TSchema } from '@sinclair/typebox'
import { outputLimit, type CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { knownParams } from '../checks.ts'
import {
  BLOCKS_BY_ROLE,
  CustomTool,
  firstError,
  MESSAGE_FIELDS,
  ServerTool,
  ServerToolResultBlock,
  SOURCES,
  TextBlock,
  THINKING,
  TOOL_CHOICES,
  TOOL_RESULT_BLOCKS,
  isServerTool,
} from './schema.ts'
import { isObj } from '../../lib/json.ts'

type Body = Record<string, unknown>
type Obj = Record<string, unknown>

const quote = (v: unknown) => JSON.stringify(v)?.slice(0, 40) ?? String(v)

function fail(message: string | null) {
  if (message) throw badRequest(message)
}

/**
 * The body as an object with its null-valued parameters left out (the official API treats
 * `null` as "not given"), or a 400: not an object, unknown parameters, or a missing
 * `messages` / `max_tokens`.
 */
export function normalizeMessagesBody(raw: unknown): Body {
  const body = knownParams(raw, PARAMS)
  if (body.messages === undefined) throw badRequest('messages: required')
  if (body.max_tokens === undefined) throw badRequest('max_tokens: required')
  return body
}

/**
 * Every value rule of the messages surface for a normalized body whose model is known. `headerBetas` are
 * the `anthropic-beta` / `beta-beta` header tokens, which change what thinking allows.
 */
export function validateMessages(body: Body, model: CatalogModel, headerBetas: readonly string[] = []): asserts body is Body & MessagesBody {
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) fail(firstError(schema, body[k], k))
  }
  checkOwnedValues(PARAMS, body, model)
  const max = body.max_tokens as number
  const cap = outputLimit(model)
  if (cap && max > cap.limit) throw badRequest(`max_tokens: ${max} is greater than the ${cap.what} of ${model.id} (${cap.limit} tokens)`)
  if (body.system !== undefined && typeof body.system !== 'string') validateTextBlocks(body.system as unknown[], 'system')
  validateConversation(body.messages as unknown[])
  const names = body.tools !== undefined ? validateTools(body.tools as unknown[]) : []
  if (body.tool_choice !== undefined) validateToolChoice(body.tool_choice, names)
  if (body.thinking !== undefined) validateThinking(body.thinking as Obj, max, [...headerBetas, ...((body.betas as string[] | undefined) ?? [])])
}

function validateTextBlocks(blocks: unknown[], at: string) {
  blocks.forEach((b, i) => {
    if (!isObj(b)) throw badRequest(`${at}[${i}]: expected a text block object, got ${typeName(b)}`)
    if (b.type !== 'text') throw badRequest(`${at}[${i}].type: expected "text"${b.type === undefined ? '' : `, got ${quote(b.type)}`}`)
    fail(firstError(TextBlock, b, `${at}[${i}]`))
  })
}

const ROLES = Object.keys(BLOCKS_BY_ROLE)

function validateConversation(messages: unknown[]) {
  let texts = 0
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    if (m.role === undefined) throw badRequest(`${at}.role: required`)
    if (typeof m.role !== 'string' || !ROLES.includes(m.role)) {
      throw badRequest(`${at}.role: expected one of ${ROLES.map((r) => `"${r}"`).join(', ')}, got ${quote(m.role)}`)
    }
    fail(firstError(MESSAGE_FIELDS, m, at))
    texts += validateContent(m.content, m.role, at)
  })
  if (texts === 0) throw badRequest('messages: at least one text segment is required')
}

/** Checks one message's content; returns how many non-empty text segments it holds. */
function validateContent(c: unknown, role: string, at: string): number {
  if (c === undefined || c === null) throw badRequest(`${at}.content: required`)
  if (typeof c === 'string') return c === '' ? 0 : 1
  if (!Array.isArray(c)) throw badRequest(`${at}.content: expected a string or an array of content blocks, got ${typeName(c)}`)
  let texts = 0
  c.forEach((b, j) => {
    const bat = `${at}.content[${j}]`
    validateBlock(b, BLOCKS_BY_ROLE[role]!, role === 'assistant', `${role === 'assistant' ? 'an' : 'a'} ${role} message`, bat)
    const block = b as Obj
    if (block.type === 'text' && block.text !== '') texts++
    if (block.type === 'tool_result') texts += validateToolResult(block, bat)
  })
  return texts
}

/** One block against the schemas allowed where it stands; media sources by their type. */
function validateBlock(b: unknown, allowed: Record<string, TSchema>, serverResults: boolean, where: string, at: string) {
  if (!isObj(b)) throw badRequest(`${at}: expected a content block object, got ${typeName(b)}`)
  const type = b.type
  if (type === undefined) throw badRequest(`${at}.type: required`)
  const own = typeof type === 'string' && Object.hasOwn(allowed, type)
  if (!own && !(serverResults && typeof type === 'string' && /_tool_result$/.test(type))) {
    const kinds = Object.keys(allowed).map((k) => `"${k}"`).join(', ')
    throw badRequest(`${at}.type: expected one of ${kinds} in ${where}, got ${quote(type)}`)
  }
  fail(firstError(own ? allowed[type as string]! : ServerToolResultBlock, b, at))
  if (type === 'image' || type === 'document') validateSource(b.source as Obj, type, `${at}.source`)
}

function validateSource(s: Obj, block: 'image' | 'document', at: string) {
  const kinds = SOURCES[block]
  const schema = typeof s.type === 'string' && Object.hasOwn(kinds, s.type) ? kinds[s.type] : undefined
  if (!schema) {
    const list = Object.keys(kinds).map((k) => `"${k}"`).join(', ')
    throw badRequest(`${at}.type: expected one of ${list} for ${block === 'image' ? 'an image' : 'a document'}${s.type === undefined ? '' : `, got ${quote(s.type)}`}`)
  }
  fail(firstError(schema, s, at))
}

function validateToolResult(b: Obj, at: string): number {
  const c = b.content
  if (c === undefined || typeof c === 'string') return c ? 1 : 0
  let texts = 0
  ;(c as unknown[]).forEach((p, k) => {
    validateBlock(p, TOOL_RESULT_BLOCKS, false, 'a tool_result', `${at}.content[${k}]`)
    if ((p as Obj).type === 'text' && (p as Obj).text !== '') texts++
  })
  return texts
}

/** Custom tools and Anthropic server tools; returns every tool name (duplicates are a 400). */
function validateTools(tools: unknown[]): string[] {
  const names: string[] = []
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`
    if (!isObj(tool)) throw badRequest(`${at}: expected a tool object, got ${typeName(tool)}`)
    fail(firstError(isServerTool(tool) ? ServerTool : CustomTool, tool, at))
    const name = tool.name as string
    if (names.includes(name)) throw badRequest(`${at}.name: duplicate tool name "${name}"`)
    names.push(name)
  })
  return names
}

const CHOICE_STRINGS = ['auto', 'none', 'any']

function validateToolChoice(tc: unknown, names: string[]) {
  let type: string
  let name: string | undefined
  if (typeof tc === 'string') {
    if (!CHOICE_STRINGS.includes(tc)) throw badRequest(`tool_choice: expected "auto", "none", "any" or an object, got ${quote(tc)}`)
    type = tc
  } else {
    if (!isObj(tc)) throw badRequest(`tool_choice: expected a string or an object, got ${typeName(tc)}`)
    const schema = typeof tc.type === 'string' && Object.hasOwn(TOOL_CHOICES, tc.type) ? TOOL_CHOICES[tc.type] : undefined
    if (!schema) throw badRequest(`tool_choice.type: expected one of ${Object.keys(TOOL_CHOICES).map((k) => `"${k}"`).join(', ')}`)
    fail(firstError(schema, tc, 'tool_choice'))
    type = tc.type as string
    name = type === 'tool' ? (tc.name as string) : type === 'function' ? ((tc.function as Obj).name as string) : undefined
  }
  if (type !== 'auto' && type !== 'none' && names.length === 0) throw badRequest(`tool_choice: "${type}" needs at least one tool in tools`)
  // A forced tool must exist, or the upstream answers with an opaque error.
  if (name !== undefined && !names.includes(name)) {
    throw badRequest(`tool_choice.${type === 'function' ? 'function.name' : 'name'}: "${name}" is not among the tools`)
  }
}

function validateThinking(t: Obj, maxTokens: number, betas: string[]) {
  const schema = typeof t.type === 'string' && Object.hasOwn(THINKING, t.type) ? THINKING[t.type] : undefined
  if (!schema) throw badRequest(`thinking.type: expected one of ${Object.keys(THINKING).map((k) => `"${k}"`).join(', ')}`)
  fail(firstError(schema, t, 'thinking'))
  // Anthropic: the budget must be below max_tokens, except with interleaved thinking, where
  // it spans the whole turn (the beta comes in the body's `betas` or the header).
  const interleaved = betas.some((b) => b.startsWith('interleaved-thinking'))
  if (t.type === 'enabled' && !interleaved && (t.budget_tokens as number) >= maxTokens) {
    throw badRequest(`thinking.budget_tokens: must be less than max_tokens (${maxTokens})`)
  }
}
