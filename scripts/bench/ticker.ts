// Long fake-upstream streams on one shared ticker: every stream is put in one of `BUCKETS`
// slots, and each tick sends the next chunk of the streams in the slot whose turn it is, so
// chunks leave spread over the gap (as independent streams would) at the cost of a single
// timer for all of them. Bodies are Bun's direct streams (written to, no queue between), so
// thousands of streams stay cheap on the load core. Each chunk is stamped with its send time.
import { epochMs, stamp } from './wire.ts'

const BUCKETS = 10

interface Open {
  s: { content(i: number, text: string): string; end(): string }
  c: { write(s: string): unknown; flush(): unknown; close(): unknown }
  i: number
  chunks: number
  done: () => void
}

let slots: Set<Open>[] | undefined
let next = 0
let placed = 0

function tick() {
  const slot = slots![next]!
  next = (next + 1) % BUCKETS
  for (const o of slot) {
    try {
      o.c.write(o.s.content(o.i, stamp(epochMs())))
      if (++o.i >= o.chunks) {
        o.c.write(o.s.end())
        o.c.flush()
        o.c.close()
        slot.delete(o)
        o.done()
      } else o.c.flush()
    } catch {
      slot.delete(o) // the client went away
      o.done()
    }
  }
}

/** A body sending `chunks` content frames `gapMs` apart, then the stream's end. */
export function tickedStream(s: Open['s'], pace: { chunks: number; gapMs: number }, signal: AbortSignal): ReadableStream<Uint8Array> {
  if (!slots) {
    slots = Array.from({ length: BUCKETS }, () => new Set<Open>())
    setInterval(tick, pace.gapMs / BUCKETS)
  }
  const slot = slots[placed++ % BUCKETS]!
  return new ReadableStream({
    type: 'direct',
    pull(c: Open['c']) {
      return new Promise<void>((done) => {
        // the first chunk at once, as a real upstream's first token
        c.write(s.content(0, stamp(epochMs())))
        c.flush()
        const open: Open = { s, c, i: 1, chunks: pace.chunks, done }
        slot.add(open)
        signal.addEventListener('abort', () => (slot.delete(open), done()), { once: true })
      })
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>)
}
