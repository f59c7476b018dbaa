// Messages-style request body → checked body. Every problem is a 400 whose message names
// the field (`messages[2].content[0].type: …`), found before any upstream call.
// The model's family rules are applied apart, from the parameter table (params.ts).
import { checkOwnedValues } from '../../routing/params.ts'
import { PARAMS, PARAM_SCHEMAS, type MessagesBody } from './params.ts'
import type { Static, TSchema } from '@sinclair/typebox'
import { outputLimit, type CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { checkValue, knownParams, quote } from '../checks.ts'
import {
  BLOCKS_BY_ROLE,
  CHOICE_MODES,
  CustomTool,
  DOCUMENT_CONTENT_BLOCKS,
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
  McpToolset,
  type MessagesBlock,
  type MessagesMessage,
  type MessagesRole,
  type MessagesThinking,
  type MessagesTool,
  type MessagesToolChoice,
} from './schema.ts'
import { isObj } from '../../lib/json.ts'
import { own } from '../../lib/own.ts'
import { inlineMedia } from '../../media/inline-data.ts'
import { checkToolAnswers } from './tool-answers.ts'

type Body = Record<string, unknown>
type Obj = Record<string, unknown>

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

/** A body validateMessages passed: each parameter by its row's schema, and the parts it checks itself by their declared types. */
export type CheckedMessagesBody = MessagesBody & {
  messages: MessagesMessage[]
  system?: string | Static<typeof TextBlock>[]
  tools?: MessagesTool[]
  tool_choice?: MessagesToolChoice
  thinking?: MessagesThinking
}

/**
 * Every value rule of the messages surface for a normalized body whose model is known. `headerBetas` are
 * the `anthropic-beta` / `beta-beta` header tokens, which change what thinking allows.
 */
export function validateMessages(body: Body, model: CatalogModel, headerBetas: readonly string[] = []): asserts body is Body & CheckedMessagesBody {
  checkParams(body)
  checkOwnedValues(PARAMS, body, model)
  // normalizeMessagesBody made sure of both; said again for the type checker
  if (body.messages === undefined) throw badRequest('messages: required')
  const max = body.max_tokens
  if (max === undefined) throw badRequest('max_tokens: required')
  const cap = outputLimit(model)
  if (cap && max > cap.limit) throw badRequest(`max_tokens: ${max} is greater than the ${cap.what} of ${model.id} (${cap.limit} tokens)`)
  if (body.system !== undefined && typeof body.system !== 'string') validateTextBlocks(body.system, 'system')
  validateConversation(body.messages)
  // a thread that continues holds the calls its first turn may answer
  checkToolAnswers(body.messages, isObj(body.thread) && body.thread.type !== 'create')
  if (body.tools !== undefined) validateTools(body.tools)
  if (body.tool_choice !== undefined) validateToolChoice(body.tool_choice, body.tools?.flatMap((t) => ('name' in t ? [t.name] : [])) ?? [])
  if (body.thinking !== undefined) validateThinking(body.thinking, max, [...headerBetas, ...(body.betas ?? [])])
  if (body.thread != null && model.family === 'openai') throw badRequest(THREAD_REFUSED)
}

/**
 * A message thread is the conversation Anthropic holds between turns, each turn sending only its
 * new messages. An OpenAI-family model has no such store: left out, the next turn would reach it
 * without the conversation, so it is refused in every mode, saying how to go on.
 */
const THREAD_REFUSED =
  "thread: message threads are held by Anthropic, and an OpenAI-family model has nowhere to keep one; send the whole conversation each turn instead (the SDK's toolRunner does with `thread: false`)"

/** Each parameter against its row's schema. */
function checkParams(body: Body): asserts body is Body & MessagesBody {
  for (const k in body) {
    const schema = PARAM_SCHEMAS[k]
    if (schema) fail(firstError(schema, body[k], k))
  }
}

function validateTextBlocks(blocks: unknown[], at: string): asserts blocks is Static<typeof TextBlock>[] {
  blocks.forEach((b, i) => {
    if (!isObj(b)) throw badRequest(`${at}[${i}]: expected a text block object, got ${typeName(b)}`)
    if (b.type !== 'text') throw badRequest(`${at}[${i}].type: expected "text"${b.type === undefined ? '' : `, got ${quote(b.type)}`}`)
    fail(firstError(TextBlock, b, `${at}[${i}]`))
  })
}

const ROLES = Object.keys(BLOCKS_BY_ROLE)
const isRole = (r: unknown): r is MessagesRole => typeof r === 'string' && Object.hasOwn(BLOCKS_BY_ROLE, r)

function validateConversation(messages: unknown[]): asserts messages is MessagesMessage[] {
  let texts = 0
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    if (m.role === undefined) throw badRequest(`${at}.role: required`)
    if (!isRole(m.role)) {
      throw badRequest(`${at}.role: expected one of ${ROLES.map((r) => `"${r}"`).join(', ')}, got ${quote(m.role)}`)
    }
    fail(firstError(MESSAGE_FIELDS, m, at))
    texts += validateContent(m.content, m.role, at)
  })
  if (texts === 0) throw badRequest('messages: at least one text segment is required')
}

/** Checks one message's content; returns how many non-empty text segments it holds. */
function validateContent(c: unknown, role: MessagesRole, at: string): number {
  if (c === undefined || c === null) throw badRequest(`${at}.content: required`)
  if (typeof c === 'string') return c === '' ? 0 : 1
  if (!Array.isArray(c)) throw badRequest(`${at}.content: expected a string or an array of content blocks, got ${typeName(c)}`)
  let texts = 0
  c.forEach((b, j) => {
    const bat = `${at}.content[${j}]`
    validateBlock(b, BLOCKS_BY_ROLE[role], role === 'assistant', `${role === 'assistant' ? 'an' : 'a'} ${role} message`, bat)
    if (b.type === 'text' && b.text !== '') texts++
    if (b.type === 'tool_result') texts += validateToolResult(b, bat)
  })
  return texts
}

/**
 * One block against the schemas allowed where it stands; media sources by their type. Past it
 * the block is a MessagesBlock (or, where `serverResults`, a `*_tool_result` server block,
 * which no MessagesBlock type matches).
 */
function validateBlock(b: unknown, allowed: Record<string, TSchema>, serverResults: boolean, where: string, at: string): asserts b is MessagesBlock {
  checkBlock(b, allowed, serverResults, where, at)
  if (b.type === 'image' || b.type === 'document') validateSource(b.source, b.type, `${at}.source`)
}

function checkBlock(b: unknown, allowed: Record<string, TSchema>, serverResults: boolean, where: string, at: string): asserts b is MessagesBlock {
  if (!isObj(b)) throw badRequest(`${at}: expected a content block object, got ${typeName(b)}`)
  const type = b.type
  if (type === undefined) throw badRequest(`${at}.type: required`)
  const schema = own(allowed, type)
  if (!schema && !(serverResults && typeof type === 'string' && /_tool_result$/.test(type))) {
    const kinds = Object.keys(allowed).map((k) => `"${k}"`).join(', ')
    throw badRequest(`${at}.type: expected one of ${kinds} in ${where}, got ${quote(type)}`)
  }
  fail(firstError(schema ?? ServerToolResultBlock, b, at))
}

function validateSource(s: Obj, block: 'image' | 'document', at: string) {
  const kinds = SOURCES[block]
  const schema = typeof s.type === 'string' && Object.hasOwn(kinds, s.type) ? kinds[s.type] : undefined
  if (!schema) {
    const list = Object.keys(kinds).map((k) => `"${k}"`).join(', ')
    throw badRequest(`${at}.type: expected one of ${list} for ${block === 'image' ? 'an image' : 'a document'}${s.type === undefined ? '' : `, got ${quote(s.type)}`}`)
  }
  fail(firstError(schema, s, at))
  if (s.type === 'content' && Array.isArray(s.content)) {
    s.content.forEach((b: unknown, k: number) => validateBlock(b, DOCUMENT_CONTENT_BLOCKS, false, "a document's content", `${at}.content[${k}]`))
  }
  // base64 data checked before any upstream call; an image declared as another image format
  // goes as the one its bytes are, as an uploaded file does
  if (s.type === 'base64') {
    const checked = inlineMedia(s.media_type as string, s.data as string, `${at}.data`, block)
    s.media_type = checked.mediaType
    s.data = checked.data
  }
}

function validateToolResult(b: Extract<MessagesBlock, { type: 'tool_result' }>, at: string): number {
  const c = b.content
  if (c === undefined || typeof c === 'string') return c ? 1 : 0
  let texts = 0
  c.forEach((p, k) => {
    validateBlock(p, TOOL_RESULT_BLOCKS, false, 'a tool_result', `${at}.content[${k}]`)
    if (p.type === 'text' && p.text !== '') texts++
  })
  return texts
}

/** Custom tools and Anthropic server tools; a tool name twice is a 400. */
function validateTools(tools: unknown[]): asserts tools is MessagesTool[] {
  const names = new Set<string>()
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`
    if (!isObj(tool)) throw badRequest(`${at}: expected a tool object, got ${typeName(tool)}`)
    if (tool.type === 'mcp_toolset') return checkValue(McpToolset, tool, at)
    if (isServerTool(tool)) checkValue(ServerTool, tool, at)
    else checkValue(CustomTool, tool, at)
    if (names.has(tool.name)) throw badRequest(`${at}.name: duplicate tool name "${tool.name}"`)
    names.add(tool.name)
  })
}

const MODES: ReadonlySet<unknown> = new Set(CHOICE_MODES)
const isMode = (tc: unknown): tc is (typeof CHOICE_MODES)[number] => MODES.has(tc)

function validateToolChoice(tc: unknown, names: string[]): asserts tc is MessagesToolChoice {
  let type: string
  let name: string | undefined
  if (typeof tc === 'string') {
    if (!isMode(tc)) throw badRequest(`tool_choice: expected "auto", "none", "any" or an object, got ${quote(tc)}`)
    type = tc
  } else {
    if (!isObj(tc)) throw badRequest(`tool_choice: expected a string or an object, got ${typeName(tc)}`)
    const schema = own(TOOL_CHOICES, tc.type)
    if (!schema) throw badRequest(`tool_choice.type: expected one of ${Object.keys(TOOL_CHOICES).map((k) => `"${k}"`).join(', ')}`)
    checkValue(schema, tc, 'tool_choice')
    type = tc.type
    name = tc.type === 'tool' ? tc.name : tc.type === 'function' ? tc.function.name : undefined
  }
  if (type !== 'auto' && type !== 'none' && names.length === 0) throw badRequest(`tool_choice: "${type}" needs at least one tool in tools`)
  // A forced tool must exist, or the upstream answers with an opaque error.
  if (name !== undefined && !names.includes(name)) {
    throw badRequest(`tool_choice.${type === 'function' ? 'function.name' : 'name'}: "${name}" is not among the tools`)
  }
}

function validateThinking(t: Obj, maxTokens: number, betas: string[]): asserts t is MessagesThinking {
  const schema = own(THINKING, t.type)
  if (!schema) throw badRequest(`thinking.type: expected one of ${Object.keys(THINKING).map((k) => `"${k}"`).join(', ')}`)
  checkValue(schema, t, 'thinking')
  // Anthropic: the budget must be below max_tokens, except with interleaved thinking, where
  // it spans the whole turn (the beta comes in the body's `betas` or the header).
  const interleaved = betas.some((b) => b.startsWith('interleaved-thinking'))
  if (t.type === 'enabled' && !interleaved && t.budget_tokens >= maxTokens) {
    throw badRequest(`thinking.budget_tokens: must be less than max_tokens (${maxTokens})`)
  }
}
