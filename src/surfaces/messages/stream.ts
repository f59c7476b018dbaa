// IR stream events → messages-style SSE, exactly as Anthropic's wire: every
// frame with its `event:` line (the SDK ignores frames without one), `message_start`, then
// per block `content_block_start` / `content_block_delta` / `content_block_stop` with
// indexes 0, 1, 2… in order, `message_delta` with the stop reason and the whole usage, and
// `message_stop`. A mid-stream error produces nothing here: the pipeline writes
// `messagesErrorFrame` and closes, with no message_delta / message_stop after it.
import type { StreamEvent, Usage } from '../../ir/types.ts'
import { emptyUsage, promptTokens } from '../../ir/types.ts'
import { messageUsage, messagesId, messagesStopDetails, messagesStopReason, messagesStopSequence, messagesUsage, searchBlocks, toolInput } from './encode.ts'

export { messagesErrorFrame } from './errors.ts'

export interface MessagesStreamOptions {
  /** The reply id (a `start` event's id replaces it) and the model as the upstream named it (the id asked for where it named none). */
  id: string
  model: string
  /**
   * The prompt's size for `message_start` where the upstream's start says none (another
   * family's upstream says it at the end): the SDKs and LangChain read input_tokens there.
   * Not the record's usage; `message_delta` carries the upstream's own count.
   */
  promptTokens?: number
  /**
   * A tool's whole arguments as they go out (a fitted strict tool's without the nulls its fitting
   * added: answer-nulls.ts). They are held until the tool's end in any case (see `tools` below),
   * so what this sees is complete.
   */
  toolArgs?: (name: string, args: string) => string
}

export interface MessagesStreamState {
  id: string
  model: string
  usage: Usage
  stopReason: string | null
  /** True once a content-bearing frame (a content block) was produced. */
  produced: boolean
  done: boolean
  failed: boolean
}

export interface MessagesStreamEncoder {
  readonly state: MessagesStreamState
  /** The SSE text for one IR event ('' when the event has no wire form yet). */
  push(ev: StreamEvent): string
}

export function sseFrame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
}

type Flow = 'text' | 'thinking'
/** A tool block: its content block index, its name, and its arguments held until its end. */
interface HeldTool {
  index: number
  name: string
  open: boolean
  args: string
}
/** The open text or thinking block; `head` is its delta frames' first part, made at its first delta. */
interface OpenFlow {
  kind: Flow
  index: number
  head?: string
}

export function createMessagesStreamEncoder(o: MessagesStreamOptions): MessagesStreamEncoder {
  const state: MessagesStreamState = {
    id: messagesId(o.id), model: o.model, usage: emptyUsage(), stopReason: null, produced: false, done: false, failed: false,
  }
  let started = false
  let next = 0
  /** The open text or thinking block (at most one: a new block of any kind closes it). */
  let flow: OpenFlow | null = null
  /**
   * Tool ordinal → content block index; a tool stays open until its end or finish. Its arguments
   * are held until then and go out as one delta: an upstream of another family may send text
   * that is no JSON object (cut by the token limit, an array, prose), which the SDK's parser
   * throws on. Sent whole, they are what the JSON reply says (`toolInput`): streamed and plain agree.
   * Held whole is also what a fitted strict tool needs: the nulls its fitting added can only be
   * found in the complete JSON (`toolArgs`), and a client shown the pieces would see them.
   */
  const tools = new Map<number, HeldTool>()

  const startUsage = () => (o.promptTokens && promptTokens(state.usage) === 0 ? { ...state.usage, inputTokens: o.promptTokens } : state.usage)
  const messageStart = () => {
    if (started) return ''
    started = true
    const message = {
      id: state.id, type: 'message', role: 'assistant', model: state.model, content: [],
      stop_reason: null, stop_sequence: null, stop_details: null, container: null, diagnostics: null, context_management: null, usage: messageUsage(startUsage()),
    }
    return sseFrame('message_start', { message })
  }
  const blockStart = (block: Record<string, unknown>) => {
    state.produced = true
    return sseFrame('content_block_start', { index: next++, content_block: block })
  }
  const delta = (index: number, d: Record<string, unknown>) => sseFrame('content_block_delta', { index, delta: d })
  // Most of a stream: the bytes `delta` would write, the part before the text made once a block.
  const textDelta = (f: OpenFlow, text: string) => {
    f.head ??= `event: content_block_delta\ndata: {"type":"content_block_delta","index":${f.index},"delta":{"type":"${f.kind}_delta","${f.kind}":`
    return `${f.head}${JSON.stringify(text)}}}\n\n`
  }
  const stop = (index: number) => sseFrame('content_block_stop', { index })
  const closeFlow = () => {
    if (!flow) return ''
    const out = stop(flow.index)
    flow = null
    return out
  }
  // Text and thinking blocks start at their first content, so an empty block is never sent
  // (the JSON reply has none either: streamed and plain agree).
  const enter = (kind: Flow) => {
    if (flow?.kind === kind) return ''
    const out = messageStart() + closeFlow()
    flow = { kind, index: next }
    return out + blockStart(kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' })
  }
  const closeTool = (t: HeldTool) => {
    t.open = false
    if (t.args.trim() === '') return stop(t.index)
    const args = o.toolArgs ? o.toolArgs(t.name, t.args) : t.args
    t.args = ''
    return delta(t.index, { type: 'input_json_delta', partial_json: isJsonObject(args) ? args : JSON.stringify(toolInput(args)) }) + stop(t.index)
  }
  const closeAll = () => {
    let out = closeFlow()
    for (const t of tools.values()) if (t.open) out += closeTool(t)
    return out
  }

  const HANDLERS: { [K in StreamEvent['type']]: (ev: Extract<StreamEvent, { type: K }>) => string } = {
    start: (ev) => {
      if (!started && ev.id) state.id = messagesId(ev.id)
      // The cache writes go out in message_start only: the SDK never reads them from a delta.
      if (!started && ev.usage) state.usage = ev.usage
      return messageStart()
    },
    'text-start': () => messageStart() + closeFlow(),
    // a block of Claude's own begins: one of its own here too (its citations are the block's)
    'text-delta': (ev) => (ev.text === '' ? '' : (ev.block && flow?.kind === 'text' ? closeFlow() : '') + enter('text') + textDelta(flow!, ev.text)),
    // a block a failure cut is not stopped: Anthropic's stream ends with the error event alone
    'text-end': (ev) => (flow?.kind === 'text' && !ev.cut ? closeFlow() : ''),
    // Claude's own citations of the text block open now, as it sent them, told at its end (a GPT
    // model's sources have no faithful form here: encode.ts)
    'text-citations': (ev) => {
      const cited = ev.providerData?.anthropic?.citations
      if (!Array.isArray(cited) || flow?.kind !== 'text') return ''
      const at = flow.index
      return cited.map((citation) => delta(at, { type: 'citations_delta', citation })).join('')
    },
    // Claude's search, told whole once its result came (a paused turn's, without one, is not)
    'web-search-start': () => '',
    'web-search-end': (ev) => {
      const blocks = searchBlocks({ ...ev, type: 'web-search' })
      if (blocks.length === 0) return ''
      let out = messageStart() + closeFlow()
      const use = next
      out += blockStart({ ...blocks[0], input: {} }) + delta(use, { type: 'input_json_delta', partial_json: JSON.stringify(blocks[0]!.input) }) + stop(use)
      const result = next
      return out + blockStart(blocks[1]!) + stop(result)
    },
    'reasoning-start': () => messageStart() + closeFlow(),
    'reasoning-delta': (ev) => (ev.text === '' ? '' : enter('thinking') + textDelta(flow!, ev.text)),
    // A signature is the last thing of its thinking block (as the fold in collect.ts reads it).
    'reasoning-signature': (ev) => enter('thinking') + delta(flow!.index, { type: 'signature_delta', signature: ev.signature }) + closeFlow(),
    'reasoning-end': (ev) => (flow?.kind === 'thinking' && !ev.cut ? closeFlow() : ''),
    'reasoning-redacted': (ev) => {
      const out = messageStart() + closeFlow()
      const index = next
      return out + blockStart({ type: 'redacted_thinking', data: ev.data }) + stop(index)
    },
    'tool-input-start': (ev) => {
      let out = messageStart() + closeFlow()
      // The same ordinal started again: the earlier block is finished, never left open.
      const was = tools.get(ev.index)
      if (was?.open) out += closeTool(was)
      tools.set(ev.index, { index: next, name: ev.name, open: true, args: '' })
      return out + blockStart({ type: 'tool_use', id: ev.id, name: ev.name, input: {} })
    },
    'tool-input-delta': (ev) => {
      const t = tools.get(ev.index)
      // Never a delta to a block that was not started or is closed.
      if (t?.open) t.args += ev.delta
      return ''
    },
    'tool-input-end': (ev) => {
      const t = tools.get(ev.index)
      return t?.open ? closeTool(t) : ''
    },
    usage: (ev) => {
      state.usage = ev.usage
      return ''
    },
    finish: (ev) => {
      state.usage = ev.usage
      state.stopReason = messagesStopReason(ev.finish)
      state.done = true
      const out = messageStart() + closeAll()
      // The input counters are repeated here; the SDK's stream helper reads usage from it.
      const md = sseFrame('message_delta', {
        delta: {
          stop_reason: state.stopReason, stop_sequence: messagesStopSequence(ev.finish),
          stop_details: messagesStopDetails(state.stopReason),
        },
        usage: messagesUsage(state.usage),
      })
      return out + md + sseFrame('message_stop', {})
    },
    error: () => {
      state.failed = true
      return ''
    },
  }

  function push(ev: StreamEvent): string {
    if (state.done || state.failed) return ''
    const h = HANDLERS[ev.type] as ((e: StreamEvent) => string) | undefined
    return h ? h(ev) : ''
  }
  return { state, push }
}

/** The text is one JSON object (what `input` must be), to go out as it came. */
function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text)
    return v !== null && typeof v === 'object' && !Array.isArray(v)
  } catch {
    return false
  }
}
