// The request's conversation as Responses API input items, whatever form it came in:
// `input` as a string, an array of items or of content parts, an object with `content`, or
// the chat-style `messages` alternative (content arrays normalised, `input_text` → `text`).
// Items are the one shape the surface keeps, stores in threads and sends upstream.
import { badRequest, echo } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { isObj } from '../../lib/json.ts'
import { checkDataUrlIn } from '../../media/inline-data.ts'
import { quote } from '../checks.ts'
import { tool } from './tools.ts'

type Obj = Record<string, unknown>

/** Content part types of an input message (chat spellings are coerced to these). */
const PART_TYPE_NAMES = ['input_text', 'input_image', 'input_file', 'input_audio', 'output_text', 'refusal', 'text', 'image_url'] as const
const PART_TYPES: ReadonlySet<unknown> = new Set<(typeof PART_TYPE_NAMES)[number]>(PART_TYPE_NAMES)
const isPartType = (t: unknown): t is (typeof PART_TYPE_NAMES)[number] => PART_TYPES.has(t)

/** Item types of the official Responses API input. */
const ITEM_TYPE_NAMES = [
  'message', 'function_call', 'function_call_output', 'reasoning', 'custom_tool_call', 'custom_tool_call_output',
  'item_reference', 'web_search_call', 'file_search_call', 'computer_call', 'computer_call_output',
  'image_generation_call', 'code_interpreter_call', 'local_shell_call', 'local_shell_call_output', 'shell_call',
  'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_list_tools', 'mcp_approval_request',
  'mcp_approval_response', 'mcp_call', 'compaction', 'tool_search_call', 'tool_search_output',
  'compaction_trigger', 'configuration_update', 'program', 'program_output',
  // tools handed over inside the input (Codex's code-mode models send theirs this way)
  'additional_tools',
] as const
type ItemType = (typeof ITEM_TYPE_NAMES)[number]
export const ITEM_TYPES: ReadonlySet<unknown> = new Set<ItemType>(ITEM_TYPE_NAMES)
const isItemType = (t: unknown): t is ItemType => ITEM_TYPES.has(t)

export type Role = 'user' | 'assistant' | 'system' | 'developer'
const ROLES: ReadonlySet<unknown> = new Set<Role>(['user', 'assistant', 'system', 'developer'])
const isRole = (r: unknown): r is Role => ROLES.has(r)

const DETAILS: ReadonlySet<unknown> = new Set(['auto', 'low', 'high', 'original'])

/** What an input_file names its file by, and calls it. */
const FILE_FIELDS = ['file_id', 'file_data', 'file_url', 'filename'] as const

// Content parts as part() leaves them, told apart by `type`. Items and parts keep the fields
// the gateway does not read (`Obj &`) as they came: they go upstream.
export type TextPart = Obj & { type: 'input_text' | 'output_text'; text: string }
/** An image names a file or a URL (the file wins where both are there); part() sets `detail`, a tool output's part may not. */
export type ImagePart = Obj & { type: 'input_image'; detail?: unknown } & ({ file_id: string; image_url?: unknown } | { file_id?: undefined; image_url: string })
/** A file names at least one of these; their values are the upstream's to judge. */
export type FilePart = Obj & { type: 'input_file'; file_id?: unknown; file_data?: unknown; file_url?: unknown; filename?: unknown }
export type OtherPart = Obj & { type: 'input_audio' | 'refusal'; refusal?: unknown }
export type ContentPart = TextPart | ImagePart | FilePart | OtherPart

// Items as item() leaves them (or as the gateway and the upstream made them, read back from a
// thread), told apart by `type`; the types the gateway does not read carry only their type.
export type MessageItem = Obj & { type: 'message'; role: Role; content: string | ContentPart[] }
export type FunctionCallItem = Obj & { type: 'function_call'; call_id: string; name: string; arguments: string }
export type CustomToolCallItem = Obj & { type: 'custom_tool_call'; call_id: string; name: string; input: string }
/** A tool's output: a string, or content parts not checked one by one. */
/** A function's output may leave its call out (one handed back to a program that called it); a custom tool's names it. */
export type CallOutputItem = Obj & { type: 'function_call_output' | 'custom_tool_call_output'; call_id?: string; output: string | unknown[] }
export type ReasoningItem = Obj & { type: 'reasoning'; summary?: unknown[] }
/** Tools handed over in the input: those with a type checked as tool() checks the turn's own, kept as they came. */
export type AdditionalToolsItem = Obj & { type: 'additional_tools'; tools: unknown[] }
type Read = MessageItem | FunctionCallItem | CustomToolCallItem | CallOutputItem | ReasoningItem | AdditionalToolsItem
export type OtherItem = Obj & { type: Exclude<ItemType, Read['type']> }
export type Item = Read | OtherItem

/** An earlier answer's lists that go back to an OpenAI model as they came. */
const ANSWER_LISTS = ['annotations', 'logprobs'] as const

/** One content part → the Responses spelling (`text` → `input_text`/`output_text`, chat `image_url` → `input_image`). */
function part(p: unknown, at: string, role: Role): ContentPart {
  if (!isObj(p)) throw badRequest(`${at}: expected a content part object, got ${typeName(p)}`)
  const type = p.type
  if (type === undefined) throw badRequest(`${at}.type: required`)
  if (!isPartType(type)) throw badRequest(`${at}.type: unsupported content part type ${quote(type)}`)
  if (type === 'text' || type === 'input_text' || type === 'output_text') {
    if (typeof p.text !== 'string') throw badRequest(`${at}.text: expected a string, got ${typeName(p.text)}`)
    // an earlier answer's annotations and logprobs go back to an OpenAI model as they came (and are
    // kept in a conversation): of the wrong type, its upstream refused them a turn later, unnamed
    for (const k of ANSWER_LISTS) {
      const v = p[k]
      if (v == null) continue
      if (!Array.isArray(v)) throw badRequest(`${at}.${k}: expected an array of objects, got ${typeName(v)}`)
      const i = v.findIndex((x) => !isObj(x))
      if (i >= 0) throw badRequest(`${at}.${k}[${i}]: expected an object, got ${typeName(v[i])}`)
    }
    return { ...p, type: role === 'assistant' ? 'output_text' : 'input_text', text: p.text }
  }
  if (type === 'image_url' || type === 'input_image') {
    const raw = p.image_url
    const given = urlOf(raw)
    const fileId = typeof p.file_id === 'string' ? p.file_id : undefined
    // the next two checks never both fail (one needs a URL, the other none): their order does not matter
    if (given !== undefined && typeof given !== 'string') throw badRequest(`${at}.image_url.url: expected a string, got ${typeName(given)}`)
    // checked before any upstream call; an image declared as another format is set to the one its
    // bytes are, in the body as it came too
    if (typeof raw === 'string') checkDataUrlIn(p, 'image_url', `${at}.image_url`, 'image')
    else if (isObj(raw)) checkDataUrlIn(raw, 'url', `${at}.image_url.url`, 'image')
    const url = urlOf(p.image_url) as string | undefined
    const source = url === undefined ? (fileId === undefined ? undefined : { file_id: fileId }) : fileId === undefined ? { image_url: url } : { image_url: url, file_id: fileId }
    if (source === undefined) throw badRequest(`${at}.image_url: expected a URL string or {url, detail?}`)
    const detail = p.detail ?? (isObj(raw) ? raw.detail : undefined)
    if (detail !== undefined && !DETAILS.has(detail)) throw badRequest(`${at}.detail: expected auto, low or high, got ${quote(detail)}`)
    // the chat spelling's fields become the Responses ones; any other field goes on as it came
    const { image_url: _url, file_id: _file, detail: _detail, ...rest } = p
    return { ...rest, type: 'input_image', ...source, detail: detail ?? 'auto' }
  }
  if (type === 'input_file') {
    // one of another type is no file: a model the gateway translates for would go without it
    for (const k of FILE_FIELDS) if (p[k] != null && typeof p[k] !== 'string') throw badRequest(`${at}.${k}: expected a string, got ${typeName(p[k])}`)
    if (p.file_id == null && p.file_data == null && p.file_url == null) throw badRequest(`${at}: input_file needs file_id, file_data or file_url`)
    checkDataUrlIn(p, 'file_data', `${at}.file_data`, 'document')
  }
  return { ...p, type }
}

/**
 * A tool output's part as a content part, or undefined: an output's parts are not checked one
 * by one, so what the IR path reads of each is checked here (a part it cannot read is left out,
 * as one of a type it does not know is).
 */
export function outputPart(p: unknown): ContentPart | undefined {
  if (!isObj(p)) return undefined
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return typeof p.text === 'string' ? { ...p, type: p.type, text: p.text } : undefined
    case 'input_image':
      if (typeof p.file_id === 'string') return { ...p, type: p.type, file_id: p.file_id }
      return typeof p.image_url === 'string' ? { ...p, type: p.type, file_id: undefined, image_url: p.image_url } : undefined
    case 'input_file':
    case 'input_audio':
    case 'refusal':
      return { ...p, type: p.type }
    default:
      return undefined
  }
}

function content(c: unknown, at: string, role: Role): string | ContentPart[] {
  if (typeof c === 'string') return c
  if (!Array.isArray(c)) throw badRequest(`${at}: expected a string or an array of content parts, got ${typeName(c)}`)
  return c.map((p, i) => part(p, `${at}[${i}]`, role))
}

function message(m: Obj, at: string): MessageItem {
  const role = m.role
  if (!isRole(role)) throw badRequest(`${at}.role: expected user, assistant, system or developer, got ${quote(role)}`)
  if (m.content === undefined) throw badRequest(`${at}.content: required`)
  return { ...m, type: 'message', role, content: content(m.content, `${at}.content`, role) }
}

/** `o[key]`, which must be a string. */
function str(o: Obj, key: string, at: string): string {
  const v = o[key]
  if (typeof v !== 'string') throw badRequest(`${at}.${key}: expected a string, got ${typeName(v)}`)
  return v
}

/** One input item, checked for what the gateway reads from it. */
function item(v: unknown, at: string): Item {
  if (!isObj(v)) throw badRequest(`${at}: expected an item object, got ${typeName(v)}`)
  const type = v.type
  // the SDK's item reference may leave its type null or out: an `id` and no role
  if (type == null && v.role === undefined && typeof v.id === 'string') return { ...v, type: 'item_reference' }
  if (type == null) return message(v, at)
  if (!isItemType(type)) throw badRequest(`${at}.type: unsupported item type ${quote(type)}`)
  switch (type) {
    case 'message':
      return message(v, at)
    case 'function_call':
      return { ...v, type, call_id: str(v, 'call_id', at), name: str(v, 'name', at), arguments: str(v, 'arguments', at) }
    case 'custom_tool_call':
      return { ...v, type, call_id: str(v, 'call_id', at), name: str(v, 'name', at), input: str(v, 'input', at) }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const callId = type === 'function_call_output' && v.call_id == null ? undefined : str(v, 'call_id', at)
      const output = v.output
      if (typeof output !== 'string' && !Array.isArray(output)) throw badRequest(`${at}.output: expected a string or an array of content parts`)
      if (Array.isArray(output)) checkOutputMedia(output, `${at}.output`)
      return { ...v, type, call_id: callId, output }
    }
    case 'reasoning': {
      const summary = v.summary
      if (summary !== undefined && !Array.isArray(summary)) throw badRequest(`${at}.summary: expected an array`)
      return { ...v, type }
    }
    case 'additional_tools': {
      const tools = v.tools
      if (!Array.isArray(tools)) throw badRequest(`${at}.tools: expected an array of tools`)
      // checked as the turn's own tools are (they go as they came): a model the gateway translates
      // for is offered each function and custom tool, and one with a field of the wrong type went without it
      tools.forEach((t, j) => {
        if (isObj(t) && typeof t.type === 'string') tool(t, `${at}.tools[${j}]`)
      })
      return { ...v, type, tools }
    }
    case 'computer_call_output': {
      const shot = v.output
      if (isObj(shot)) checkDataUrlIn(shot, 'image_url', `${at}.output.image_url`, 'image')
      return { ...v, type }
    }
    default:
      return { ...v, type }
  }
}

/**
 * A tool output's inline images and files checked as a message's are (its parts are not
 * checked one by one: outputPart); an image declared as another format set to the one it is.
 */
function checkOutputMedia(output: unknown[], at: string): void {
  output.forEach((p, k) => {
    if (!isObj(p)) return
    if (p.type === 'input_image') checkDataUrlIn(p, 'image_url', `${at}[${k}].image_url`, 'image')
    if (p.type === 'input_file') checkDataUrlIn(p, 'file_data', `${at}[${k}].file_data`, 'document')
  })
}

/** An image part's URL: `image_url` itself (the Responses form) or its `url` (the chat form). */
const urlOf = (raw: unknown): unknown => (typeof raw === 'string' ? raw : isObj(raw) ? raw.url : undefined)

/** `input` in any of its forms → items. */
export function inputItems(input: unknown): Item[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }]
  if (isObj(input)) {
    if (input.content === undefined) throw badRequest('input: an object input needs `content`')
    return [message({ role: 'user', ...input }, 'input')]
  }
  if (!Array.isArray(input)) throw badRequest(`input: expected a string, an array or an object with content, got ${typeName(input)}`)
  // An array of bare content parts is one user message.
  const parts = input.length > 0 && input.every((p) => isObj(p) && typeof p.type === 'string' && PART_TYPES.has(p.type) && p.role === undefined)
  if (parts) return [{ type: 'message', role: 'user', content: content(input, 'input', 'user') }]
  return listOfItems(input, 'input')
}

/** A list of items under `field` (a conversation's `items`), each checked as an input item is. */
export function listOfItems(list: unknown[], field: string): Item[] {
  const items = list.map((v, i) => item(v, `${field}[${i}]`))
  uniqueIds(items, field)
  return items
}

/**
 * An item id names one item (as OpenAI requires): the listing of a response's input items
 * pages by them, and a second item of one id would send a client's paging round for ever.
 */
function uniqueIds(items: Item[], field = 'input'): void {
  const seen = new Map<string, number>()
  items.forEach((it, i) => {
    const id = (it as { id?: unknown }).id
    if (typeof id !== 'string') return
    const first = seen.get(id)
    if (first !== undefined) throw badRequest(`${field}[${i}].id: duplicate item id "${echo(id)}" (${field}[${first}] has it too); remove duplicate items from the ${field}`)
    seen.set(id, i)
  })
}

/**
 * The chat-style `messages` alternative → items (tool calls and tool results included).
 * `places` gets, for each item, the client's field of the call id it holds, or of the message.
 */
export function messagesItems(messages: unknown, places: string[] = []): Item[] {
  if (!Array.isArray(messages)) throw badRequest(`messages: expected an array, got ${typeName(messages)}`)
  const out: Item[] = []
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    if (m.type !== undefined && m.type !== 'message') {
      places.push(`${at}.call_id`)
      return out.push(item(m, at))
    }
    if (m.role === 'tool') {
      const c = m.content
      places.push(`${at}.tool_call_id`)
      out.push({ type: 'function_call_output', call_id: str(m, 'tool_call_id', at), output: typeof c === 'string' ? c : content(c, `${at}.content`, 'user') })
      return
    }
    const calls: unknown[] = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []
    const { tool_calls: _t, ...rest } = m
    if (!(calls.length > 0 && (m.content === null || m.content === undefined || m.content === ''))) {
      places.push(at)
      out.push(message(rest, at))
    }
    calls.forEach((c, j) => {
      const f = isObj(c) && isObj(c.function) ? c.function : undefined
      if (!isObj(c) || !f || typeof f.name !== 'string') throw badRequest(`${at}.tool_calls[${j}].function.name: required`)
      places.push(`${at}.tool_calls[${j}].id`)
      out.push({ type: 'function_call', call_id: String(c.id ?? `call_${j}`), name: f.name, arguments: typeof f.arguments === 'string' ? f.arguments : '{}' })
    })
  })
  uniqueIds(out)
  return out
}

/** `tool_outputs` (`{tool_call_id | call_id, output}`) → function_call_output items. */
export function toolOutputItems(v: unknown): Item[] {
  if (!Array.isArray(v)) throw badRequest(`tool_outputs: expected an array, got ${typeName(v)}`)
  return v.map((o, i) => {
    const at = `tool_outputs[${i}]`
    if (!isObj(o)) throw badRequest(`${at}: expected an object, got ${typeName(o)}`)
    const id = o.tool_call_id ?? o.call_id
    if (typeof id !== 'string' || id === '') throw badRequest(`${at}.tool_call_id: required (call_id is accepted as an alias)`)
    const output = o.output
    if (typeof output !== 'string' && !Array.isArray(output)) throw badRequest(`${at}.output: expected a string, got ${typeName(output)}`)
    return { type: 'function_call_output', call_id: id, output }
  })
}

/** Items as they go upstream without the upstream's own store: client and gateway item ids stripped. */
export function withoutIds(items: Item[]): Item[] {
  return items.map((it) => {
    if (it.id === undefined) return it
    const { id: _id, ...rest } = it
    return rest
  })
}
