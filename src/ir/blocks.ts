// Block boundaries, derived once for every encoder: each run of text or reasoning is
// bracketed by `*-start` / `*-end`, a signature ends its thinking block, tool inputs that
// were never closed are closed (at the next tool's start at the latest: one block is open at a
// time), and nothing stays open past `finish` or `error`.
// Boundaries an adapter already sent are kept, never doubled.
import type { StreamEvent } from './types.ts'

type Open = 'text' | 'reasoning' | null

/**
 * One stream's normalizer: each event goes to `emit` with the boundaries it implies, in order.
 * A delta inside the run already open (most of a stream) is handed on as it is, nothing made.
 */
export function blockBoundaries(emit: (ev: StreamEvent) => void): (ev: StreamEvent) => void {
  let open: Open = null
  const tools = new Set<number>()
  const close = () => {
    const was = open
    open = null
    if (was === 'text') emit({ type: 'text-end' })
    else if (was === 'reasoning') emit({ type: 'reasoning-end' })
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
        // one block at a time, as Anthropic streams them: a tool input that another follows is
        // complete (OpenAI streams parallel calls one after the other too)
        for (const index of tools) if (index !== ev.index) emit({ type: 'tool-input-end', index })
        tools.clear()
        tools.add(ev.index)
        return emit(ev)
      case 'tool-input-end':
        if (tools.delete(ev.index)) emit(ev)
        return
      case 'finish':
      case 'error':
        close()
        for (const index of tools) emit({ type: 'tool-input-end', index })
        tools.clear()
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
