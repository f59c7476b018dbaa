// The parts of a checked chat-style body → IR, for the rows of the parameter table
// (params.ts) that need more than a copy. Pure; a value the IR cannot take is a 400 naming
// its field.
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import type { GenerationRequest, MediaSource, Message, Part, ResponseFormat, ToolChoice } from '../../ir/types.ts'
import { carry, reasoningOf } from '../../routing/to-ir.ts'
import { toolName, type ChatFunction, type ChatMessage, type ChatRefusalPart, type ChatResponseFormat, type ChatTextPart, type ChatTool, type ChatToolChoice, type ChatUserPart } from './schema.ts'
import { customArguments, customToolParameters } from '../custom-tools.ts'
import { breakpointCache } from '../openai-options.ts'
import { parseDataUrl } from '../../media/inline-data.ts'
import type { ChatThinkingBlock } from './encode.ts'

type TextPart = Extract<Part, { type: 'text' }>

/** An image / file URL as an IR media source, or a 400 naming `at` (the data was checked with the body: validate.ts). */
export function mediaSource(url: string, at: string): MediaSource {
  if (url.startsWith('https://')) return { kind: 'url', url, at }
  return { kind: 'base64', ...parseDataUrl(url, at), at }
}

function textParts(content: string | (ChatTextPart | ChatRefusalPart)[] | null | undefined): TextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  return content.map((p) => (p.type === 'text' ? withCache({ type: 'text', text: p.text }, p) : { type: 'text', text: p.refusal }))
}

/** A part's cache breakpoint: Anthropic's `cache_control` as it came, else OpenAI's `prompt_cache_breakpoint` translated. */
function withCache<P extends Part>(part: P, wire: { cache_control?: unknown; prompt_cache_breakpoint?: unknown }): P {
  const cache = wire.cache_control ?? breakpointCache(wire.prompt_cache_breakpoint)
  if (cache !== undefined) (part as { cacheControl?: unknown }).cacheControl = cache
  return part
}

function userParts(content: string | ChatUserPart[], at: string, model: CatalogModel): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return content.map((p, j): Part => {
    const pat = `${at}.content[${j}]`
    switch (p.type) {
      case 'image_url': {
        const img = p.image_url
        return withCache({ type: 'image', source: mediaSource(img.url, `${pat}.image_url.url`), detail: img.detail }, p)
      }
      case 'file': {
        const f = p.file
        const title = f.filename
        if (typeof f.file_data === 'string') return withCache({ type: 'document', source: mediaSource(f.file_data, `${pat}.file.file_data`), title }, p)
        if (typeof f.file_id === 'string') return withCache({ type: 'document', source: { kind: 'file', fileId: f.file_id, at: `${pat}.file.file_id` }, title }, p)
        throw badRequest(`${pat}.file: one of file_data or file_id is required`)
      }
      case 'input_audio':
        throw badRequest(`${pat}: input_audio parts are not supported for model ${model.id}`)
      default:
        return withCache({ type: 'text', text: p.text }, p)
    }
  })
}

/** An audio reply is recalled by an id only OpenAI can resolve: a Claude model would get the turn empty, or without what it said. */
const AUDIO_REPLY = "an earlier audio reply is recalled by an id only OpenAI can resolve; for a Claude-family model send what it said as the assistant's content instead"

function toMessages(wire: ChatMessage[], model: CatalogModel): { system: Part[]; messages: Message[] } {
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
        messages.push({ role: 'user', content: userParts(m.content, at, model), name: m.name })
        return
      case 'assistant': {
        if (m.audio != null && model.family === 'anthropic') throw badRequest(`${at}.audio: ${AUDIO_REPLY}`)
        // `content: ""` beside tool calls is no text at all.
        // a Claude model's signed thinking first, where its turn began
        const content: Part[] = (m.thinking_blocks ?? []).flatMap(signedThinking)
        content.push(...textParts(m.content ?? m.refusal).filter((p) => p.text !== ''))
        for (const [j, tc] of (m.tool_calls ?? []).entries()) {
          const call = `${at}.tool_calls[${j}]`
          if (tc.type === 'custom') content.push({ type: 'tool-call', id: tc.id, name: tc.custom.name, arguments: customArguments(tc.custom.input), at: `${call}.custom.input` })
          else content.push({ type: 'tool-call', id: tc.id, name: tc.function.name, arguments: tc.function.arguments, at: `${call}.function.arguments` })
        }
        const fc = m.function_call
        if (fc) {
          const id = `call_fn_${i}`
          fnCallIds.set(fc.name, id)
          content.push({ type: 'tool-call', id, name: fc.name, arguments: fc.arguments, at: `${at}.function_call.arguments` })
        }
        messages.push({ role: 'assistant', content, name: m.name })
        return
      }
      case 'tool':
      case 'function': {
        const toolCallId = m.role === 'tool' ? m.tool_call_id : (fnCallIds.get(m.name) ?? `call_fn_${m.name}`)
        // parts stay apart (a Claude model gets one text block each, as from a messages client)
        const parts = typeof m.content === 'string' ? m.content : textParts(m.content)
        const content = typeof parts === 'string' || parts.length > 1 || parts[0]?.cacheControl ? parts : (parts[0]?.text ?? '')
        const part: Part = { type: 'tool-result', toolCallId, content }
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

/** Tools of the `tools` list, as validateChat left them (each item checked by its schema); a custom tool becomes a function taking one string. */
export function toolsToIR(tools: ChatTool[], req: GenerationRequest): void {
  const out = (req.tools ??= [])
  for (const t of tools) {
    if (t.type === 'custom') {
      out.push({ name: t.custom.name, description: t.custom.description, parameters: customToolParameters(t.custom.name, t.custom.format) })
      continue
    }
    const f = t.function
    out.push({ name: f.name, description: f.description, parameters: f.parameters ?? noParams(), strict: typeof f.strict === 'boolean' ? f.strict : undefined })
  }
}

const NO_CUSTOM_TOOLS: ReadonlySet<string> = new Set()

/** The custom tools' names: their calls go back to the client as custom tool calls (none, the usual case, costs no allocation). */
export function customToolNames(tools: ChatTool[] | undefined): ReadonlySet<string> {
  if (!tools?.some((t) => t.type === 'custom')) return NO_CUSTOM_TOOLS
  return new Set(tools.flatMap((t) => (t.type === 'custom' ? [t.custom.name] : [])))
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
  if ('allowed_tools' in tc) return { type: tc.allowed_tools.mode }
  return { type: 'tool', name: 'function' in tc ? tc.function.name : 'custom' in tc ? tc.custom.name : tc.name }
}

/** `tool_choice`: the IR's choice; `allowed_tools` also leaves only the tools it names (the IR has no list of allowed ones). */
export function toolChoiceToIR(tc: ChatToolChoice, req: GenerationRequest): void {
  req.toolChoice = toolChoiceOf(tc)
  if (typeof tc !== 'object' || !('allowed_tools' in tc)) return
  const allowed = new Set(tc.allowed_tools.tools.map(toolName))
  req.tools = req.tools?.filter((t) => allowed.has(t.name))
}

export function toResponseFormat(rf: ChatResponseFormat): ResponseFormat {
  if (rf.type !== 'json_schema') return { type: rf.type }
  const js = rf.json_schema
  return {
    type: 'json_schema',
    name: js.name,
    schema: js.schema,
    strict: typeof js.strict === 'boolean' ? js.strict : undefined,
    description: js.description,
  }
}

/** `messages`: the system and developer messages are the IR's system text, the rest its messages. */
export function messagesToIR(wire: ChatMessage[], req: GenerationRequest, model: CatalogModel): void {
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
/**
 * A thinking block a chat client sent back, as the IR's reasoning part; one with no signature (or
 * no data) is no signed block and stays behind (the turn then goes as thinking lost).
 */
function signedThinking(b: ChatThinkingBlock): Part[] {
  if (b.type === 'thinking') return b.signature === '' ? [] : [{ type: 'reasoning', text: b.thinking, signature: b.signature }]
  return b.data === '' ? [] : [{ type: 'reasoning', text: '', redacted: b.data }]
}

export function thinkingToIR(thinking: { type: string; budget_tokens?: number }, req: GenerationRequest, model: CatalogModel): void {
  if (thinking.type === 'enabled') reasoningOf(req).budgetTokens = thinking.budget_tokens
  else if (model.family === 'anthropic') carry(req, 'anthropic', 'thinking', thinking)
}

export function toStops(stop: string | string[] | undefined): string[] {
  if (stop === undefined) return []
  return typeof stop === 'string' ? [stop] : stop
}
