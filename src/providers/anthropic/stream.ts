// Messages SSE → IR stream events. Per-block state by content_block index;
// message_delta usage overwrites, never adds; an `error` event after the 200
// becomes an IR error event, never a fake end_turn. What servers of the wire other than
// Anthropic send in other shapes is read as Anthropic's would be: a ping or an empty event
// skipped whatever its data, no `message_start` (the start is made at the first event), a second
// one ignored, a call without an id given one, a call's input as JSON text. A thinking block's
// stop ends it (`reasoning-end`), signed or not, so the next one is a block of its own (text
// blocks in a row stay one run, as the JSON reply's text parts make one message); blocks started
// while an earlier one is open wait for it (block-order.ts).
import { emptyUsage, type Finish, type StreamEvent, type Usage, type WebSource } from '../../ir/types.ts'
import { anthropicEventError } from '../errors.ts'
import { readFailure, type SseMessage } from '../sse.ts'
import { finishFromAnthropic, repliedStop } from './finish.ts'
import { overwriteUsage, usageFromAnthropic, type AnthropicUsage } from './usage.ts'
import { callId, inputText, replyToken, type AnthropicBlock } from './response.ts'
import { blockOrder, BLOCKS_MAX, OPEN_MAX } from './block-order.ts'
import { tellContainer } from './container.ts'
import type { ContainerGiven } from '../../routing/contract.ts'
import { tellText } from '../../ir/event-text.ts'
import { isWebSearchUse, keptSearch, searchQuery, searchResults, webSource, webSources } from './citations.ts'

/** `open`: its stop has not come (its end events not yet made). */
/** A text block's `chars` so far, the web sources it cites and its citations as Claude sent them (said at its end, for all of it). */
type Block =
  | { kind: 'text'; open: boolean; chars: number; sources: WebSource[]; cited: unknown[] }
  | { kind: 'thinking'; startSignature?: string; signed: boolean; open: boolean }
  | { kind: 'tool'; ordinal: number; input: unknown; sentArgs: boolean; open: boolean }
  /** The reply tool's call (reply-tool.ts): its input is the reply's text, `chars` of it so far. */
  | { kind: 'reply'; input: unknown; chars: number; open: boolean }
  /** A web search's server_tool_use block: its input, whole or as JSON text so far. */
  | { kind: 'search'; id: string; input: unknown; json: string; open: boolean }
  | { kind: 'ignored'; open: boolean }

interface Event {
  type?: string
  index?: number
  message?: { id?: string; model?: string; usage?: AnthropicUsage; container?: unknown }
  content_block?: AnthropicBlock
  delta?: { type?: string; text?: string; thinking?: string; signature?: string; partial_json?: string; citation?: unknown; stop_reason?: string | null; stop_sequence?: string | null; container?: unknown }
  usage?: AnthropicUsage
  error?: { type?: string; message?: string } | string
}

/** Blocks not yet stopped that the reader keeps: as many as the block order may (in order, then open). */
const BLOCKS_KEPT = BLOCKS_MAX + OPEN_MAX

/** The web searches of a reply whose query is kept for their result (Claude runs a few; max_uses bounds them). */
const SEARCHES_MAX = 64

/** The sources one text block may cite that are kept (a block cites a few; an upstream that sends more is not held). */
const SOURCES_MAX = 64

const streamError = (message: string, type: string): StreamEvent => ({ type: 'error', error: { status: 502, message, type } })

/** A web search whose block stopped: its input (an object, or its JSON text) and the query in it. */
interface Asked {
  input: unknown
  query: string
}

/** `queries`: each web search whose block stopped, by its id, for its result to say. */
function* openBlock(b: AnthropicBlock, ordinal: number, reply: string, queries: Map<string, Asked>, replyTool?: string): Generator<StreamEvent, Block> {
  if (b.type === 'tool_use' && replyTool !== undefined && b.name === replyTool) return { kind: 'reply', input: b.input, chars: 0, open: true }
  switch (b.type) {
    case 'text':
      if (b.text) yield { type: 'text-delta', text: b.text, block: true }
      return { kind: 'text', open: true, chars: b.text?.length ?? 0, sources: webSources(b.citations), cited: Array.isArray(b.citations) ? b.citations.slice(0, SOURCES_MAX) : [] }
    case 'thinking':
      if (b.thinking) yield { type: 'reasoning-delta', text: b.thinking }
      return { kind: 'thinking', startSignature: b.signature || undefined, signed: false, open: true }
    case 'redacted_thinking':
      yield { type: 'reasoning-redacted', data: b.data ?? '' }
      return { kind: 'ignored', open: true }
    case 'tool_use':
      yield { type: 'tool-input-start', index: ordinal, id: b.id || callId(reply, ordinal), name: b.name ?? '' }
      return { kind: 'tool', ordinal, input: b.input, sentArgs: false, open: true }
    case 'server_tool_use':
      // Server-side tools ran at Anthropic; nothing for the client to execute. A web search is told (OpenAI shows its own)
      if (!isWebSearchUse(b) || !b.id) return { kind: 'ignored', open: true }
      yield { type: 'web-search-start', id: b.id }
      return { kind: 'search', id: b.id, input: b.input, json: '', open: true }
    case 'web_search_tool_result': {
      const id = b.tool_use_id ?? ''
      const asked = queries.get(id)
      if (asked) {
        const kept = keptSearch(asked.input, b.content)
        yield { type: 'web-search-end', id, query: asked.query, ...searchResults(b.content), ...(kept ? { providerData: kept } : {}) }
        queries.delete(id)
      }
      return { kind: 'ignored', open: true }
    }
    default:
      return { kind: 'ignored', open: true }
  }
}

/** A block's end events, once (at its stop, or at the message's end for one never stopped). */
function closeBlock(b: Block | undefined): StreamEvent[] {
  if (!b?.open) return []
  b.open = false
  switch (b.kind) {
    case 'thinking': {
      const signed = !b.signed && b.startSignature ? [{ type: 'reasoning-signature', signature: b.startSignature } as const] : []
      b.signed ||= signed.length > 0
      return [...signed, { type: 'reasoning-end' }]
    }
    case 'text':
      if (b.chars === 0 || (b.sources.length === 0 && b.cited.length === 0)) return []
      return [{ type: 'text-citations', sources: b.sources, span: b.chars, ...(b.cited.length > 0 ? { providerData: { anthropic: { citations: b.cited } } } : {}) }]
    case 'reply':
      // its input, whole in the start block, where none came as deltas
      return b.chars > 0 ? [] : [{ type: 'text-delta', text: inputText(b.input), block: true }]
    case 'tool':
      // Arguments may come whole in the start block and never as deltas.
      return [...(b.sentArgs ? [] : [{ type: 'tool-input-delta', index: b.ordinal, delta: inputText(b.input) } as const]), { type: 'tool-input-end', index: b.ordinal }]
    default:
      return []
  }
}

/**
 * `given`: told of the code execution container the reply says it ran in (container.ts).
 * `unsent`: told, when the reader leaves early, the text of what was read and not yet handed on.
 * `replyTool`: the tool whose input is the reply (reply-tool.ts), read as the reply's text.
 * `begun`: told when the message's start is read and held (the upstream's silence is watched from there).
 */
export async function* anthropicEvents(messages: AsyncIterable<SseMessage>, provider = 'anthropic', given?: ContainerGiven, unsent?: (text: string) => void, replyTool?: string, begun?: () => void): AsyncGenerator<StreamEvent> {
  const blocks = new Map<number, Block>()
  const queries = new Map<string, Asked>()
  const order = blockOrder<Block>()
  let tools = 0
  let replied = false
  let usage: Usage = emptyUsage()
  let stop: { reason?: string | null; sequence?: string | null } = {}
  /** What makes the ids of calls sent without one: the message's id, else a token of this reply's own. */
  let reply = ''
  /** 'said': the upstream's message_start came; 'made': the reply began without one (at its first output). */
  let started: 'said' | 'made' | undefined
  /**
   * message_start's events, held until an event that decides: an in-band error right after it
   * (Claude's overloaded_error, said once the message has begun) is then a failure before the
   * reply, failed over as any other; output, or any other event, begins the reply with them.
   */
  let opening: StreamEvent[] | undefined
  /** The events one upstream event made, handed on in order: `handed` of them so far. */
  const out: StreamEvent[] = []
  let handed = 0
  /**
   * A failure: what waited for an earlier block goes out first (it was produced, and is billed so),
   * then the error. One the upstream said (`said`) right after the message's start is a failure
   * before the reply; a cut or a stall there is not (the upstream took the request): the start
   * goes out, then the error.
   */
  function* failing(error: StreamEvent, said = false): Generator<StreamEvent> {
    out.length = handed = 0
    order.release(out)
    if (opening && (!said || out.length > 0)) yield* opening
    opening = undefined
    if (out.length > 0 && started === undefined) {
      started = 'made'
      yield { type: 'start', id: '', model: '', created: Math.floor(Date.now() / 1000) }
    }
    while (handed < out.length) yield out[handed++]!
    yield error
  }

  try {
    try {
      for await (const m of messages) {
        // as the SDK reads the wire: a ping whatever its data, and an event with none, say nothing
        if (m.event === 'ping' || m.data === '') continue
        let e: Event
        try {
          e = JSON.parse(m.data)
        } catch {
          yield* failing(streamError('upstream sent a stream event that is not JSON', 'stream_error'), true)
          return
        }
        if (e === null || typeof e !== 'object') continue
        const type = e.type ?? m.event
        if (type === 'message_start') {
          if (started === 'said') continue // a second one says nothing new (the encoders begin once)
          tellContainer(e.message?.container, given)
          reply = e.message?.id ?? reply
          usage = usageFromAnthropic(e.message?.usage)
          // one that comes after the reply began without it still says the prompt's count
          if (started === undefined) {
            opening = [{ type: 'start', id: reply, model: e.message?.model ?? '', created: Math.floor(Date.now() / 1000), usage }, { type: 'usage', usage }]
            begun?.()
          } else yield { type: 'usage', usage }
          started = 'said'
          continue
        }
        let ended = false
        out.length = handed = 0
        switch (type) {
          case 'content_block_start': {
            const b = e.content_block ?? { type: 'unknown' }
            if (b.type === 'tool_use' && !b.id) reply ||= replyToken()
            // a block started again at the index of one still open: that one can take nothing more, it ended
            const was = blocks.get(e.index ?? 0)
            order.stop(was, closeBlock(was), out)
            const opened = openBlock(b, tools, reply, queries, replyTool)
            const made: StreamEvent[] = []
            let r = opened.next()
            for (; !r.done; r = opened.next()) made.push(r.value)
            if (r.value.kind === 'tool') tools++
            replied ||= r.value.kind === 'reply'
            // bounded as the order's entries are: the oldest block kept is forgotten (as the order
            // forgets it, its end is not made at the message's end)
            if (!blocks.has(e.index ?? 0) && blocks.size >= BLOCKS_KEPT) blocks.delete(blocks.keys().next().value as number)
            blocks.set(e.index ?? 0, r.value)
            order.start(r.value, made, out)
            break
          }
          case 'content_block_delta': {
            const b = blocks.get(e.index ?? 0)
            const d = e.delta ?? {}
            let ev: StreamEvent | undefined
            if (d.type === 'text_delta' && d.text) {
              // a block's first text says it begins one (a surface of Claude's wire starts a block there)
              ev = b?.kind === 'text' && b.chars === 0 ? { type: 'text-delta', text: d.text, block: true } : { type: 'text-delta', text: d.text }
              if (b?.kind === 'text') b.chars += d.text.length
            } else if (d.type === 'citations_delta' && b?.kind === 'text') {
              const s = webSource(d.citation)
              if (s && b.sources.length < SOURCES_MAX) b.sources.push(s)
              if (d.citation !== undefined && b.cited.length < SOURCES_MAX) b.cited.push(d.citation)
            }
            else if (d.type === 'thinking_delta' && d.thinking) ev = { type: 'reasoning-delta', text: d.thinking }
            else if (d.type === 'signature_delta' && d.signature) {
              if (b?.kind === 'thinking') b.signed = true
              ev = { type: 'reasoning-signature', signature: d.signature }
            } else if (d.type === 'input_json_delta' && d.partial_json && b?.kind === 'search' && b.open) {
              b.json += d.partial_json
            } else if (d.type === 'input_json_delta' && d.partial_json && b?.kind === 'reply' && b.open) {
              ev = { type: 'text-delta', text: d.partial_json, ...(b.chars === 0 ? { block: true } : {}) }
              b.chars += d.partial_json.length
            } else if (d.type === 'input_json_delta' && d.partial_json && b?.kind === 'tool' && b.open) {
              b.sentArgs = true
              ev = { type: 'tool-input-delta', index: b.ordinal, delta: d.partial_json }
            }
            if (ev) order.events(b, [ev], out)
            break
          }
          case 'content_block_stop': {
            const b = blocks.get(e.index ?? 0)
            if (b?.kind === 'search' && b.open && queries.size < SEARCHES_MAX) queries.set(b.id, { input: b.json || b.input, query: searchQuery(b.json || b.input) })
            order.stop(b, closeBlock(b), out)
            // a stopped block takes nothing more (a late delta goes on as one of no block would)
            blocks.delete(e.index ?? 0)
            break
          }
          case 'message_delta':
            // a delta that carries usage alone leaves the reason an earlier one gave
            stop = { reason: e.delta?.stop_reason ?? stop.reason, sequence: e.delta?.stop_sequence ?? stop.sequence }
            usage = overwriteUsage(usage, e.usage)
            tellContainer(e.delta?.container, given)
            out.push({ type: 'usage', usage })
            break
          case 'message_stop': {
            order.drain(closeBlock, out)
            // a search whose result never came: the reply paused before it (pause_turn)
            for (const [id, { query }] of queries) out.push({ type: 'web-search-end', id, query, sources: [], status: 'incomplete' })
            queries.clear()
            const finish: Finish = finishFromAnthropic(repliedStop(stop.reason, replied, tools > 0), stop.sequence, tools > 0)
            out.push({ type: 'finish', finish, usage })
            ended = true
            break
          }
          case 'error':
            yield* failing({ type: 'error', error: anthropicEventError(provider, e.error).info }, true)
            return
          default:
            // event types added later carry nothing the IR needs
            break
        }
        // a server that sends no message_start: the reply begins at its first output, never
        // earlier (an error before any output is still a failure before the reply's status)
        if (out.length > 0 && started === undefined) {
          started = 'made'
          yield { type: 'start', id: '', model: '', created: Math.floor(Date.now() / 1000) }
        }
        // a block's start with nothing in it yet decides nothing
        if (opening && (out.length > 0 || type !== 'content_block_start')) {
          yield* opening
          opening = undefined
        }
        while (handed < out.length) yield out[handed++]!
        if (ended) return
      }
    } catch (e) {
      yield* failing(readFailure(e))
      return
    }
    yield* failing(streamError('upstream stream ended before message_stop', 'incomplete_stream'))
  } finally {
    // a reader that left early (its client gone) never took these: the upstream produced them
    if (unsent) {
      const rest = out.slice(handed)
      order.release(rest)
      tellText(rest, unsent)
    }
  }
}
