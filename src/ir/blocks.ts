// Block boundaries, derived once for every encoder: each run of text or reasoning is
// bracketed by `*-start` / `*-end` (a web search the upstream runs ends the run before it), a
// signature ends its thinking block, one block is open at a time (as Anthropic streams them),
// tool inputs that were never closed are closed at the finish, and nothing stays open past
// `finish` or `error` (a call an error cut off is dropped, not ended).
// What starts while a tool input is open waits, in the order it came, until that one ends:
// another call (its argument pieces kept with it) as well as text or reasoning. OpenAI streams
// parallel calls one after the other, but its wire numbers each piece by call and may carry
// text beside a call, so an upstream may interleave them; a piece is never lost to a block
// already closed, and no block opens inside another.
// Boundaries an adapter already sent are kept, never doubled. A delta never comes without its
// block's start: text and reasoning get one made; a call's piece that no call open or waiting
// takes (never started, or past its end) is dropped, not given to a call that is not its own,
// and a call started under the index of one that ended while it waited is a call of its own.
import type { StreamEvent } from './types.ts'

type Open = 'text' | 'reasoning' | null
type ToolStart = Extract<StreamEvent, { type: 'tool-input-start' }>

/** A call that waits for the open one: its start, its pieces so far, whether it ended. */
interface Call {
  start: ToolStart
  pieces: string[]
  ended: boolean
}
/** What waits for the open call: calls, and runs of text and reasoning events. */
type Waiting = Call | StreamEvent[]

/**
 * One stream's normalizer: each event goes to `emit` with the boundaries it implies, in order.
 * A delta inside the run already open (most of a stream) is handed on as it is, nothing made.
 * (What it holds back is billed all the same: a stream's output is counted before it, translated.ts.)
 */
export function blockBoundaries(emit: (ev: StreamEvent) => void): (ev: StreamEvent) => void {
  let open: Open = null
  /** The tool input open now; what waits for it, in the order it came; the calls among that by index. */
  let tool: number | null = null
  let waiting: Waiting[] = []
  const calls = new Map<number, Call>()
  const close = (cut = false) => {
    const was = open
    open = null
    if (was === 'text') emit(cut ? { type: 'text-end', cut } : { type: 'text-end' })
    else if (was === 'reasoning') emit(cut ? { type: 'reasoning-end', cut } : { type: 'reasoning-end' })
  }
  const enter = (kind: 'text' | 'reasoning') => {
    if (open === kind) return
    close()
    open = kind
    emit(kind === 'text' ? { type: 'text-start' } : { type: 'reasoning-start' })
  }
  /** Text and reasoning, with no tool input open. */
  const flow = (ev: StreamEvent) => {
    switch (ev.type) {
      case 'text-delta':
        enter('text')
        return emit(ev)
      case 'reasoning-delta':
        enter('reasoning')
        return emit(ev)
      case 'text-start':
      case 'reasoning-start':
        close()
        open = ev.type === 'text-start' ? 'text' : 'reasoning'
        return emit(ev)
      case 'reasoning-signature':
        // A signature is the last thing of its thinking block.
        enter('reasoning')
        emit(ev)
        return close()
      case 'text-end':
      case 'reasoning-end':
        if (open === (ev.type === 'text-end' ? 'text' : 'reasoning')) close()
        return
      case 'text-citations':
        // it points into the text run open now; with none, there is nothing for it to point into
        if (open === 'text') emit(ev)
        return
      case 'reasoning-redacted':
      case 'web-search-start':
      case 'web-search-end':
        close()
        return emit(ev)
    }
  }
  /**
   * The open tool input is complete: what waited goes out in order, up to a call that has not
   * ended, which opens with its pieces so far while the rest waits on; at the end (`all`), all of it.
   */
  const endTool = (all: boolean) => {
    if (tool !== null) emit({ type: 'tool-input-end', index: tool })
    tool = null
    while (waiting.length > 0) {
      const w = waiting.shift()!
      if (Array.isArray(w)) {
        for (const ev of w) flow(ev)
        continue
      }
      const index = w.start.index
      if (calls.get(index) === w) calls.delete(index)
      close()
      emit(w.start)
      if (w.pieces.length > 0) emit({ type: 'tool-input-delta', index, delta: w.pieces.join('') })
      if (!w.ended && !all) {
        tool = index
        return
      }
      emit({ type: 'tool-input-end', index })
    }
  }
  return (ev) => {
    switch (ev.type) {
      case 'text-delta':
      case 'text-start':
      case 'text-end':
      case 'text-citations':
      case 'reasoning-delta':
      case 'reasoning-start':
      case 'reasoning-end':
      case 'reasoning-signature':
      case 'reasoning-redacted':
      case 'web-search-start':
      case 'web-search-end': {
        if (tool === null) return flow(ev)
        const last = waiting.at(-1)
        if (Array.isArray(last)) last.push(ev)
        else waiting.push([ev])
        return
      }
      case 'tool-input-start': {
        if (tool === null) {
          close()
          tool = ev.index
          return emit(ev)
        }
        if (tool === ev.index || calls.get(ev.index)?.ended === false) return
        const call = { start: ev, pieces: [], ended: false }
        calls.set(ev.index, call)
        waiting.push(call)
        return
      }
      case 'tool-input-delta': {
        const w = calls.get(ev.index)
        if (w) {
          if (!w.ended) w.pieces.push(ev.delta)
        } else if (ev.index === tool) emit(ev)
        return
      }
      case 'tool-input-end': {
        if (ev.index === tool) return endTool(false)
        const w = calls.get(ev.index)
        if (w) w.ended = true
        return
      }
      case 'finish':
        endTool(true)
        close()
        return emit(ev)
      case 'error': {
        // A call cut off by the failure is not ended: its end would tell the client (an agent
        // that runs a tool when its block stops) that the arguments so far are the call's, and
        // what waited for it is not sent, since it would open inside the call: the calls, text
        // and thinking are dropped (they were produced, and are billed so). Text or thinking
        // open at the failure ends marked cut, so an encoder may show it cut
        tool = null
        waiting = []
        calls.clear()
        close(true)
        return emit(ev)
      }
      default:
        return emit(ev)
    }
  }
}

/** The same normalizer, each event's output as an array (tests, `withBlocks`). */
export function createBlockNormalizer(): (ev: StreamEvent) => StreamEvent[] {
  let out: StreamEvent[] = []
  const normalize = blockBoundaries((ev) => out.push(ev))
  return (ev) => {
    out = []
    normalize(ev)
    return out
  }
}

/** An event stream with its block boundaries made explicit. */
export async function* withBlocks(events: AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent> {
  const normalize = createBlockNormalizer()
  for await (const ev of events) yield* normalize(ev)
}
