// IR GenerationRequest → Anthropic messages body + the beta tokens it needs. Pure; a
// request Anthropic would reject for a reason the gateway can see is a 400 here.
import { takesBothSamplers, takesForcedChoice, takesFormat, takesSamplers, takesSpeed } from '../../routing/claude-models.ts'
import { replyChoice, replyTool, withoutFormat } from './reply-tool.ts'
import { carriedClaudeFormat } from '../../routing/translate.ts'
import { defaultMaxTokens, type CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, MediaSource, Message, Part } from '../../ir/types.ts'
import { badRequest, checkToolChoice, parseArguments } from '../checks.ts'
import { IMAGE_TYPES as IMAGES } from '../../media/inline.ts'
import { prefilled, refusesThinking, thinkingPlan, thinks, withoutThinking, type ThinkingPlan } from './thinking.ts'
import { claudeSchema } from './schema.ts'
import { offersSearch, webSearchTool } from './web-search.ts'
import { anthropicSearchBlocks, keptBlocks, MOCK_SEARCH_ID } from '../../ir/kept-search.ts'
import { hiddenBounds } from '../../http/hidden-json.ts'
import type { PartBounds } from '../../http/parts.ts'

type Json = Record<string, unknown>

export const FILES_BETA = 'files-api-2025-04-14'


/**
 * Tool ids must match ^[a-zA-Z0-9_-]+$. One mapper per request rewrites a
 * tool_use id and every tool_result pointing at it the same way; two different ids that
 * clean up to the same text are kept apart with a suffix.
 */
export function toolIdMapper(): (id: string) => string {
  const seen = new Map<string, string>()
  const taken = new Set<string>()
  return (id) => {
    const hit = seen.get(id)
    if (hit) return hit
    const base = id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu_gateway'
    let out = base
    for (let n = 2; taken.has(out); n++) out = `${base}_${n}`
    seen.set(id, out)
    taken.add(out)
    return out
  }
}

function source(s: MediaSource, where: string, betas: Set<string>): Json {
  switch (s.kind) {
    case 'base64':
      return { type: 'base64', media_type: s.mediaType, data: s.data }
    case 'url':
      return { type: 'url', url: s.url }
    case 'text':
      return { type: 'text', media_type: s.mediaType || 'text/plain', data: s.data }
    case 'file':
      // A file reference only works upstream with the files beta.
      betas.add(FILES_BETA)
      return { type: 'file', file_id: s.fileId }
    default:
      throw badRequest(`${where}: unknown media source`)
  }
}

/** The image formats Claude takes as base64. */
const IMAGE_TYPES: ReadonlySet<string> = new Set(IMAGES)
const clipType = (t: string) => JSON.stringify(t.slice(0, 64))

const withCache = (block: Json, cacheControl: unknown): Json => (cacheControl === undefined ? block : { ...block, cache_control: cacheControl })

/** What encoding one request's blocks shares: its tool ids, the betas its blocks need, what its tool calls' arguments may still hold. */
interface Blocks {
  ids: (id: string) => string
  betas: Set<string>
  args: PartBounds
  /** Signed thinking stays behind (another model's: a fallback's), and whether any did. */
  unsigned?: { dropped: boolean }
}

/** One IR part → one Anthropic block, or nothing for parts Anthropic must not see. */
function block(p: Part, where: string, cx: Blocks): Json | undefined {
  const { ids, betas } = cx
  switch (p.type) {
    case 'text':
      // Anthropic refuses an empty text block (an OpenAI `content: ""` beside tool calls), and one
      // of whitespace only where its message has no other text (a reply of "\n\n" before tool
      // calls, sent back: the thread could go no further); whitespace alone says nothing
      return p.text.trim() === '' ? undefined : withCache({ type: 'text', text: p.text }, p.cacheControl)
    case 'image':
      if (p.source.kind === 'text') throw badRequest(`${where}: an image cannot have a text source`)
      if (p.source.kind === 'base64' && !IMAGE_TYPES.has(p.source.mediaType.toLowerCase())) throw badRequest(`${p.source.at ?? where}: ${clipType(p.source.mediaType)} is not an image format Claude takes (PNG, JPEG, GIF, WebP)`)
      return withCache({ type: 'image', source: source(p.source, where, betas) }, p.cacheControl)
    case 'document': {
      // inline bytes as Claude takes them: a base64 document is a PDF; an image is an image
      // block, text a text source (a file id or URL is sorted out so when it is fetched)
      if (p.source.kind === 'base64' && p.source.mediaType.toLowerCase() !== 'application/pdf') {
        const t = p.source.mediaType.toLowerCase()
        if (IMAGE_TYPES.has(t)) return withCache({ type: 'image', source: { type: 'base64', media_type: t, data: p.source.data } }, p.cacheControl)
        if (!t.startsWith('text/')) throw badRequest(`${p.source.at ?? where}: a ${clipType(t)} document cannot go to a Claude model (a PDF, text or an image can)`)
        const text: Json = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(p.source.data, 'base64').toString('utf8') } }
        if (p.title !== undefined) text.title = p.title
        return withCache(text, p.cacheControl)
      }
      const d: Json = { type: 'document', source: source(p.source, where, betas) }
      if (p.title !== undefined) d.title = p.title
      return withCache(d, p.cacheControl)
    }
    case 'tool-call':
      return { type: 'tool_use', id: ids(p.id), name: p.name, input: parseArguments(p.arguments, p.at ?? where, cx.args), ...p.providerData?.anthropic }
    case 'tool-result': {
      const r: Json = { type: 'tool_result', tool_use_id: ids(p.toolCallId) }
      if (typeof p.content === 'string') r.content = p.content
      else r.content = p.content.map((c, i) => block(c, `${where}.content[${i}]`, cx)).filter((b) => b !== undefined)
      if (p.isError) r.is_error = true
      return withCache(r, p.cacheControl)
    }
    case 'reasoning':
      // Echoed byte for byte; reasoning without Anthropic's signature came from
      // another provider and cannot be verified upstream, so it stays behind; as does a fallback
      // model's thread of the named model's thinking (its signature is that model's alone)
      if (cx.unsigned && (p.redacted !== undefined || p.signature !== undefined)) {
        cx.unsigned.dropped = true
        return undefined
      }
      if (p.redacted !== undefined) return { type: 'redacted_thinking', data: p.redacted }
      if (p.signature !== undefined) return { type: 'thinking', thinking: p.text, signature: p.signature }
      return undefined
  }
}

interface Turn {
  role: 'user' | 'assistant'
  content: Json[]
}

/**
 * A web search Claude ran in an earlier turn, as it sent it: its server_tool_use and its result
 * (the pages encrypted), so it still has what it found. Only in an assistant turn, with the
 * search's blocks kept (a finished search of Claude's own), and while the request offers the web
 * search tool (the blocks are the tool's); else left out, as a search of another model's is, and
 * one of the built-in mock's.
 */
function searchAgain(p: Extract<Part, { type: 'web-search' }>, role: Message['role'], searches: boolean): Json[] {
  const kept = searches && role === 'assistant' ? keptBlocks(p) : undefined
  return kept && !kept.id.startsWith(MOCK_SEARCH_ID) ? anthropicSearchBlocks(kept) : []
}

/**
 * Tool results go in a user turn right after the assistant's tool_use turn, all of them in
 * ONE turn and ahead of any other content of that turn; consecutive turns of the
 * same role are merged.
 */
function turns(messages: Message[], cx: Blocks, searches: boolean): { turns: Turn[]; system: Json[] } {
  const out: Turn[] = []
  const system: Json[] = []
  messages.forEach((m, i) => {
    const where = `messages[${i}]`
    const blocks = m.content.flatMap((p, k) => (p.type === 'web-search' ? searchAgain(p, m.role, searches) : [block(p, `${where}.content[${k}]`, cx)])).filter((b): b is Json => b !== undefined)
    if (m.role === 'system') {
      // Anthropic has one system prompt; a system message mid-conversation joins it.
      system.push(...blocks.filter((b) => b.type === 'text'))
      return
    }
    if (blocks.length === 0) return
    const role = m.role === 'assistant' ? 'assistant' : 'user'
    const prev = out[out.length - 1]
    if (prev && prev.role === role) prev.content.push(...blocks)
    else out.push({ role, content: blocks })
  })
  for (const t of out) {
    if (t.role !== 'user') continue
    const results = t.content.filter((b) => b.type === 'tool_result')
    if (results.length) t.content = [...results, ...t.content.filter((b) => b.type !== 'tool_result')]
  }
  return { turns: out, system }
}

/**
 * A conversation that ends on an assistant turn has Claude write on from it (a prefill), and
 * Claude refuses one whose text ends in whitespace: that end is trimmed, as the libraries that
 * call Claude do.
 */
function trimPrefill(turns: Turn[]): void {
  if (!prefilled(turns)) return
  const content = turns.at(-1)!.content
  const b = content.at(-1)!
  content[content.length - 1] = { ...b, text: String(b.text).trimEnd() }
}

/**
 * A tool's parameters as Claude's `input_schema`, whose root must say `type: "object"`: OpenAI
 * takes `parameters: {}` (any arguments), which Claude would refuse whole. A root of another
 * type goes as it came, for Claude to judge.
 */
const inputSchema = (params: Json): Json => ('type' in params ? params : { type: 'object', ...params })

/** An image with a detail other than auto, here or in a tool result's content. */
const detailed = (p: Part): boolean =>
  (p.type === 'image' && p.detail !== undefined && p.detail !== 'auto') || (p.type === 'tool-result' && Array.isArray(p.content) && p.content.some(detailed))

export interface AnthropicRequest {
  body: Json
  /** Tokens for the `anthropic-beta` header. */
  betas: string[]
  /** Parameters the client set that the body leaves out (thinking forbids them), by their names. */
  leftOut: string[]
  /** The tool whose input is the reply (a JSON schema reply from a model without structured output: reply-tool.ts). */
  replyTool?: string
}

/**
 * `fallback`: the model is a fallback of the one the client named, whose thinking the thread
 * holds: a thinking block's signature is bound to the model that made it ("Invalid `signature`
 * in `thinking` block" on any other), so the blocks stay behind, named.
 */
export function toAnthropicMessages(req: GenerationRequest, model: CatalogModel, fallback = false): AnthropicRequest {
  checkToolChoice(req)
  // a JSON schema is Claude's structured output (`output_config.format`), or the input of a tool
  // the model is made to call where it has none (reply-tool.ts), a Messages client's own format
  // too; JSON mode has no counterpart
  const own = req.providerData?.anthropic?.output_config
  const rf = req.responseFormat ?? (takesFormat(model.upstreamId) ? undefined : carriedClaudeFormat(own))
  if (rf && rf.type !== 'text' && (rf.type !== 'json_schema' || !rf.schema)) {
    throw badRequest(`response_format ${rf.type}${rf.type === 'json_schema' ? ' without a schema' : ''} is not supported for Anthropic models (they take a json_schema format with its schema)`)
  }
  // the models from Opus 4.7 on take no sampler: whatever is asked is left out, and named below
  const samplers = takesSamplers(model.upstreamId)
  // OpenAI's range is 0–2: past 1 Anthropic refuses it, said here before the call
  if (samplers && req.temperature !== undefined && req.temperature > 1) throw badRequest(`temperature: Claude-family models take 0 to 1; got ${req.temperature}`)
  // Anthropic refuses a stop sequence of whitespace only (a chat client's "\n" among them)
  const blank = req.stop?.findIndex((s) => s.trim() === '') ?? -1
  if (blank >= 0) throw badRequest(`stop[${blank}]: Claude-family models take no stop sequence that is empty or whitespace only; got ${JSON.stringify(req.stop![blank]).slice(0, 40)}`)
  const betas = new Set(req.betas ?? [])
  const cx: Blocks = { ids: toolIdMapper(), betas, args: hiddenBounds(), ...(fallback ? { unsigned: { dropped: false } } : {}) }
  const conv = turns(req.messages, cx, offersSearch(req))
  // a last user turn of empty text only (an OpenAI client may send one) has no block to go as:
  // without it the conversation ends on the assistant's turn, which Claude would go on writing
  const asks = req.messages.findLast((m) => m.role !== 'system')
  if (asks !== undefined && asks.role !== 'assistant' && conv.turns.at(-1)?.role !== 'user') {
    throw badRequest("messages: the last user turn holds only empty text (or whitespace), which Claude-family models refuse (left out, the model would go on with the assistant's turn before it); send the turn with some text")
  }
  // a request whose every turn held nothing Claude takes (empty or whitespace text only, beside a
  // system prompt) has no turn left: Claude takes none without one
  if (conv.turns.length === 0) throw badRequest('messages: nothing to send as a user or assistant turn (a system prompt alone, or turns of empty text or whitespace only), and Claude-family models need at least one; send a user turn with some text')
  trimPrefill(conv.turns)
  const system = [
    ...(req.system ?? []).map((p, i) => block(p, `system[${i}]`, cx)).filter((b): b is Json => b !== undefined),
    ...conv.system,
  ]

  // a tool loop's last call back without its thinking, or a prefill: neither goes with thinking on
  const lost = refusesThinking(conv.turns)
  const asked = req.maxTokens ?? defaultMaxTokens(model)
  const planned = thinkingPlan(req, model, asked)
  const plan: ThinkingPlan = lost ? withoutThinking(planned, asked) : planned
  const body: Json = { model: model.upstreamId, max_tokens: plan.maxTokens, messages: conv.turns }
  if (system.length) body.system = system
  if (req.stop?.length) body.stop_sequences = req.stop
  // Anthropic's metadata takes only user_id; other keys (chat `metadata`) have no home there.
  const userId = req.user ?? (typeof req.metadata?.user_id === 'string' ? req.metadata.user_id : undefined)
  if (userId !== undefined) body.metadata = { user_id: userId }
  const reply = rf?.type === 'json_schema' && rf.schema && !takesFormat(model.upstreamId) ? replyTool(rf, req.tools, model.id) : undefined
  if (req.tools?.length || reply) {
    body.tools = (req.tools ?? []).map((t) => {
      const tool: Json = { name: t.name, input_schema: inputSchema(t.parameters) }
      if (t.description !== undefined) tool.description = t.description
      return { ...withCache(tool, t.cacheControl), ...t.providerData?.anthropic }
    })
    if (reply) (body.tools as Json[]).push(reply.tool)
  }
  // the web search Anthropic runs itself, beside the client's tools
  if (req.webSearch) body.tools = [...((body.tools as Json[] | undefined) ?? []), webSearchTool(req.webSearch)]
  const c = req.toolChoice
  const disableParallel = req.parallelToolCalls === false || (c && 'disableParallel' in c && c.disableParallel === true)
  const leftOut: string[] = []
  if (cx.unsigned?.dropped) leftOut.push('messages.thinking')
  // what Claude has no place for, named rather than dropped without a word: a message's
  // author name, a tool's strict schema (its arguments are not held to the schema), an image's
  // detail
  if (req.messages.some((m) => m.name)) leftOut.push('messages[].name')
  if (req.tools?.some((t) => t.strict === true)) leftOut.push('tools[].strict')
  if (req.messages.some((m) => m.content.some(detailed))) leftOut.push('detail')
  // thinking asked for: as planned, or as the client gave it (adaptive thinking carried as it came);
  // on unless a tool loop's last call came back without its thinking or the request is a prefill,
  // and then named, as the rest
  const asksThinking = planned.thinking !== undefined || thinks(req.providerData?.anthropic?.thinking)
  const thinking = asksThinking && !lost
  if (asksThinking && lost) leftOut.push('thinking')
  if (req.tools?.length || reply) {
    const asked: Json | undefined = reply
      ? replyChoice(c, reply.name, (req.tools?.length ?? 0) > 0)
      : !c ? undefined : c.type === 'required' ? { type: 'any' } : c.type === 'tool' ? { type: 'tool', name: c.name } : { type: c.type }
    // Thinking forbids a forced tool choice, as the models that think always do: it becomes auto
    // (the tools stay available), and is named where the client forced it (a reply tool offered
    // alone is then the model's to call)
    const forced = asked?.type === 'any' || asked?.type === 'tool'
    const unforced = forced && (thinking || !takesForcedChoice(model.upstreamId))
    if (unforced && (c?.type === 'required' || c?.type === 'tool')) leftOut.push('tool_choice')
    const choice: Json = !asked || unforced ? { type: 'auto' } : asked
    if (disableParallel && choice.type !== 'none') choice.disable_parallel_tool_use = true
    if (asked || disableParallel) body.tool_choice = choice
  }
  if (thinking && plan.thinking) body.thinking = plan.thinking
  if (thinking && plan.budgetAsEffort) leftOut.push('thinking.budget_tokens->output_config.effort')
  if (!samplers) {
    // "`temperature` is deprecated for this model.": each sampler asked for is left out, and named
    if (req.temperature !== undefined) leftOut.push('temperature')
    if (req.topP !== undefined) leftOut.push('top_p')
    if (req.topK !== undefined) leftOut.push('top_k')
  } else if (thinking) {
    // Thinking forbids temperature and top_k, and top_p below 0.95: those are left out, and named.
    if (req.topP !== undefined && req.topP >= 0.95) body.top_p = req.topP
    if (req.temperature !== undefined) leftOut.push('temperature')
    if (req.topP !== undefined && req.topP < 0.95) leftOut.push('top_p')
    if (req.topK !== undefined) leftOut.push('top_k')
  } else {
    if (req.temperature !== undefined) body.temperature = req.temperature
    // Claude's models since Opus 4.1 refuse temperature and top_p together (an OpenAI client may
    // send both: LlamaIndex always does): top_p is left out, and named
    if (req.topP !== undefined) {
      if (req.temperature !== undefined && !takesBothSamplers(model.upstreamId)) leftOut.push('top_p')
      else body.top_p = req.topP
    }
    if (req.topK !== undefined) body.top_k = req.topK
  }
  const config: Json = {}
  // named as what Claude's structured output became (the chat surface names response_format's way to it)
  if (reply) leftOut.push('output_config.format->tool')
  else if (rf?.type === 'json_schema' && rf.schema) {
    // what Claude does not compile moves into descriptions (schema.ts), each keyword named
    const held = claudeSchema(rf.schema)
    config.format = { type: 'json_schema', schema: held.schema }
    for (const k of held.moved) leftOut.push(`schema.${k}->description`)
  }
  if (plan.effort) config.effort = plan.effort
  // the client's own output_config (carried as it came) adds to the gateway's, and wins a conflict
  if (own !== null && typeof own === 'object' && !Array.isArray(own)) Object.assign(config, reply ? withoutFormat(own as Json) : own)
  if (Object.keys(config).length > 0) body.output_config = config
  if (req.stream) body.stream = true
  const out = { ...body, ...req.providerData?.anthropic }
  if (body.output_config) out.output_config = body.output_config
  else if (reply) delete out.output_config
  // a budget's thinking carried for its display, on a model that takes no budget: adaptive, its display kept
  const carried = req.providerData?.anthropic?.thinking as { type?: unknown; display?: unknown } | undefined
  if (plan.thinking?.type === 'adaptive' && carried?.type === 'enabled') out.thinking = { ...plan.thinking, ...(carried.display !== undefined ? { display: carried.display } : {}) }
  // a thinking setting carried as it came (adaptive) goes too
  if (lost) delete out.thinking
  // a Messages body's fast mode goes to a fallback only where it has it, as on the pass-through
  if (fallback && out.speed !== undefined && !takesSpeed(model.upstreamId)) {
    delete out.speed
    leftOut.push('speed')
  }
  return { body: out, betas: [...betas], leftOut, ...(reply ? { replyTool: reply.name } : {}) }
}
