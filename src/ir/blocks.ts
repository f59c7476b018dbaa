// Block boundaries, derived once for every encoder: each run of text or reasoning is
// bracketed by `*-start` / `*-end`, a signature ends its thinking block, tool inputs that
// were never closed are closed, and nothing stays open past `finish` or `error`.
// Boundaries an adapter already sent are kept, never doubled.
import type { StreamEvent } from './types.ts'

type Open = 'text' | 'reasoning' | null

export function createBlockNormalizer(): (ev: StreamEvent) => StreamEvent[] {
  let open: Open = null
  const tools = new Set<number>()
  const close = (): StreamEvent[] => {
    const was = open
    open = null
    return was === 'text' ? [{ type: 'text-end' }] : was === 'reasoning' ? [{ type: 'reasoning-end' }] : []
  }
  const enter = (kind: 'text' | 'reasoning'): StreamEvent[] => {
    if (open === kind) return []
    const out = close()
    open = kind
    out.push(kind === 'text' ? { type: 'text-start' } : { type: 'reasoning-start' })
    return out
  }
  return (ev) => {
    switch (ev.type) {
      case 'text-start':
        return [...close(), ((open = 'text'), ev)]
      case 'reasoning-start':
        return [...close(), ((open = 'reasoning'), ev)]
      case 'text-delta':
        return [...enter('text'), ev]
      case 'reasoning-delta':
        return [...enter('reasoning'), ev]
      case 'reasoning-signature':
        // A signature is the last thing of its thinking block.
        return [...enter('reasoning'), ev, ...close()]
      case 'text-end':
        return open === 'text' ? close() : []
      case 'reasoning-end':
        return open === 'reasoning' ? close() : []
      case 'reasoning-redacted':
        return [...close(), ev]
      case 'tool-input-start':
        tools.add(ev.index)
        return [...close(), ev]
      case 'tool-input-end':
        if (!tools.delete(ev.index)) return []
        return [ev]
      case 'finish':
      case 'error': {
        const out = close()
        for (const index of tools) out.push({ type: 'tool-input-end', index })
        tools.clear()
        out.push(ev)
        return out
      }
      default:
        return [ev]
    }
  }
}

/** An event stream with its block boundaries made explicit. */
export async function* withBlocks(events: AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent> {
  const normalize = createBlockNormalizer()
  for await (const ev of events) yield* normalize(ev)
}
