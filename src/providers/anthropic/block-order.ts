// A Messages stream's content blocks, sent on one at a time in the order they started.
// Anthropic stops each block before it starts the next, but servers of the wire other than
// Anthropic (gateways, proxies) may start a block while an earlier one is still open (a
// thinking block waiting for its signature) and interleave their deltas. The IR's text and
// thinking events carry no block index: their block is the run they fall in. So the events of a
// block that starts while an earlier one is open wait, in order, until every block before it
// stopped; then they go on as if it had started there. A stream in Anthropic's own order waits
// for nothing. At the message's end (`drain`) what waited goes out, block by block.
// What waits is bounded (HELD_MAX characters, BLOCKS_MAX blocks): past it, as for a server that
// never stops a block, everything waiting goes out in order and the rest of the stream goes on as
// it comes (two blocks' deltas may then run together, as they came); only the blocks still open
// are kept then (OPEN_MAX at most), for their ends at the message's end. A stream that fails goes out with
// what waited (`release`): it was produced, and is billed so.
import type { StreamEvent } from '../../ir/types.ts'

interface Entry<B> {
  block: B
  open: boolean
  /** Its events while a block before it is open. */
  held: StreamEvent[]
}

/** The text that waits for an earlier block, all blocks together, before nothing waits any more. */
export const HELD_MAX = 64 * 1024
/** Blocks in order at once (empty ones weigh nothing against HELD_MAX, and each is an entry). */
export const BLOCKS_MAX = 1024
/** Blocks kept open once nothing waits: a server that starts blocks and never stops them is not followed past it. */
export const OPEN_MAX = 4096

/** `B`: the caller's block (a server that reuses an index starts a new one). */
export interface BlockOrder<B> {
  /** A block started, with the events its start makes. */
  start(block: B, events: StreamEvent[], out: StreamEvent[]): void
  /** Events of a block (of none started: they go on at once, as they came). */
  events(block: B | undefined, events: StreamEvent[], out: StreamEvent[]): void
  /** Blocks it keeps (bounded). */
  readonly size: number
  /** A block stopped, with the events its end makes. */
  stop(block: B | undefined, events: StreamEvent[], out: StreamEvent[]): void
  /** The message ended: every block is stopped (`closing` gives the end events of one still open), what waited goes out. */
  drain(closing: (block: B) => StreamEvent[], out: StreamEvent[]): void
  /** The stream failed: what waited goes out as it is, in the order the blocks started, their ends not made. */
  release(out: StreamEvent[]): void
}

/** What an event weighs against HELD_MAX: its text. */
function weight(ev: StreamEvent): number {
  switch (ev.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return ev.text.length
    case 'reasoning-signature':
      return ev.signature.length
    case 'reasoning-redacted':
      return ev.data.length
    case 'tool-input-delta':
      return ev.delta.length
    case 'tool-input-start':
      return ev.name.length + ev.id.length
    default:
      return 1
  }
}

export function blockOrder<B>(): BlockOrder<B> {
  /** The blocks not yet all sent, in the order they started: the first one's events go straight on. */
  const queue: Entry<B>[] = []
  /** The same entries by their block (a stream of many blocks looks each up at once). */
  const entries = new Map<B, Entry<B>>()
  /** What waits, weighed; past HELD_MAX, nothing waits any more (`loose`). */
  let held = 0
  let loose = false
  const find = (block: B | undefined): Entry<B> | undefined => (block === undefined ? undefined : entries.get(block))
  /** Every block's waiting events go out, in the order the blocks started. */
  const release = (out: StreamEvent[]) => {
    for (const e of queue) {
      out.push(...e.held)
      e.held = []
    }
    held = 0
  }
  /** Nothing waits any more: what waited goes out, and only the open blocks are kept (for their ends). */
  const loosen = (out: StreamEvent[]) => {
    loose = true
    release(out)
    for (const e of queue) if (!e.open) entries.delete(e.block)
    queue.length = 0
  }
  const route = (e: Entry<B> | undefined, events: StreamEvent[], out: StreamEvent[]) => {
    if (loose || e === undefined || e === queue[0]) return void out.push(...events)
    e.held.push(...events)
    for (const ev of events) held += weight(ev)
    if (held > HELD_MAX) loosen(out)
  }
  /** The first block stopped: the next ones' held events go out, up to one still open, which goes on live. */
  const advance = (out: StreamEvent[]) => {
    while (queue.length > 0 && !queue[0]!.open) {
      entries.delete(queue.shift()!.block)
      const next = queue[0]
      if (next) {
        out.push(...next.held)
        for (const ev of next.held) held -= weight(ev)
        next.held = []
      }
    }
  }
  return {
    get size() {
      return entries.size
    },
    start(block, events, out) {
      const e: Entry<B> = { block, open: true, held: [] }
      if (!loose && queue.length >= BLOCKS_MAX) loosen(out)
      // the oldest block still open is forgotten (its end is not made at the message's end)
      if (loose && entries.size >= OPEN_MAX) entries.delete(entries.keys().next().value as B)
      if (!loose) queue.push(e)
      entries.set(block, e)
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
      if (loose && e) entries.delete(e.block)
      advance(out)
    },
    drain(closing, out) {
      if (loose) {
        for (const e of entries.values()) out.push(...closing(e.block))
        entries.clear()
        return
      }
      while (queue.length > 0) {
        const e = queue[0]!
        if (e.open) out.push(...closing(e.block))
        e.open = false
        advance(out)
      }
    },
    release,
  }
}
