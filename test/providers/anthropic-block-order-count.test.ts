// What the block order keeps is bounded in blocks, not only in text: an empty block weighs
// nothing against the text bound, so a server that starts blocks without end behind one it keeps
// open made the gateway keep an entry for each, for the whole stream.
import { describe, expect, test } from 'bun:test'
import { blockOrder, BLOCKS_MAX, OPEN_MAX } from '../../src/providers/anthropic/block-order.ts'
import type { StreamEvent } from '../../src/ir/types.ts'

const text = (t: string): StreamEvent => ({ type: 'text-delta', text: t })

describe('the blocks kept behind an open one', () => {
  test('blocks started and stopped behind one never stopped: a bounded number is kept, every event goes out once', () => {
    const order = blockOrder<number>()
    const out: StreamEvent[] = []
    order.start(0, [{ type: 'reasoning-start' } as StreamEvent], out)
    for (let b = 1; b <= 100_000; b++) {
      order.start(b, [{ type: 'text-start' }], out)
      order.events(b, [text(`${b} `)], out)
      order.stop(b, [{ type: 'text-end' } as StreamEvent], out)
      expect(order.size).toBeLessThanOrEqual(BLOCKS_MAX + 1)
    }
    order.drain(() => [{ type: 'reasoning-end' } as StreamEvent], out)
    expect(order.size).toBe(0)
    // the first block's start, each later block's three events, and the open one's end at the drain
    expect(out.length).toBe(1 + 3 * 100_000 + 1)
    expect(out.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text).slice(0, 3)).toEqual(['1 ', '2 ', '3 '])
  })

  test('blocks started and never stopped: at most OPEN_MAX are kept for their ends', () => {
    const order = blockOrder<number>()
    const out: StreamEvent[] = []
    for (let b = 0; b < 50_000; b++) order.start(b, [{ type: 'text-start' }], out)
    expect(order.size).toBeLessThanOrEqual(OPEN_MAX)
    const ends: StreamEvent[] = []
    order.drain(() => [{ type: 'text-end' } as StreamEvent], ends)
    expect(ends.length).toBeLessThanOrEqual(OPEN_MAX)
    expect(ends.length).toBeGreaterThan(0)
  })
})
