// The parts of a checked chat-style body → IR, for the rows of the parameter table
// (params.ts) that need more than a copy. Pure; a value the IR cannot take is a 400 naming
// its field.
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import type { GenerationRequest, MediaSource, Message, Part, ResponseFormat, ToolChoice } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'
import { carry, reasoningOf } from '../../routing/to-ir.ts'
import type { ChatFunction, ChatTool, ChatToolChoice } from './schema.ts'

type Obj = Record<string, unknown>

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

/** Tools of the `tools` list, as validateChat left them (each item checked by its schema). */
export function toolsToIR(tools: ChatTool[], req: GenerationRequest): void {
  const out = (req.tools ??= [])
  for (const { function: f } of tools) {
    out.push({ name: f.name, description: f.description, parameters: f.parameters ?? noParams(), strict: typeof f.strict === 'boolean' ? f.strict : undefined })
  }
}

/** Legacy `functions`, after the tools. */
export function functionsToIR(fns: ChatFunction[], req: GenerationRequest): void {
  const out = (req.tools ??= [])
  for (const f of fns) out.push({ name: f.name, description: f.description, parameters: f.parameters ?? noParams() })
}

/** A tool that takes no arguments (a fresh object each time: an adapter may add to it). */
const noParams = () => ({ type: 'object', properties: {} })

/** `tool_choice`, or the legacy `function_call` when there is none. */
export function toolChoiceOf(tc: ChatToolChoice | { name: string }): ToolChoice {
  if (tc === 'none' || tc === 'auto' || tc === 'required') return { type: tc }
  return { type: 'tool', name: 'function' in tc ? tc.function.name : tc.name }
}

export function toResponseFormat(rf: unknown): ResponseFormat | undefined {
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

/** `messages`: the system and developer messages are the IR's system text, the rest its messages. */
export function messagesToIR(wire: Obj[], req: GenerationRequest, model: CatalogModel): void {
  const { system, messages } = toMessages(wire, model)
  req.messages = messages
  if (system.length > 0) req.system = system
}

/** `stream`; a stream says whether the client asked for usage in it. */
export function streamToIR(stream: boolean, req: GenerationRequest, body: { stream_options?: { include_usage?: boolean } }): void {
  req.stream = stream
  if (stream) req.includeUsage = body.stream_options?.include_usage === true
}

/** `thinking`: a budget the IR has a field for; a Claude-family upstream gets any other form as it came. */
export function thinkingToIR(thinking: { type: string; budget_tokens?: number }, req: GenerationRequest, model: CatalogModel): void {
  if (thinking.type === 'enabled') reasoningOf(req).budgetTokens = thinking.budget_tokens
  else if (model.family === 'anthropic') carry(req, 'anthropic', 'thinking', thinking)
}

export function toStops(stop: string | string[] | undefined): string[] {
  if (stop === undefined) return []
  return typeof stop === 'string' ? [stop] : stop
}
