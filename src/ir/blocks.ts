// Block boundaries, derived once for every encoder: each run of text or reasoning is
// bracketed by `*-start` / `*-end`, a signature ends its thinking block, one tool input is open
// at a time (as Anthropic streams them), tool inputs that were never closed are closed at the
// finish, and nothing stays open past `finish` or `error` (a call an error cut off is dropped,
// not ended).
// A tool call that starts while another is open waits, its argument pieces kept, until that one
// ends: OpenAI streams parallel calls one after the other, but its wire numbers each piece by
// call and an upstream may interleave them; a piece is never lost to a block already closed.
// Boundaries an adapter already sent are kept, never doubled.
import type { StreamEvent } from './types.ts'

type Open = 'text' | 'reasoning' | null
type ToolStart = Extract<StreamEvent, { type: 'tool-input-start' }>

/** A tool call that waits for the open one to end: its start, its pieces so far, whether it ended. */
interface Waiting {
  start: ToolStart
  pieces: string[]
  ended: boolean
}

/**
 * One stream's normalizer: each event goes to `emit` with the boundaries it implies, in order.
 * A delta inside the run already open (most of a stream) is handed on as it is, nothing made.
 */
export function blockBoundaries(emit: (ev: StreamEvent) => void): (ev: StreamEvent) => void {
  let open: Open = null
  /** The tool input open now, and those that wait for it, in the order they started. */
  let tool: number | null = null
  const waiting = new Map<number, Waiting>()
  /** The open tool input is complete: the next that waits opens, with its pieces so far; at the end, all do. */
  const endTool = (all: boolean) => {
    if (tool !== null) emit({ type: 'tool-input-end', index: tool })
    tool = null
    for (const [index, w] of waiting) {
      waiting.delete(index)
      emit(w.start)
      if (w.pieces.length > 0) emit({ type: 'tool-input-delta', index, delta: w.pieces.join('') })
      if (!w.ended && !all) {
        tool = index
        return
      }
      emit({ type: 'tool-input-end', index })
    }
  }
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
  return (ev) => {
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
      case 'reasoning-redacted':
        close()
        return emit(ev)
      case 'tool-input-start':
        close()
        if (tool !== null && tool !== ev.index) {
          if (!waiting.has(ev.index)) waiting.set(ev.index, { start: ev, pieces: [], ended: false })
          return
        }
        if (tool === ev.index) return
        tool = ev.index
        return emit(ev)
      case 'tool-input-delta': {
        const w = waiting.get(ev.index)
        if (w) w.pieces.push(ev.delta)
        else emit(ev)
        return
      }
      case 'tool-input-end': {
        if (ev.index === tool) return endTool(false)
        const w = waiting.get(ev.index)
        if (w) w.ended = true
        return
      }
      case 'finish':
        close()
        endTool(true)
        return emit(ev)
      case 'error':
        // A call cut off by the failure is not ended: its end would tell the client (an agent
        // that runs a tool when its block stops) that the arguments so far are the call's. Text
        // or thinking it cut ends marked so: an encoder may show it cut rather than whole
        close(true)
        tool = null
        waiting.clear()
        return emit(ev)
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
