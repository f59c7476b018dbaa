// Messages JSON → IR GenerationResponse (pure).
import { UpstreamError } from '../../ir/errors.ts'
import type { GenerationResponse, Part } from '../../ir/types.ts'
import { finishFromAnthropic, repliedStop } from './finish.ts'
import { usageFromAnthropic, type AnthropicUsage } from './usage.ts'
import { isWebSearchUse, keptSearch, searchQuery, searchResults, webSources } from './citations.ts'

export interface AnthropicBlock {
  type: string
  text?: string
  thinking?: string
  signature?: string
  data?: string
  id?: string
  name?: string
  input?: unknown
  citations?: unknown
  tool_use_id?: string
  content?: unknown
}

export interface AnthropicMessage {
  id?: string
  model?: string
  /** Blocks; a server of the wire may send the text alone, or null among them. */
  content?: AnthropicBlock[] | string | null
  stop_reason?: string | null
  stop_sequence?: string | null
  usage?: AnthropicUsage
}

/**
 * One content block → IR part. Server-side tool blocks (`server_tool_use`, `*_tool_result`)
 * were executed by Anthropic and are not calls for the client to run: a web search's becomes
 * the record of a search (its result joins it, fromAnthropicMessage), the others yield nothing.
 */
export function partFromBlock(b: AnthropicBlock): Part | undefined {
  switch (b.type) {
    case 'text': {
      const text = b.text ?? ''
      const cited = webSources(b.citations)
      const part: Part = cited.length > 0 ? { type: 'text', text, citations: cited.map((s) => ({ ...s, start: 0, end: text.length })) } : { type: 'text', text }
      // Claude's own, as it sent them, for a client of its own wire
      if (Array.isArray(b.citations) && b.citations.length > 0) part.providerData = { anthropic: { citations: b.citations } }
      return part
    }
    case 'thinking':
      return b.signature !== undefined ? { type: 'reasoning', text: b.thinking ?? '', signature: b.signature } : { type: 'reasoning', text: b.thinking ?? '' }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redacted: b.data ?? '' }
    case 'tool_use':
      return { type: 'tool-call', id: b.id ?? '', name: b.name ?? '', arguments: inputText(b.input) }
    case 'server_tool_use':
      return isWebSearchUse(b) ? { type: 'web-search', id: b.id ?? '', query: searchQuery(b.input), sources: [], status: 'incomplete' } : undefined
    default:
      return undefined
  }
}

/** A call's input as argument text: Anthropic's is an object; a server of its wire may send the JSON text itself. */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input.trim() === '' ? '{}' : input
  return JSON.stringify(input ?? {})
}

/**
 * The id of a call a server of the wire sent without one (a client must be able to name it in
 * its result): from the message's id, or from a token of the reply's own (`reply`), never the
 * same as another reply's calls.
 */
export const callId = (reply: string, ordinal: number) => `toolu_${reply.replace(/^msg_/, '')}_${ordinal}`

/** A reply's own token for its calls' ids, where the message has no id. */
export const replyToken = () => crypto.randomUUID().replaceAll('-', '').slice(0, 24)

/**
 * `replyTool`: the tool whose input is the reply (reply-tool.ts): its call is the reply's text,
 * and the stop at it the turn's end.
 */
export function fromAnthropicMessage(body: AnthropicMessage, replyTool?: string): GenerationResponse {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new UpstreamError({ status: 502, message: 'upstream sent a reply that is not a message', type: 'invalid_body' })
  const blocks: unknown[] = typeof body.content === 'string' ? [{ type: 'text', text: body.content }] : Array.isArray(body.content) ? body.content : []
  const content: Part[] = []
  let calls = 0
  let replied = false
  const reply = body.id || replyToken()
  /** Each web search's input, by its id, kept with its result. */
  const inputs = new Map<string, unknown>()
  for (const b of blocks) {
    if (b === null || typeof b !== 'object') continue
    if ((b as AnthropicBlock).type === 'web_search_tool_result') {
      const search = content.findLast((p) => p.type === 'web-search' && p.id === (b as AnthropicBlock).tool_use_id)
      if (search?.type !== 'web-search') continue
      Object.assign(search, searchResults((b as AnthropicBlock).content))
      const kept = keptSearch(inputs.get(search.id), (b as AnthropicBlock).content)
      if (kept) search.providerData = kept
      continue
    }
    if (replyTool !== undefined && (b as AnthropicBlock).type === 'tool_use' && (b as AnthropicBlock).name === replyTool) {
      content.push({ type: 'text', text: inputText((b as AnthropicBlock).input) })
      replied = true
      continue
    }
    const p = partFromBlock(b as AnthropicBlock)
    if (!p) continue
    if (p.type === 'web-search') inputs.set(p.id, (b as AnthropicBlock).input)
    if (p.type === 'tool-call' && !(b as AnthropicBlock).id) p.id = callId(reply, calls)
    if (p.type === 'tool-call') calls++
    content.push(p)
  }
  return {
    id: body.id ?? '',
    model: body.model ?? '',
    created: Math.floor(Date.now() / 1000),
    content,
    finish: finishFromAnthropic(repliedStop(body.stop_reason, replied, calls > 0), body.stop_sequence, calls > 0),
    usage: usageFromAnthropic(body.usage),
  }
}
