// The request's conversation as Responses API input items, whatever form it came in:
// `input` as a string, an array of items or of content parts, an object with `content`, or
// the chat-style `messages` alternative (content arrays normalised, `input_text` → `text`).
// Items are the one shape the surface keeps, stores in threads and sends upstream.
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { isObj } from '../../lib/json.ts'

export type Item = Record<string, unknown>
type Obj = Record<string, unknown>

const quote = (v: unknown) => JSON.stringify(v)?.slice(0, 40) ?? String(v)

/** Content part types of an input message (chat spellings are coerced to these). */
const PART_TYPES = new Set(['input_text', 'input_image', 'input_file', 'input_audio', 'output_text', 'refusal', 'text', 'image_url'])

/** Item types of the official Responses API input. */
export const ITEM_TYPES = new Set([
  'message', 'function_call', 'function_call_output', 'reasoning', 'custom_tool_call', 'custom_tool_call_output',
  'item_reference', 'web_search_call', 'file_search_call', 'computer_call', 'computer_call_output',
  'image_generation_call', 'code_interpreter_call', 'local_shell_call', 'local_shell_call_output', 'shell_call',
  'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_list_tools', 'mcp_approval_request',
  'mcp_approval_response', 'mcp_call', 'compaction', 'tool_search_call', 'tool_search_output',
  // tools handed over inside the input (Codex's code-mode models send theirs this way)
  'additional_tools',
])
const ROLES = new Set(['user', 'assistant', 'system', 'developer'])

/** One content part → the Responses spelling (`text` → `input_text`/`output_text`, chat `image_url` → `input_image`). */
function part(p: unknown, at: string, role: string): Obj {
  if (!isObj(p)) throw badRequest(`${at}: expected a content part object, got ${typeName(p)}`)
  if (typeof p.type !== 'string' || !PART_TYPES.has(p.type)) throw badRequest(`${at}.type: unsupported content part type ${quote(p.type)}`)
  const text = role === 'assistant' ? 'output_text' : 'input_text'
  if (p.type === 'text' || p.type === 'input_text' || p.type === 'output_text') {
    if (typeof p.text !== 'string') throw badRequest(`${at}.text: expected a string, got ${typeName(p.text)}`)
    return p.type === text ? p : { ...p, type: text }
  }
  if (p.type === 'image_url' || p.type === 'input_image') {
    const raw = p.image_url
    const url = typeof raw === 'string' ? raw : isObj(raw) ? raw.url : undefined
    if (url === undefined && typeof p.file_id !== 'string') throw badRequest(`${at}.image_url: expected a URL string or {url, detail?}`)
    if (url !== undefined && typeof url !== 'string') throw badRequest(`${at}.image_url.url: expected a string, got ${typeName(url)}`)
    const detail = p.detail ?? (isObj(raw) ? raw.detail : undefined)
    if (detail !== undefined && !['auto', 'low', 'high', 'original'].includes(detail as string)) throw badRequest(`${at}.detail: expected auto, low or high, got ${quote(detail)}`)
    const out: Obj = { type: 'input_image' }
    if (url !== undefined) out.image_url = url
    if (typeof p.file_id === 'string') out.file_id = p.file_id
    out.detail = detail ?? 'auto'
    return out
  }
  if (p.type === 'input_file') {
    if (p.file_id === undefined && p.file_data === undefined && p.file_url === undefined) throw badRequest(`${at}: input_file needs file_id, file_data or file_url`)
  }
  return p
}

function content(c: unknown, at: string, role: string): string | Obj[] {
  if (typeof c === 'string') return c
  if (!Array.isArray(c)) throw badRequest(`${at}: expected a string or an array of content parts, got ${typeName(c)}`)
  return c.map((p, i) => part(p, `${at}[${i}]`, role))
}

function message(m: Obj, at: string): Item {
  const role = m.role
  if (typeof role !== 'string' || !ROLES.has(role)) throw badRequest(`${at}.role: expected user, assistant, system or developer, got ${quote(role)}`)
  if (m.content === undefined) throw badRequest(`${at}.content: required`)
  return { ...m, type: 'message', role, content: content(m.content, `${at}.content`, role) }
}

function requireString(o: Obj, key: string, at: string) {
  if (typeof o[key] !== 'string') throw badRequest(`${at}.${key}: expected a string, got ${typeName(o[key])}`)
}

/** One input item, checked for what the gateway reads from it. */
function item(v: unknown, at: string): Item {
  if (!isObj(v)) throw badRequest(`${at}: expected an item object, got ${typeName(v)}`)
  if (v.type === undefined || v.type === 'message') return message(v, at)
  if (typeof v.type !== 'string' || !ITEM_TYPES.has(v.type)) throw badRequest(`${at}.type: unsupported item type ${quote(v.type)}`)
  switch (v.type) {
    case 'function_call':
      requireString(v, 'call_id', at)
      requireString(v, 'name', at)
      requireString(v, 'arguments', at)
      break
    case 'custom_tool_call':
      requireString(v, 'call_id', at)
      requireString(v, 'name', at)
      requireString(v, 'input', at)
      break
    case 'function_call_output':
    case 'custom_tool_call_output':
      requireString(v, 'call_id', at)
      if (typeof v.output !== 'string' && !Array.isArray(v.output)) throw badRequest(`${at}.output: expected a string or an array of content parts`)
      break
    case 'reasoning':
      if (v.summary !== undefined && !Array.isArray(v.summary)) throw badRequest(`${at}.summary: expected an array`)
      break
    case 'additional_tools':
      if (!Array.isArray(v.tools)) throw badRequest(`${at}.tools: expected an array of tools`)
      break
  }
  return v
}

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
  return input.map((v, i) => item(v, `input[${i}]`))
}

/** The chat-style `messages` alternative → items (tool calls and tool results included). */
export function messagesItems(messages: unknown): Item[] {
  if (!Array.isArray(messages)) throw badRequest(`messages: expected an array, got ${typeName(messages)}`)
  const out: Item[] = []
  messages.forEach((m, i) => {
    const at = `messages[${i}]`
    if (!isObj(m)) throw badRequest(`${at}: expected a message object, got ${typeName(m)}`)
    if (m.type !== undefined && m.type !== 'message') return out.push(item(m, at))
    if (m.role === 'tool') {
      requireString(m, 'tool_call_id', at)
      const c = m.content
      out.push({ type: 'function_call_output', call_id: m.tool_call_id, output: typeof c === 'string' ? c : content(c, `${at}.content`, 'user') })
      return
    }
    const calls = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []
    const { tool_calls: _t, ...rest } = m
    if (!(calls.length > 0 && (m.content === null || m.content === undefined || m.content === ''))) out.push(message(rest, at))
    calls.forEach((c, j) => {
      const f = isObj(c) && isObj(c.function) ? c.function : undefined
      if (!f || typeof f.name !== 'string') throw badRequest(`${at}.tool_calls[${j}].function.name: required`)
      out.push({ type: 'function_call', call_id: String((c as Obj).id ?? `call_${j}`), name: f.name, arguments: typeof f.arguments === 'string' ? f.arguments : '{}' })
    })
  })
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
