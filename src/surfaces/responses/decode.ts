// A checked turn → IR, for models the Responses upstream does not serve (Claude-family
// models, the mock). Items become IR messages; tools that are not functions are mapped
// where the IR can carry them (a `custom` tool becomes a function taking one string) and
// otherwise dropped and named in the compat header.
import type { CatalogModel } from '../../config/catalog.ts'
import { badRequest } from '../../http/errors.ts'
import { hiddenBounds } from '../../http/hidden-json.ts'
import type { GenerationRequest, Message, Part, ReasoningEffort, Tool, ToolChoice, WebSearch } from '../../ir/types.ts'
import { mediaSource } from '../chat/decode.ts'
import { customArguments, customToolParameters } from '../custom-tools.ts'
import { breakpointCache, searchesThroughIR } from '../openai-options.ts'
import { checkTurns } from './call-answers.ts'
import { outputPart, type ContentPart, type Item } from './items.ts'
import { responseOfItem, unknownGatewayItem } from './item-ids.ts'
import { openReasoning } from './reasoning.ts'
import { searchOf } from './held-search.ts'
import { allowedFlat, flatName, openTools, type OpenedTools } from './namespaces.ts'
import type { Turn } from './turn.ts'
import { isCallable, type ResponsesTool, type ResponsesToolChoice } from './tools.ts'
import { isObj } from '../../lib/json.ts'
import { searchesLive, webSearchOf } from './web-search.ts'

type Obj = Record<string, unknown>


/** Anthropic's MCP connector (what `mcp_servers` becomes for a Claude model). */
export const MCP_BETA = 'mcp-client-2025-04-04'

/** A content part → an IR part, with OpenAI's cache breakpoint as the part's cache control (for a Claude model). */
function userPart(p: ContentPart, at: string): Part | undefined {
  const part = irPart(p, at)
  const cache = breakpointCache(p.prompt_cache_breakpoint)
  if (part && cache) (part as { cacheControl?: unknown }).cacheControl = cache
  return part
}

function irPart(p: ContentPart, at: string): Part | undefined {
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: p.text }
    case 'refusal':
      return { type: 'text', text: String(p.refusal ?? '') }
    case 'input_image': {
      const source = p.file_id !== undefined ? { kind: 'file' as const, fileId: p.file_id, at: `${at}.file_id` } : mediaSource(p.image_url, `${at}.image_url`)
      return { type: 'image', source, detail: p.detail === 'low' || p.detail === 'high' ? p.detail : undefined }
    }
    case 'input_file': {
      const title = typeof p.filename === 'string' ? p.filename : undefined
      if (typeof p.file_id === 'string') return { type: 'document', source: { kind: 'file', fileId: p.file_id, at: `${at}.file_id` }, title }
      if (typeof p.file_data === 'string') return { type: 'document', source: mediaSource(p.file_data, `${at}.file_data`), title }
      if (typeof p.file_url === 'string') return { type: 'document', source: { kind: 'url', url: p.file_url, at: `${at}.file_url` } }
      return undefined
    }
    case 'input_audio':
      // the translation has no audio to carry it in: refused as chat's input_audio is, never dropped
      throw badRequest(`${at}: input_audio parts are not supported here: only a GPT model's own Responses API takes them`)
    default:
      return undefined
  }
}

/** Content parts → IR parts; a part the IR path cannot read (undefined) is left out. */
function parts(content: string | (ContentPart | undefined)[], at: string): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return content.flatMap((p, i) => (p ? userPart(p, `${at}[${i}]`) : undefined) ?? [])
}

/** A Claude turn's signed (or redacted) thinking: that model begins every turn of a tool loop with it. */
const thoughtBySigned = (m: Message | undefined): boolean =>
  m?.role === 'assistant' && m.content.some((p) => p.type === 'reasoning' && (p.signature !== undefined || p.redacted !== undefined))

/**
 * Items → IR messages: consecutive assistant-side items join one assistant turn, tool outputs one
 * tool turn. A call that follows a tool output with no thinking of its own, where the turn before
 * began with a Claude model's signed thinking, is one of that turn's parallel calls sent back
 * interleaved with their outputs (call, output, call, output): a turn of its own it would lack the
 * thinking Claude asks of the last turn of a tool loop, so it joins that turn, its output the tool turn.
 */
export function itemsToMessages(items: Item[], at = 'input', opened?: OpenedTools, modelId = 'the model', places?: Map<Part, string>): Message[] {
  // a call of a namespace's tool goes under the name that tool is offered by
  const nameOf = (it: Item & { name: string }) => (opened ? flatName(opened, it) : it.name)
  const out: Message[] = []
  const envelopes = hiddenBounds()
  const push = (role: Message['role'], part: Part, where?: string) => {
    if (where !== undefined) places?.set(part, where)
    const last = out[out.length - 1]
    if (last?.role === role && (role === 'assistant' || role === 'tool')) last.content.push(part)
    else if (part.type === 'tool-call' && last?.role === 'tool' && thoughtBySigned(out[out.length - 2])) out[out.length - 2]!.content.push(part)
    else out.push({ role, content: [part] })
  }
  items.forEach((it, i) => {
    const where = `${at}[${i}]`
    switch (it.type) {
      case 'message': {
        const role = it.role === 'developer' || it.role === 'system' ? 'system' : it.role
        const content = parts(it.content, `${where}.content`)
        if (content.length === 0) return
        if (role === 'assistant') for (const p of content) push('assistant', p)
        else out.push({ role, content })
        return
      }
      case 'function_call':
        return push('assistant', { type: 'tool-call', id: it.call_id, name: nameOf(it), arguments: it.arguments, at: `${where}.arguments` }, where)
      case 'custom_tool_call':
        return push('assistant', { type: 'tool-call', id: it.call_id, name: nameOf(it), arguments: customArguments(it.input), at: `${where}.input` }, where)
      case 'function_call_output':
      case 'custom_tool_call_output': {
        // one handed back to a program has no call here to answer: the IR's results each name theirs
        if (it.call_id === undefined) throw badRequest(`${where}.call_id: required for model ${modelId}, whose tool results must each name the call they answer`)
        const content = typeof it.output === 'string' ? it.output : parts(it.output.map(outputPart), `${where}.output`)
        return push('tool', { type: 'tool-result', toolCallId: it.call_id, content }, where)
      }
      case 'reasoning': {
        const r = openReasoning(it, envelopes, where)
        if (r) push('assistant', r)
        return
      }
      case 'web_search_call': {
        // a Claude model's search of an earlier turn, with what it found where the thread kept it
        const search = searchOf(it)
        if (search) push('assistant', search)
        return
      }
      case 'item_reference':
        // one the gateway's store held was replaced by its item (validate.ts). One in its form
        // that it did not find (another key's, a store: false reply's, deleted) is refused; one
        // of OpenAI's store, or made before items named their response, is left out as ever
        if (at !== 'input' || typeof it.id !== 'string' || responseOfItem(it.id) === undefined) return
        throw unknownGatewayItem(where, it.id)
      // Hosted-tool records mean something only to OpenAI's own store.
      default:
        return
    }
  })
  return out
}

/**
 * OpenAI's hosted and client-side tool types the IR has no form for (Codex sends tool_search and
 * namespace): left out and named in the compat header by type, the gateway's own words, never
 * the client's text.
 */
export const HOSTED_TOOLS: ReadonlySet<unknown> = new Set([
  'web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26', 'file_search',
  'code_interpreter', 'image_generation', 'computer', 'computer_use_preview', 'computer_use', 'mcp', 'local_shell', 'shell',
  'apply_patch', 'tool_search', 'namespace', 'programmatic_tool_calling',
])

/**
 * Function and custom tools → IR tools; hosted tools are dropped and named. Any other type is a
 * 400 naming `tools[i].type` (`where` names each tool's place) for a model of the other family;
 * on the surface's own family (the mock) it is dropped and named by its place.
 */
export function irTools(tools: ResponsesTool[], where: (i: number) => string, model?: CatalogModel, maxToolCalls?: unknown): { tools: Tool[]; dropped: string[]; webSearch?: WebSearch } {
  const out: Tool[] = []
  const dropped: string[] = []
  let webSearch: WebSearch | undefined
  for (const [i, t] of tools.entries()) {
    if (isCallable(t)) {
      const description = typeof t.description === 'string' ? t.description : undefined
      if (t.type === 'function') out.push({ name: t.name, description, parameters: isObj(t.parameters) ? t.parameters : { type: 'object', properties: {} }, strict: t.strict === true ? true : undefined })
      else out.push({ name: t.name, description, parameters: customToolParameters(t.name, t.format) })
    } else if (model && searchesThroughIR(model) && searchesLive(t) && webSearch === undefined) {
      // Claude searches the web too (web-search.ts), and so does the mock
      const w = webSearchOf(t, maxToolCalls)
      webSearch = w.search
      dropped.push(...w.leftOut)
    } else if (typeof t.type === 'string' && HOSTED_TOOLS.has(t.type)) {
      dropped.push(`tools.${t.type}`)
    } else if (model?.family === 'anthropic') {
      throw badRequest(`${where(i)}.type: ${JSON.stringify(String(t.type)).slice(0, 80)} is not a tool type the gateway can translate for ${model.id}; it carries function and custom tools (and names the hosted ones it leaves out)`)
    } else {
      dropped.push(`${where(i)}`)
    }
  }
  return webSearch ? { tools: out, dropped, webSearch } : { tools: out, dropped }
}

/** The tools an `allowed_tools` choice lists (the IR has no list of allowed ones: the others are not offered), by the names they are offered by, or undefined. */
function allowedNames(c: ResponsesToolChoice | undefined, opened: OpenedTools): Set<string> | undefined {
  if (typeof c !== 'object' || c.type !== 'allowed_tools' || !Array.isArray(c.tools)) return undefined
  return new Set(c.tools.flatMap((t) => (isObj(t) ? allowedFlat(opened, t) : [])))
}

function irToolChoice(c: ResponsesToolChoice | undefined, names: Set<string>, opened: OpenedTools): ToolChoice | undefined {
  if (typeof c === 'string') return { type: c }
  if (c?.type === 'allowed_tools') return c.mode === 'required' ? { type: 'required' } : { type: 'auto' }
  if (!c || typeof c.name !== 'string') return undefined
  // a namespace's tool by the name it is offered by
  const name = flatName(opened, { name: c.name, namespace: (c as { namespace?: unknown }).namespace })
  return names.has(name) ? { type: 'tool', name } : undefined
}

/** `mcp_servers` for Anthropic's MCP connector. */
export function mcpConnector(servers: Obj[]): Obj[] {
  return servers.map((s) => {
    const out: Obj = { type: 'url', url: s.url, name: s.name }
    if (typeof s.authorization_token === 'string') out.authorization_token = s.authorization_token
    if (isObj(s.tool_configuration)) out.tool_configuration = s.tool_configuration
    return out
  })
}

/** Input items that ask for something of this turn (compact the context, change settings), which the IR path cannot do: left out, and named. */
const ASKING_ITEMS: ReadonlySet<string> = new Set(['compaction_trigger', 'configuration_update'])

/**
 * What a turn's reshaped parameters become in the IR: its items (the thread's first), its
 * instructions, tools and tool choice, reasoning and output format. The table's rows add the
 * rest (params.ts). `dropped` collects what the IR could not carry.
 */
export function turnStart(body: { model?: string; text?: unknown }, turn: Turn, model: CatalogModel, dropped: string[]): GenerationRequest {
  const opened = openTools(turn)
  // the input's calls and outputs by the client's item, to name one the turns cannot carry
  const places = new Map<Part, string>()
  const messages = [...itemsToMessages(turn.history, 'previous_response_id', opened, model.id), ...itemsToMessages(turn.items, 'input', opened, model.id, places)]
  checkTurns(messages, places, model.id)
  for (const it of turn.items) if (ASKING_ITEMS.has(it.type)) dropped.push(`input.${it.type}`)
  // a reference to OpenAI's own store (or one made before items named their reply): left out, and named
  if (turn.items.some((it) => it.type === 'item_reference')) dropped.push('input.item_reference')
  const req: GenerationRequest = { model: body.model ?? model.id, messages, stream: false }
  if (turn.instructions) req.system = [{ type: 'text', text: turn.instructions }]

  const t = irTools(opened.tools.map((x) => x.tool), (i) => opened.tools[i]!.at, model, turn.maxToolCalls)
  dropped.push(...t.dropped, ...opened.dropped)
  if (t.webSearch) req.webSearch = t.webSearch
  const allowed = allowedNames(turn.toolChoice, opened)
  const offered = allowed ? t.tools.filter((x) => allowed.has(x.name)) : t.tools
  if (offered.length > 0) {
    req.tools = offered
    const choice = irToolChoice(turn.toolChoice, new Set(offered.map((x) => x.name)), opened)
    if (choice) req.toolChoice = choice
  }
  // a choice that asked for a tool (a hosted one, or any when none is left) and did not carry
  // over: the model may answer without a call, so it is named
  const asked = turn.toolChoice !== undefined && turn.toolChoice !== 'auto' && turn.toolChoice !== 'none'
  if (asked && !req.toolChoice) dropped.push('tool_choice')

  if (turn.effort || turn.summary) {
    req.reasoning = {}
    if (turn.effort) req.reasoning.effort = turn.effort as ReasoningEffort
    if (turn.summary) {
      req.reasoning.summary = turn.summary
      // Summaries are the model's thinking shown: a Claude model thinks only when asked to.
      req.reasoning.effort ??= 'medium'
    }
  }

  const f = turn.format
  if (f?.type === 'json_schema') req.responseFormat = { type: 'json_schema', name: f.name, schema: f.schema, strict: f.strict ?? undefined, description: f.description }
  else if (f?.type === 'json_object' && model.family === 'openai') req.responseFormat = { type: 'json_object' }
  // Anthropic has no JSON mode without a schema: left out, and said so
  else if (f?.type === 'json_object') dropped.push('text.format')
  if (model.family === 'anthropic' && isObj(body.text) && body.text.verbosity !== undefined) dropped.push('text.verbosity')
  return req
}
