// The parts of a checked messages-style body → IR, for the rows of the parameter table
// (params.ts) that need more than a copy. Pure. What the IR has no field for rides in
// `providerData.anthropic`, so a translated call to a Claude-family upstream still sends it
// and an OpenAI-family upstream never sees it.
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, MediaSource, Message, Part, Tool, ToolChoice } from '../../ir/types.ts'
import type { IRContext } from '../../routing/params.ts'
import { carry, reasoningOf } from '../../routing/to-ir.ts'
import { claudeFormat, claudeOutputConfig, claudeTool } from '../../routing/translate.ts'
import { isServerTool, type MessagesBlock, type MessagesCustomTool, type MessagesMessage, type MessagesSource, type MessagesThinking, type MessagesTool, type MessagesToolChoice } from './schema.ts'
import { isObj } from '../../lib/json.ts'
import { clientTool } from './client-tools.ts'
import { userIdToSafetyIdentifier } from '../openai-options.ts'

type Obj = Record<string, unknown>


function withCache<P extends Part>(part: P, wire: { cache_control?: unknown }): P {
  if (wire.cache_control != null) (part as { cacheControl?: unknown }).cacheControl = wire.cache_control
  return part
}

const textOf = (blocks: unknown[], between = ''): string =>
  blocks.flatMap((b) => (isObj(b) && b.type === 'text' && typeof b.text === 'string' ? [b.text] : [])).join(between)

/**
 * What a document block asks that a GPT model has no place for, named rather than dropped
 * without a word: its `context` (what the document is, beside its title), its citations, and
 * the blocks other than text of a document made of blocks (its text is what the model reads);
 * a search result's citations too.
 */
export function documentExtras(wire: MessagesMessage[], compat: string[]): void {
  let context = false
  let citations = false
  let searchCitations = false
  let notText = false
  const look = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const b of blocks) {
      if (!isObj(b)) continue
      if (b.type === 'document') {
        context ||= typeof b.context === 'string' && b.context !== ''
        citations ||= isObj(b.citations) && b.citations.enabled === true
        const s = b.source
        notText ||= isObj(s) && s.type === 'content' && Array.isArray(s.content) && s.content.some((c) => !isObj(c) || c.type !== 'text')
      } else if (b.type === 'search_result') searchCitations ||= isObj(b.citations) && b.citations.enabled === true
      else if (b.type === 'tool_result') look(b.content)
    }
  }
  for (const m of wire) look(m.content)
  if (context) compat.push('document.context')
  if (citations) compat.push('document.citations')
  if (notText) compat.push('document.source.content[].image')
  if (searchCitations) compat.push('search_result.citations')
}

/** A wire `source` → IR media source (validated before: one of SOURCES' shapes, schema.ts). */
function mediaSource(s: MessagesSource): MediaSource {
  switch (s.type) {
    case 'base64':
      return { kind: 'base64', mediaType: s.media_type, data: s.data }
    case 'url':
      return { kind: 'url', url: s.url }
    case 'file':
      return { kind: 'file', fileId: s.file_id }
    case 'content':
      // A document made of blocks: its text is what a model can read.
      // (its chunks apart, as paragraphs)
      return { kind: 'text', mediaType: 'text/plain', data: typeof s.content === 'string' ? s.content : textOf(s.content, '\n\n') }
    default:
      return { kind: 'text', mediaType: s.media_type ?? 'text/plain', data: s.data }
  }
}

/** One wire block → IR part, or nothing for blocks the IR does not carry. */
function part(b: MessagesBlock): Part | undefined {
  switch (b.type) {
    case 'text':
      return withCache({ type: 'text', text: b.text }, b)
    case 'image':
      return withCache({ type: 'image', source: mediaSource(b.source as MessagesSource) }, b)
    case 'document': {
      const d: Part = { type: 'document', source: mediaSource(b.source as MessagesSource) }
      if (typeof b.title === 'string') d.title = b.title
      return withCache(d, b)
    }
    case 'search_result':
      return withCache({ type: 'text', text: `${b.title} (${b.source})\n${textOf(b.content)}` }, b)
    case 'tool_reference':
      return { type: 'text', text: `Tool loaded: ${b.tool_name}` }
    // the summary of what came before it: what a model other than Claude can go on from (none when compaction failed)
    case 'compaction':
      return b.content ? { type: 'text', text: b.content } : undefined
    case 'tool_use': {
      const p: Part = { type: 'tool-call', id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) }
      if (b.cache_control != null) p.providerData = { anthropic: { cache_control: b.cache_control } }
      return p
    }
    case 'tool_result': {
      const c = b.content
      const content = c === undefined ? '' : typeof c === 'string' ? c : (c as MessagesBlock[]).map(part).filter((p): p is Part => p !== undefined)
      const p: Part = { type: 'tool-result', toolCallId: b.tool_use_id, content }
      if (b.is_error === true) p.isError = true
      return withCache(p, b)
    }
    // Thinking goes back byte for byte, signature and redacted data included.
    case 'thinking':
      return { type: 'reasoning', text: b.thinking, signature: b.signature }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redacted: b.data }
    default:
      // server_tool_use and `*_tool_result` blocks ran at Anthropic; no IR part can replay
      // them (but a web search's: content() reads those). A Claude-family model gets the body
      // untouched (pass-through); any other model continues from the text around them.
      return undefined
  }
}

type Search = Extract<Part, { type: 'web-search' }>

export function content(c: string | MessagesBlock[]): Part[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }]
  const out: Part[] = []
  // Claude's web searches as a client sends them back (a server_tool_use named web_search, then
  // its web_search_tool_result): each a search of the IR where its server_tool_use stood, holding
  // both blocks, which go back to Claude on a path through the IR as they came (so it still has
  // what it found) and stay behind for any other model
  let searches: Map<string, { part: Search; input: Record<string, unknown> }> | undefined
  let unanswered = 0
  for (const b of c) {
    const o = b as { type: string; id?: unknown; name?: unknown; input?: unknown; tool_use_id?: unknown; content?: unknown }
    if (o.type === 'server_tool_use' && o.name === 'web_search' && isObj(o.input) && typeof o.id === 'string') {
      const search: Search = { type: 'web-search', id: o.id, query: typeof o.input.query === 'string' ? o.input.query : '', sources: [], status: 'incomplete' }
      ;(searches ??= new Map()).set(o.id, { part: search, input: o.input })
      out.push(search)
      unanswered++
      continue
    }
    const asked = o.type === 'web_search_tool_result' && typeof o.tool_use_id === 'string' ? searches?.get(o.tool_use_id) : undefined
    if (asked && asked.part.providerData === undefined && (Array.isArray(o.content) || isObj(o.content))) {
      asked.part.status = Array.isArray(o.content) ? 'completed' : 'failed'
      asked.part.providerData = { anthropic: { input: asked.input, content: o.content } }
      unanswered--
      continue
    }
    const p = part(b)
    if (p) out.push(p)
  }
  // a search without its result (a paused turn's) is left out, as other server tools' blocks are
  return unanswered === 0 ? out : out.filter((p) => p.type !== 'web-search' || p.providerData !== undefined)
}

/**
 * Messages in order. `role: "system"` messages stay system-role messages where they stand
 * (Claude Code sends one after the user turn); a `tool` message naming its call is that
 * call's result.
 */
export function messages(wire: MessagesMessage[]): Message[] {
  const out: Message[] = []
  for (const m of wire) {
    const id = m.tool_use_id ?? m.tool_call_id
    if (m.role === 'tool' && id !== undefined) {
      const c = typeof m.content === 'string' ? m.content : content(m.content)
      out.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, content: c }] })
      continue
    }
    const parts = content(m.content)
    // A turn made only of server-tool blocks has nothing left; an empty turn is not sent on.
    if (parts.length === 0 && Array.isArray(m.content) && m.content.length > 0) continue
    out.push({ role: m.role, content: parts })
  }
  return out
}

/** Own fields of a custom tool that the IR has no place for (defer_loading, strict, input_examples …). */
const TOOL_IR_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control'])

function tools(wire: MessagesTool[]): Tool[] {
  return wire.flatMap((t) => (isServerTool(t) ? [] : [customTool(t)]))
}

function customTool(t: MessagesCustomTool): Tool {
  const tool: Tool = { name: t.name, parameters: t.input_schema }
  if (typeof t.description === 'string') tool.description = t.description
  if (typeof t.strict === 'boolean') tool.strict = t.strict
  if (t.cache_control != null) tool.cacheControl = t.cache_control
  const extra: Obj = {}
  for (const [k, v] of Object.entries(t)) if (!TOOL_IR_FIELDS.has(k) && v !== undefined) extra[k] = v
  if (Object.keys(extra).length > 0) tool.providerData = { anthropic: extra }
  return tool
}

const CHOICE = { auto: 'auto', none: 'none', any: 'required' } as const

export function toolChoice(tc: MessagesToolChoice | undefined): ToolChoice | undefined {
  if (tc === undefined) return undefined
  if (typeof tc === 'string') return { type: CHOICE[tc] }
  if (tc.type === 'none') return { type: 'none' }
  const disable = tc.disable_parallel_tool_use === true ? { disableParallel: true } : {}
  if (tc.type === 'tool') return { type: 'tool', name: tc.name, ...disable }
  if (tc.type === 'function') return { type: 'tool', name: tc.function.name, ...disable }
  return { type: CHOICE[tc.type], ...disable }
}

/** `thinking`: a plain `enabled` is a budget the IR has a field for; any other form (or a display setting) rides to a Claude-family upstream as it came. */
export function thinkingToIR(thinking: MessagesThinking, req: GenerationRequest, model: CatalogModel): void {
  if (thinking.type === 'enabled') reasoningOf(req).budgetTokens = thinking.budget_tokens
  if (model.family === 'anthropic' && (thinking.type !== 'enabled' || thinking.display != null)) carry(req, 'anthropic', 'thinking', thinking)
}

/** A server tool by its type where that reads as one of Anthropic's (`web_search_20250305`), else by its place. */
const serverToolName = (t: { type?: unknown }, i: number): string =>
  typeof t.type === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(t.type) ? `tools.${t.type}` : `tools[${i}]`

/**
 * `tools`: custom tools become IR tools. Tools of Anthropic's own types: a Claude-family model
 * gets the list as it came. For any other model, those that run at the client (bash, the text
 * editor) are the function tools they stand for, and named as such; those that run at
 * Anthropic (web search, code execution …) it does without, and each is named.
 */
export function toolsToIR(wire: MessagesTool[], req: GenerationRequest, model: CatalogModel, compat: string[]): void {
  const custom = tools(wire)
  // a strict tool, for a GPT model, is strict where its schema fits OpenAI's strict mode or can be made to (claudeTool)
  if (custom.length > 0) req.tools = model.family === 'anthropic' ? custom : custom.map(claudeTool)
  if (!wire.some(isServerTool)) return
  if (model.family === 'anthropic') return carry(req, 'anthropic', 'tools', wire)
  wire.forEach((t, i) => {
    if (!isServerTool(t)) return
    const fn = 'name' in t ? clientTool(t) : undefined
    if (!fn) return compat.push(serverToolName(t, i))
    ;(req.tools ??= []).push(fn)
    compat.push(`${serverToolName(t, i)}->function`)
  })
}

/** Structured output: for a GPT model, Anthropic's output format is OpenAI's json_schema response format. */
export function outputFormatToIR(format: Obj, req: GenerationRequest, cx: IRContext): void {
  if (cx.model.family === 'anthropic') return carry(req, 'anthropic', 'output_format', format)
  // fitted: the messages encoder takes the nulls that adds out of the answer (answer-nulls.ts)
  const rf = claudeFormat(format, true)
  if (!rf) return
  req.responseFormat = rf
  cx.compat.push('output_format->response_format', ...strictLost(rf, 'output_format'))
}

/**
 * Anthropic's output format is always strict; one whose schema OpenAI's strict mode cannot take
 * goes without it (OpenAI follows the schema without the guarantee), and that is named as a
 * strict tool's loss is (`tools[].strict`).
 */
const strictLost = (rf: GenerationRequest['responseFormat'], param: string): string[] => (rf?.type === 'json_schema' && rf.strict === false ? [`${param}.strict`] : [])

/**
 * `output_config`: as it came for a Claude model; for a GPT model its effort is OpenAI's
 * reasoning effort and its JSON-schema format the json_schema response format, in every mode
 * (the Anthropic SDK's `messages.parse` asks for structured output this way).
 */
export function outputConfigToIR(config: Obj, req: GenerationRequest, cx: IRContext): void {
  if (cx.model.family === 'anthropic') return carry(req, 'anthropic', 'output_config', config)
  const c = claudeOutputConfig(config, true)
  if (!c) return
  if (c.reasoning) reasoningOf(req).effort = c.reasoning.effort
  if (c.responseFormat) req.responseFormat = c.responseFormat
  cx.compat.push(`output_config->${[c.reasoning && 'reasoning_effort', c.responseFormat && 'response_format'].filter(Boolean).join('+')}`, ...strictLost(c.responseFormat, 'output_config.format'))
}

/** `metadata`: kept whole, and its `user_id` is the end user (a GPT model's safety_identifier). */
export function metadataToIR(metadata: Obj, req: GenerationRequest, cx: IRContext): void {
  req.metadata = metadata
  if (typeof metadata.user_id !== 'string') return
  if (cx.model.family === 'openai') userIdToSafetyIdentifier(metadata.user_id, req)
  else req.user = metadata.user_id
}
