// IR GenerationRequest → OpenAI chat-completions body. Pure; throws a 400 UpstreamError
// for content the chat wire cannot carry rather than dropping it.
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, Message, Part, ToolChoice } from '../../ir/types.ts'
import { badRequest, checkToolChoice } from '../checks.ts'
import { MAX_STOPS, REASONING_SAMPLING, chatResponseFormat, effortFor } from '../../routing/openai-chat.ts'

type Json = Record<string, unknown>

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`
}

/** One user-visible content part → chat content part. */
function contentPart(p: Part, where: string): Json {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text }
    case 'image': {
      const s = p.source
      const url = s.kind === 'base64' ? dataUrl(s.mediaType, s.data) : s.kind === 'url' ? s.url : undefined
      if (!url) throw badRequest(`${where}: an image from a ${s.kind} source cannot be sent to an OpenAI model`)
      return { type: 'image_url', image_url: p.detail ? { url, detail: p.detail } : { url } }
    }
    case 'document': {
      const s = p.source
      if (s.kind === 'base64') {
        const filename = p.title ?? (s.mediaType === 'application/pdf' ? 'document.pdf' : 'document')
        return { type: 'file', file: { filename, file_data: dataUrl(s.mediaType, s.data) } }
      }
      if (s.kind === 'text') return { type: 'text', text: p.title ? `${p.title}\n\n${s.data}` : s.data }
      if (s.kind === 'file') return { type: 'file', file: { file_id: s.fileId } }
      throw badRequest(`${where}: a document URL must be fetched before it can be sent to an OpenAI model`)
    }
    default:
      throw badRequest(`${where}: a ${p.type} part cannot appear in this message`)
  }
}

/** A single text part is sent as a plain string, the form every chat client produces. */
function content(parts: Part[], where: string): string | Json[] {
  if (parts.length === 1 && parts[0].type === 'text') return parts[0].text
  return parts.map((p, i) => contentPart(p, `${where}.content[${i}]`))
}

function toolResultContent(c: string | Part[], where: string): { text: string | Json[]; media: Part[] } {
  if (typeof c === 'string') return { text: c, media: [] }
  const texts = c.filter((p) => p.type === 'text' || (p.type === 'document' && p.source.kind === 'text'))
  const media = c.filter((p) => !texts.includes(p))
  const text = texts.length === 1 && texts[0].type === 'text' ? texts[0].text : texts.map((p, i) => contentPart(p, `${where}[${i}]`))
  return { text, media }
}

/**
 * A failed tool's result (`is_error`): a chat `tool` message has no field for it, so its text
 * says so, where the model reads it, rather than the failure being lost.
 */
const ERROR_MARK = 'Error: '
/** A failure that said nothing more: the word alone. */
const ERROR_ALONE = 'Error'
function errorText(text: string | Json[]): string | Json[] {
  if (text.length === 0) return ERROR_ALONE
  if (typeof text === 'string') return text.startsWith(ERROR_MARK) ? text : ERROR_MARK + text
  return [{ type: 'text', text: ERROR_MARK.trim() }, ...text]
}

const MEDIA_FOLLOW = '(the result is the media in the next user message)'
const MEDIA_OF = 'Media of the result of tool call'

/**
 * An assistant turn's text, the one string chat has for it. Adjacent text blocks are one text
 * cut (by citations) and join as they are; text on either side of a tool call is two passages,
 * which a blank line keeps apart once the calls move to `tool_calls`.
 */
function assistantText(content: Message['content']): string | null {
  let text: string | null = null
  let apart = false
  for (const p of content) {
    if (p.type !== 'text') {
      apart = text !== null
      continue
    }
    text = text === null ? p.text : text + (apart ? '\n\n' : '') + p.text
    apart = false
  }
  return text
}

function assistantMessage(m: Message, where: string): Json {
  const calls = m.content.filter((p) => p.type === 'tool-call')
  const out: Json = { role: 'assistant', content: assistantText(m.content) }
  if (calls.length) {
    out.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments || '{}' } }))
  }
  if (m.name) out.name = m.name
  // Reasoning parts are provider-tagged data the chat wire has no field for; they stay behind,
  // and so does a web search a Claude model ran (its text, which cites it, goes)
  const other = m.content.find((p) => p.type !== 'text' && p.type !== 'tool-call' && p.type !== 'reasoning' && p.type !== 'web-search')
  if (other) throw badRequest(`${where}: an assistant message cannot carry a ${other.type} part for an OpenAI model`)
  return out
}

/**
 * Tool results become `tool` messages, in order, before whatever else the same IR message
 * holds (an Anthropic-style user turn mixes both). Media in a tool result follow as a user
 * message, since chat `tool` messages carry text only: each result's media there under a line
 * naming its call, and a result of media alone says where they went (an empty `tool` content
 * is no answer the model can read, and an empty array is refused).
 */
function messages(m: Message, i: number): Json[] {
  const where = `messages[${i}]`
  if (m.role === 'assistant') {
    // a turn of Claude's thinking alone has nothing the chat wire carries, and OpenAI refuses an
    // assistant message of no content and no calls: the turn stays behind with its thinking
    const out = assistantMessage(m, where)
    return out.content === null && out.tool_calls === undefined ? [] : [out]
  }
  const out: Json[] = []
  const media: Json[] = []
  for (const p of m.content) {
    if (p.type !== 'tool-result') continue
    const r = toolResultContent(p.content, `${where}.tool_result`)
    let text = r.text
    if (r.media.length) {
      if (text.length === 0) text = MEDIA_FOLLOW
      media.push({ type: 'text', text: `${MEDIA_OF} ${p.toolCallId}:` })
      for (const part of r.media) media.push(contentPart(part, `${where}.tool_result[${media.length}]`))
    }
    out.push({ role: 'tool', tool_call_id: p.toolCallId, content: p.isError ? errorText(text) : text })
  }
  const rest = m.content.filter((p) => p.type !== 'tool-result')
  if (media.length) out.push({ role: 'user', content: media })
  if (rest.length) {
    const role = m.role === 'tool' ? 'user' : m.role
    const msg: Json = { role, content: content(rest, where) }
    if (m.name) msg.name = m.name
    out.push(msg)
  }
  return out
}

/**
 * The conversation as OpenAI's chat takes it: each call's answer a tool message right after the
 * assistant message that made it. A turn may come as several messages (Anthropic joins
 * consecutive messages of one side, and a client may split a turn so): consecutive assistant
 * messages go as one, and the tool results of consecutive user-side messages go first, the rest
 * of those messages after them in their order.
 */
function chatMessages(list: Message[]): Json[] {
  const out: Json[] = []
  // in the user-side turn right after an assistant message: its other messages wait for the answers
  let answering = false
  let rest: Json[] = []
  const flush = () => {
    for (const x of rest) out.push(x)
    rest = []
  }
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!
    if (m.role === 'user' || m.role === 'tool') {
      for (const x of messages(m, i)) (answering && x.role !== 'tool' ? rest : out).push(x)
      continue
    }
    flush()
    answering = m.role === 'assistant'
    if (m.role !== 'assistant') {
      for (const x of messages(m, i)) out.push(x)
      continue
    }
    const at = i
    const content = m.content.slice()
    while (list[i + 1]?.role === 'assistant') for (const p of list[++i]!.content) content.push(p)
    for (const x of messages({ ...m, content }, at)) out.push(x)
  }
  flush()
  return out
}

function toolChoice(c: ToolChoice): unknown {
  return c.type === 'tool' ? { type: 'function', function: { name: c.name } } : c.type
}

/**
 * What the body needs to know of the model: its upstream id, whether it reasons (a reasoning
 * effort is refused by the others), and whether it sits on another server that speaks the chat
 * wire (`openai-compatible`), where the output cap is still `max_tokens`.
 */
export interface ChatTarget extends Pick<CatalogModel, 'upstreamId' | 'reasoning'> {
  compatible?: boolean
}

export interface OpenAIChatRequest {
  body: Json
  /** Parameters the model would refuse, left out: named to the client in x-switchyard-compat. */
  leftOut: string[]
}

export function toOpenAIChat(req: GenerationRequest, target: ChatTarget): OpenAIChatRequest {
  checkToolChoice(req)
  if (req.topK !== undefined) throw badRequest('top_k is not supported by OpenAI models')
  const msgs: Json[] = []
  if (req.system?.length) msgs.push({ role: 'system', content: content(req.system, 'system') })
  msgs.push(...chatMessages(req.messages))

  const body: Json = { model: target.upstreamId, messages: msgs }
  // OpenAI's own name since the reasoning models; compatible servers (vLLM, Ollama, llama.cpp,
  // LM Studio) all read `max_tokens`, and some read only that
  if (req.maxTokens !== undefined) body[target.compatible ? 'max_tokens' : 'max_completion_tokens'] = req.maxTokens
  const leftOut: string[] = []
  const effort = req.reasoning?.effort && target.reasoning ? effortFor(target.upstreamId, req.reasoning.effort) : undefined
  if (effort !== undefined && effort !== req.reasoning!.effort) leftOut.push(`reasoning_effort.${req.reasoning!.effort}${effort === null ? '' : `->${effort}`}`)
  const sampled = !target.reasoning || target.compatible || effort === 'none'
  for (const [field, wire] of REASONING_SAMPLING) {
    const v = req[field]
    if (v === undefined) continue
    if (sampled) body[wire] = v
    else if (v !== 1) leftOut.push(wire)
  }
  if (req.stop?.length) {
    // the reasoning models refuse `stop` as they refuse sampling (o3, gpt-5: "Unsupported
    // parameter"): left out and named, as temperature is
    if (!sampled) leftOut.push('stop')
    // Claude's stop_sequences have no count limit; Chat Completions refuses more than 4
    else if (req.stop.length > MAX_STOPS) throw badRequest(`stop sequences: OpenAI models take at most ${MAX_STOPS}; got ${req.stop.length}`)
    else body.stop = req.stop
  }
  if (req.tools?.length) {
    // what a Claude tool says that a function has no field for: named, never dropped unsaid
    const claudeOnly = new Set<string>()
    for (const t of req.tools) {
      if (t.cacheControl) claudeOnly.add('tools[].cache_control')
      for (const k of Object.keys(t.providerData?.anthropic ?? {})) claudeOnly.add(`tools[].${k}`)
    }
    leftOut.push(...claudeOnly)
    body.tools = req.tools.map((t) => {
      const fn: Json = { name: t.name, parameters: t.parameters }
      if (t.description !== undefined) fn.description = t.description
      if (t.strict !== undefined) fn.strict = t.strict
      return { type: 'function', function: fn, ...t.providerData?.openai }
    })
  }
  if (req.toolChoice && (req.tools?.length || req.toolChoice.type === 'none')) body.tool_choice = toolChoice(req.toolChoice)
  const disableParallel = req.toolChoice && 'disableParallel' in req.toolChoice && req.toolChoice.disableParallel
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls
  else if (disableParallel && req.tools?.length) body.parallel_tool_calls = false
  // Claude's thinking translated for a model that does not reason (gpt-4o) would be OpenAI's 400
  if (effort) body.reasoning_effort = effort
  if (req.responseFormat) body.response_format = chatResponseFormat(req.responseFormat)
  if (req.user !== undefined) body.user = req.user
  // Chat Completions takes metadata only with `store: true` (a 400 otherwise): Claude Code's
  // metadata.user_id on every request is `user` above, and goes no further
  if (req.metadata !== undefined && req.providerData?.openai?.store === true) body.metadata = req.metadata
  const merged: Json = { ...body, ...req.providerData?.openai }
  if (req.stream) {
    merged.stream = true
    // Always, whatever the client asked: the gateway records usage for every streamed request.
    merged.stream_options = { ...(merged.stream_options as Json | undefined), include_usage: true }
  } else {
    delete merged.stream
    delete merged.stream_options
  }
  return { body: merged, leftOut }
}
