// A checked messages-style body → IR. Pure. Parameters the family rules
// removed are gone and their counterparts merged in, as in chat's toIR. What the IR has no
// field for rides in `providerData.anthropic`, so a translated call to a Claude-family
// upstream still sends it and an OpenAI-family upstream never sees it (STYLE habit 8).
import { own } from '../../lib/own.ts'
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, MediaSource, Message, Part, ReasoningEffort, Role, Tool, ToolChoice } from '../../ir/types.ts'
import { directToIR, type RulesOutcome } from '../../routing/params.ts'
import { PARAMS, type MessagesBody } from './params.ts'
import type { MessagesBlock, MessagesSource } from './schema.ts'
import { isServerTool } from './validate.ts'
import { isObj } from '../../lib/json.ts'

type Body = Record<string, unknown>
type Obj = Record<string, unknown>


function withCache<P extends Part>(part: P, wire: { cache_control?: unknown }): P {
  if (wire.cache_control != null) (part as { cacheControl?: unknown }).cacheControl = wire.cache_control
  return part
}

const textOf = (blocks: unknown[]): string =>
  blocks.map((b) => (isObj(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('')

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
      return { kind: 'text', mediaType: 'text/plain', data: typeof s.content === 'string' ? s.content : textOf(s.content) }
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
      // them. A Claude-family model gets the body untouched (pass-through);
      // any other model continues from the text around them.
      return undefined
  }
}

function content(c: unknown): Part[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }]
  return (c as MessagesBlock[]).map(part).filter((p): p is Part => p !== undefined)
}

/**
 * Messages in order. `role: "system"` messages stay system-role messages where they stand
 * (Claude Code sends one after the user turn); a `tool` message naming its call is that
 * call's result.
 */
function messages(wire: Obj[]): Message[] {
  const out: Message[] = []
  for (const m of wire) {
    const id = (m.tool_use_id ?? m.tool_call_id) as string | undefined
    if (m.role === 'tool' && id !== undefined) {
      const c = typeof m.content === 'string' ? m.content : content(m.content)
      out.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, content: c }] })
      continue
    }
    const parts = content(m.content)
    // A turn made only of server-tool blocks has nothing left; an empty turn is not sent on.
    if (parts.length === 0 && Array.isArray(m.content) && m.content.length > 0) continue
    out.push({ role: m.role as Role, content: parts })
  }
  return out
}

/** Own fields of a custom tool that the IR has no place for (defer_loading, strict, input_examples …). */
const TOOL_IR_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control'])

function tools(wire: Obj[]): Tool[] {
  return wire.filter((t) => !isServerTool(t)).map((t) => {
    const tool: Tool = { name: t.name as string, parameters: t.input_schema as Obj }
    if (typeof t.description === 'string') tool.description = t.description
    if (typeof t.strict === 'boolean') tool.strict = t.strict
    if (t.cache_control != null) tool.cacheControl = t.cache_control
    const extra: Obj = {}
    for (const k of Object.keys(t)) if (!TOOL_IR_FIELDS.has(k) && t[k] !== undefined) extra[k] = t[k]
    if (Object.keys(extra).length > 0) tool.providerData = { anthropic: extra }
    return tool
  })
}

const CHOICE: Record<string, ToolChoice['type']> = { auto: 'auto', none: 'none', any: 'required' }

function toolChoice(tc: unknown): ToolChoice | undefined {
  if (tc === undefined) return undefined
  if (typeof tc === 'string') return { type: own(CHOICE, tc) } as ToolChoice
  const o = tc as Obj
  const disable = o.disable_parallel_tool_use === true ? { disableParallel: true } : {}
  if (o.type === 'tool') return { type: 'tool', name: o.name as string, ...disable }
  if (o.type === 'function') return { type: 'tool', name: (o.function as Obj).name as string, ...disable }
  if (o.type === 'none') return { type: 'none' }
  return { type: CHOICE[o.type as string] as 'auto' | 'required', ...disable }
}

/**
 * Anthropic parameters with no IR field, carried to a Claude-family upstream as they are.
 * `thinking` is carried unless it is a plain `enabled` (that one is reasoning.budgetTokens).
 * Not carried: `pause_on_call_tools_start` is the gateway's own (the pipeline stops the
 * reply at the first tool_use), and for an OpenAI-family model `service_tier` (Anthropic's
 * `auto` / `standard_only` mean nothing to OpenAI's tiers) — accepted, not sent.
 */
const ANTHROPIC_CARRIED = [
  'cache_control', 'context_management', 'output_config', 'output_format', 'container', 'mcp_servers',
  'inference_geo', 'service_tier',
]

export function messagesToIR(checked: MessagesBody, model: CatalogModel, rules: RulesOutcome): GenerationRequest {
  const body: MessagesBody & Body = { ...checked }
  for (const k of rules.removed) delete body[k]
  const c = rules.counterpart
  const req: GenerationRequest = { model: body.model ?? model.id, messages: messages(body.messages as Obj[]), stream: body.stream === true }

  if (body.system !== undefined) req.system = content(body.system)
  req.maxTokens = body.max_tokens ?? c.maxTokens
  directToIR(body, PARAMS, req)
  const stop = [...(body.stop_sequences ?? []), ...(c.stop ?? [])]
  if (stop.length > 0) req.stop = stop

  const wireTools = (body.tools as Obj[] | undefined) ?? []
  const irTools = wireTools.length > 0 ? tools(wireTools) : c.tools
  if (irTools?.length) req.tools = irTools
  let choice = toolChoice(body.tool_choice) ?? c.toolChoice
  const disableParallel = body.parallel_tool_calls === false || c.disableParallel === true
  if (disableParallel) {
    req.parallelToolCalls = false
    if (choice?.type !== 'none') choice = { ...(choice ?? { type: 'auto' }), disableParallel: true } as ToolChoice
  } else if (body.parallel_tool_calls === true) req.parallelToolCalls = true
  if (choice) req.toolChoice = choice

  const reasoning = { ...c.reasoning }
  if (body.reasoning_effort !== undefined) reasoning.effort = body.reasoning_effort as ReasoningEffort
  const thinking = body.thinking as Obj | undefined
  if (thinking?.type === 'enabled') reasoning.budgetTokens = thinking.budget_tokens as number
  if (Object.keys(reasoning).length > 0) req.reasoning = reasoning

  const metadata = body.metadata
  if (metadata !== undefined) req.metadata = metadata
  const user = typeof metadata?.user_id === 'string' ? metadata.user_id : c.user
  if (user !== undefined) req.user = user
  if (body.betas !== undefined) req.betas = body.betas

  // structured output for a GPT model: Anthropic's output format is OpenAI's json_schema response format
  const format = (body.output_format ?? body.output_config?.format) as Obj | undefined | null
  if (model.family === 'openai' && format && format.type === 'json_schema') {
    req.responseFormat = { type: 'json_schema', name: 'output', schema: format.schema as Obj | undefined, strict: true }
    rules.compat.push(`${body.output_format !== undefined ? 'output_format' : 'output_config.format'}->response_format`)
  }

  if (model.family === 'anthropic') {
    const extra: Obj = {}
    for (const k of ANTHROPIC_CARRIED) if (body[k] !== undefined) extra[k] = body[k]
    if (thinking && thinking.type !== 'enabled') extra.thinking = thinking
    else if (thinking && thinking.display != null) extra.thinking = thinking
    // Server tools have no IR form: the client's tool list goes upstream as it came.
    if (wireTools.some(isServerTool)) extra.tools = wireTools
    if (Object.keys(extra).length > 0) req.providerData = { anthropic: extra }
  }
  return req
}
