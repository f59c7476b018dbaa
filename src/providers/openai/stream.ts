// chat.completion.chunk SSE → IR stream events. State lives in the generator: tool calls
// are keyed by `tool_calls[].index` (the last call when a server sends none; a new call when a
// piece names a function under another id, or brings argument text under another id after its
// call's whole arguments); `tool_calls: []` next to text is text; the finish waits for the usage chunk and
// `[DONE]`. What other servers of the wire send in other shapes is read by compat-fields.ts.
// A call starts once it is named: argument text some servers send ahead of the piece with the
// call's id and name waits for it (HELD_MAX at most), so the call is one, not a nameless one
// and a named one with no arguments.
import { emptyUsage, type Finish, type StreamEvent, type Usage } from '../../ir/types.ts'
import { parseErrorBody } from '../errors.ts'
import { readFailure, type SseMessage } from '../sse.ts'
import { calledFinish, finishFromOpenAI, refusedFinish } from './finish.ts'
import { usageFromOpenAI, type OpenAIUsage } from './usage.ts'
import { pricedTier } from '../../config/service-tiers.ts'
import { withoutSecrets } from '../../lib/secrets.ts'
import { argumentsOf, reasoningOf, stringOf, textOf, type ChatMessageFields } from './compat-fields.ts'
import { WholeJson } from './whole-json.ts'

/** A piece of a call as servers of the chat wire send it (compat-fields.ts reads what is not a string). */
interface ChunkToolCall {
  index?: number
  id?: unknown
  function?: { name?: unknown; arguments?: unknown }
}

interface ChatChunk {
  id?: string
  model?: string
  created?: number
  choices?: {
    delta?: ChatMessageFields | null
    finish_reason?: string | null
  }[]
  usage?: OpenAIUsage | null
  /** The tier that served it: priced apart when flex or priority. */
  service_tier?: string | null
  error?: unknown
}

interface ToolState {
  ordinal: number
  /** The upstream's id for the call, once said. */
  id?: string
  name: string
  /**
   * Said to the client: a call starts at its first argument text once it is named (or at its
   * end), so that an id or a name some servers send in a later piece is the call's.
   */
  started: boolean
  /** Argument text that came before the call's name, waiting for it. */
  held: string[]
  /** Whether its argument text so far is a whole JSON value (a new id's text after it is another call's). */
  args: WholeJson
  sentArgs: boolean
  open: boolean
}

/**
 * The argument text held for calls not yet named, all calls together. Past it, the call that
 * holds it starts without its name (as the server left it so far), and its pieces go on as they come.
 */
export const HELD_MAX = 64 * 1024

const midStream = (message: string, type = 'stream_error'): StreamEvent => ({ type: 'error', error: { status: 502, message, type } })

/**
 * A piece under an id other than its call's that begins another call: one that names a function,
 * or one with argument text once the call's arguments are whole (keyOf below says why).
 */
function another(t: ToolState, call: ChunkToolCall, id: string): boolean {
  if (id === '') return false
  if (stringOf(call.function?.name) !== '') return t.id === undefined ? t.started : t.id !== id
  return t.id !== id && t.args.whole && (argumentsOf(call.function?.arguments) ?? '').trim() !== ''
}

/**
 * `tiers`: the upstream is OpenAI's own, whose `service_tier` prices the reply (a compatible server's says nothing of OpenAI's prices).
 * `unsent`: told, when the reader leaves early, the name and argument text of calls read and not yet handed on.
 */
export async function* openAIChatEvents(messages: AsyncIterable<SseMessage>, tiers = false, unsent?: (text: string) => void): AsyncGenerator<StreamEvent> {
  let started = false
  let finish: Finish | undefined
  let refused = false
  let usage: Usage = emptyUsage()
  let replyId = ''
  const tools = new Map<number, ToolState>()
  /** The length of every call's held text (HELD_MAX). */
  let held = 0

  /** The call starts, with the argument text it held. */
  function* begin(t: ToolState, key: number): Generator<StreamEvent> {
    t.started = true
    yield { type: 'tool-input-start', index: t.ordinal, id: t.id || `call_${replyId}_${key}`, name: t.name }
    const text = t.held.join('')
    t.held = []
    held -= text.length
    if (text === '') return
    t.sentArgs = true
    yield { type: 'tool-input-delta', index: t.ordinal, delta: text }
  }

  function* closeTools(): Generator<StreamEvent> {
    for (const [key, t] of tools) {
      if (!t.open) continue
      // a call never named comes out at the end with what it held, named '' as the JSON reply names it
      if (!t.started) yield* begin(t, key)
      // A tool without parameters may stream no argument text at all; `{}` is what the non-stream answer says.
      if (!t.sentArgs) yield { type: 'tool-input-delta', index: t.ordinal, delta: '{}' }
      yield { type: 'tool-input-end', index: t.ordinal }
      t.open = false
    }
  }

  /**
   * A failure: the argument text of calls not yet named goes out first, as the calls they are
   * so far (it was produced, and is billed so), then the error.
   */
  function* failing(error: StreamEvent): Generator<StreamEvent> {
    for (const [key, t] of tools) if (t.open && !t.started && t.held.length > 0) yield* begin(t, key)
    yield error
  }

  // A piece's call: by its `index`; some servers send none, and a piece without one continues the
  // last call. A piece that names a function under an id other than its call's begins a new call
  // (Ollama numbers every parallel call 0), and so does one with argument text under another id
  // once its call's arguments are a whole JSON value (no text can continue them: the new call's
  // first arguments, ahead of its name); an id alone does not, since some servers change the id
  // from piece to piece of one call (a new one each piece, or another after the first). Keys
  // other than a real index are negative, apart from every real one.
  const moved = new Map<number, number>()
  let last: number | undefined
  const keyOf = (call: ChunkToolCall): number => {
    const id = stringOf(call.id)
    let key = call.index === undefined ? last : (moved.get(call.index) ?? call.index)
    const t = key === undefined ? undefined : tools.get(key)
    if (key === undefined || (t !== undefined && another(t, call, id))) {
      const fresh = -2 - tools.size
      if (call.index !== undefined) moved.set(call.index, fresh)
      key = fresh
    }
    last = key
    return key
  }

  function* toolDelta(key: number, call: ChunkToolCall): Generator<StreamEvent> {
    let t = tools.get(key)
    if (!t) {
      t = { ordinal: tools.size, name: '', started: false, held: [], args: new WholeJson(), sentArgs: false, open: true }
      tools.set(key, t)
    }
    if (!t.started) {
      const id = stringOf(call.id)
      if (id && t.id === undefined) t.id = id
      // a name in pieces is joined; one repeated whole in every piece is taken once
      const name = stringOf(call.function?.name)
      if (name && name !== t.name) t.name += name
    }
    const args = argumentsOf(call.function?.arguments)
    if (args) t.args.feed(args)
    if (t.started) {
      if (!args) return
      t.sentArgs = true
      yield { type: 'tool-input-delta', index: t.ordinal, delta: args }
      return
    }
    if (args) {
      t.held.push(args)
      held += args.length
    }
    // it starts at a piece of argument text once named (a name in pieces is whole by then); a
    // nameless one waits, past HELD_MAX it starts as it is
    if (!args || (t.name === '' && held <= HELD_MAX)) return
    // the calls before it that are named start first, so the calls come out in the order the
    // server began them (its JSON reply's) when a later one's arguments come first
    for (const [k, u] of tools) if (u.ordinal < t.ordinal && u.open && !u.started && u.name !== '') yield* begin(u, k)
    yield* begin(t, key)
  }

  try {
    try {
      for await (const m of messages) {
        if (m.data === '[DONE]') break
        let chunk: ChatChunk
        try {
          chunk = JSON.parse(m.data)
        } catch {
          yield* failing(midStream('upstream sent a stream chunk that is not JSON'))
          return
        }
        if (chunk.error) {
          const e = parseErrorBody(JSON.stringify(chunk))
          yield* failing({ type: 'error', error: { status: 502, message: e.message === undefined ? 'upstream stream error' : withoutSecrets(e.message), type: e.type } })
          return
        }
        if (!started) {
          started = true
          replyId = chunk.id ?? ''
          const serviceTier = tiers ? pricedTier(chunk.service_tier) : undefined
          yield { type: 'start', id: chunk.id ?? '', model: chunk.model ?? '', created: chunk.created ?? Math.floor(Date.now() / 1000), ...(serviceTier ? { serviceTier } : {}) }
        }
        const choice = chunk.choices?.[0]
        const d = choice?.delta
        if (d && typeof d === 'object') {
          const reasoning = reasoningOf(d)
          if (reasoning) yield { type: 'reasoning-delta', text: reasoning }
          const text = textOf(d.content)
          if (text) yield { type: 'text-delta', text }
          const refusal = textOf(d.refusal)
          if (refusal) {
            refused = true
            yield { type: 'text-delta', text: refusal }
          }
          if (Array.isArray(d.tool_calls)) for (const call of d.tool_calls) if (call && typeof call === 'object') yield* toolDelta(keyOf(call), call)
          if (d.function_call && typeof d.function_call === 'object') yield* toolDelta(-1, { id: `call_${chunk.id ?? 'legacy'}`, function: d.function_call })
        }
        if (choice?.finish_reason) {
          finish = calledFinish(refusedFinish(finishFromOpenAI(choice.finish_reason), refused), tools.size > 0)
          yield* closeTools()
        }
        if (chunk.usage) {
          usage = usageFromOpenAI(chunk.usage, tiers ? chunk.service_tier : undefined)
          yield { type: 'usage', usage }
        }
      }
    } catch (e) {
      yield* failing(readFailure(e))
      return
    }
    if (!finish) {
      yield* failing(midStream('upstream stream ended before a finish_reason', 'incomplete_stream'))
      return
    }
    yield* closeTools()
    yield { type: 'finish', finish, usage }
  } finally {
    // a reader that left early (its client gone) never took these: the upstream produced them
    if (unsent) {
      for (const t of tools.values()) {
        const rest = (t.started ? '' : t.name) + t.held.join('')
        if (rest !== '') unsent(rest)
      }
    }
  }
}
