// A Messages stream's content blocks, sent on one at a time in the order they started.
// Anthropic stops each block before it starts the next, but servers of the wire other than
// Anthropic (gateways, proxies) may start a block while an earlier one is still open (a
// thinking block waiting for its signature) and interleave their deltas. The IR's text and
// thinking events carry no block index: their block is the run they fall in. So the events of a
// block that starts while an earlier one is open wait, in order, until every block before it
// stopped; then they go on as if it had started there. A stream in Anthropic's own order waits
// for nothing. At the message's end (`drain`) what waited goes out, block by block.
import type { StreamEvent } from '../../ir/types.ts'

interface Entry<B> {
  block: B
  open: boolean
  /** Its events while a block before it is open. */
  held: StreamEvent[]
}

/** `B`: the caller's block (a server that reuses an index starts a new one). */
export interface BlockOrder<B> {
  /** A block started, with the events its start makes. */
  start(block: B, events: StreamEvent[], out: StreamEvent[]): void
  /** Events of a block (of none started: they go on at once, as they came). */
  events(block: B | undefined, events: StreamEvent[], out: StreamEvent[]): void
  /** A block stopped, with the events its end makes. */
  stop(block: B | undefined, events: StreamEvent[], out: StreamEvent[]): void
  /** The message ended: every block is stopped (`closing` gives the end events of one still open), what waited goes out. */
  drain(closing: (block: B) => StreamEvent[], out: StreamEvent[]): void
}

export function blockOrder<B>(): BlockOrder<B> {
  /** The blocks not yet all sent, in the order they started: the first one's events go straight on. */
  const queue: Entry<B>[] = []
  const find = (block: B | undefined): Entry<B> | undefined => (block === undefined ? undefined : queue.find((e) => e.block === block))
  const route = (e: Entry<B> | undefined, events: StreamEvent[], out: StreamEvent[]) => {
    if (e === undefined || e === queue[0]) out.push(...events)
    else e.held.push(...events)
  }
  /** The first block stopped: the next ones' held events go out, up to one still open, which goes on live. */
  const advance = (out: StreamEvent[]) => {
    while (queue.length > 0 && !queue[0]!.open) {
      queue.shift()
      const next = queue[0]
      if (next) {
        out.push(...next.held)
        next.held = []
      }
    }
  }
  return {
    start(block, events, out) {
      const e: Entry<B> = { block, open: true, held: [] }
      queue.push(e)
      route(e, events, out)
    },
    events(block, events, out) {
      route(find(block), events, out)
    },
    stop(block, events, out) {
      // a block already sent whole (or never started) has nothing waiting: its events go on
      const e = find(block)
      route(e, events, out)
      if (e) e.open = false
      advance(out)
    },
    drain(closing, out) {
      while (queue.length > 0) {
        const e = queue[0]!
        if (e.open) out.push(...closing(e.block))
        e.open = false
        advance(out)
      }
    },
  }
}
