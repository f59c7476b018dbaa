// What waits for a busy key's next requests, on its own (no Redis): who gets what was taken
// ahead, when more is asked for, and that what is not used always goes back exactly once.
import { describe, expect, test } from 'bun:test'
import { Ahead, BUSY_MS, CROWDED, MAX_DEPTH, PACE_MS, STALE_MS, turns } from '../../src/cluster/ahead.ts'
import { nextTurn } from '../../src/lib/turn.ts'

function pool() {
  const given: number[] = []
  const ahead = new Ahead<number>((v) => given.push(v))
  return { ahead, given }
}

const any = () => true

describe('taken ahead, alone', () => {
  test('busy only when the last request of the name came within BUSY_MS', () => {
    const { ahead } = pool()
    expect(ahead.busy('k', 0)).toBe(false)
    expect(ahead.busy('k', BUSY_MS)).toBe(true)
    expect(ahead.busy('k', 3 * BUSY_MS)).toBe(false)
    expect(ahead.busy('other', 3 * BUSY_MS)).toBe(false)
  })

  test('what comes back is taken fresh and fitting, once; stale or too small is left', () => {
    const { ahead } = pool()
    ahead.busy('k', 0)
    expect(ahead.wanted('k')).toBe(1)
    ahead.settle('k', 5, 10)
    expect(ahead.take('k', 10, (v) => v >= 6)).toBeUndefined()
    expect(ahead.take('k', 10 + STALE_MS + 1, any)).toBeUndefined()
    expect(ahead.take('k', 20, any)).toBe(5)
    expect(ahead.take('k', 20, any)).toBeUndefined()
    expect(ahead.used).toBe(1)
  })

  test('a request that finds nothing ready waits for what is on its way, and never two for one', async () => {
    const { ahead } = pool()
    ahead.busy('k', 0)
    expect(ahead.wanted('k')).toBe(1)
    expect(ahead.take('k', 1, any)).toBeUndefined()
    const first = ahead.next('k', any)
    expect(first).toBeInstanceOf(Promise)
    // one on its way, one waiter already: the next request asks Redis itself
    expect(ahead.next('k', any)).toBeUndefined()
    ahead.settle('k', 7, 2)
    expect(await first).toBe(7)
    expect(ahead.size).toBe(0)
    expect(ahead.used).toBe(1)
  })

  test('what comes back refused, or too small, sends its waiter to Redis; too small is kept for another', async () => {
    const { ahead } = pool()
    ahead.busy('k', 0)
    ahead.take('k', 1, any) // a miss while nothing is coming: the depth stays
    expect(ahead.wanted('k')).toBe(1)
    const refused = ahead.next('k', any)!
    ahead.settle('k', undefined, 2)
    expect(await refused).toBeUndefined()
    expect(ahead.wanted('k')).toBe(1)
    const big = ahead.next('k', (v) => v >= 10)!
    ahead.settle('k', 3, 3)
    expect(await big).toBeUndefined()
    expect(ahead.take('k', 4, any)).toBe(3)
  })

  test('the depth grows while requests outrun what comes back, and asks in batches once half is gone', () => {
    const { ahead } = pool()
    ahead.busy('k', 0)
    expect(ahead.wanted('k')).toBe(1)
    // every miss while one is on its way: one deeper, up to the most
    for (let i = 0; i < 2 * MAX_DEPTH; i++) ahead.take('k', 1, any)
    expect(ahead.wanted('k')).toBe(MAX_DEPTH - 1)
    for (let i = 0; i < MAX_DEPTH; i++) ahead.settle('k', i, 2)
    expect(ahead.size).toBe(MAX_DEPTH)
    // more than half left: nothing asked
    for (let i = 0; i < MAX_DEPTH / 2 - 1; i++) ahead.take('k', 3, any)
    expect(ahead.wanted('k')).toBe(0)
    // half left: as many as fill it, at once
    ahead.take('k', 3, any)
    expect(ahead.wanted('k')).toBe(MAX_DEPTH / 2)
  })

  test('a steady rate keeps ready what its requests use in PACE_MS, asked for in one go', () => {
    const { ahead } = pool()
    // one request a ms: the time between them settles near 1 ms, and with it the depth near PACE_MS
    let now = 0
    for (let i = 0; i < 100; i++) ahead.busy('fast', (now += 1))
    const fast = ahead.wanted('fast')
    expect(fast).toBeGreaterThanOrEqual(PACE_MS - 1)
    expect(fast).toBeLessThanOrEqual(Math.min(MAX_DEPTH, PACE_MS))
    // one every 10 ms: two
    for (let i = 0; i < 100; i++) ahead.busy('slow', (now += 10))
    expect(ahead.wanted('slow')).toBe(2)
    // a pause past BUSY_MS: it starts over from one
    ahead.busy('paused', now)
    ahead.busy('paused', now + 1)
    ahead.busy('paused', (now += 1 + 2 * BUSY_MS))
    ahead.busy('paused', (now += 1))
    expect(ahead.wanted('paused')).toBe(1)
  })

  test('what rides on a call going anyway fills the depth; alone, only once half is gone', () => {
    const { ahead } = pool()
    let now = 0
    for (let i = 0; i < 100; i++) ahead.busy('k', (now += 1))
    const depth = ahead.wanted('k')
    for (let i = 0; i < depth; i++) ahead.settle('k', i, now)
    for (let i = 0; i < 3; i++) expect(ahead.take('k', now, any)).toBe(i)
    expect(ahead.wanted('k')).toBe(0)
    expect(ahead.wanted('k', true)).toBe(3)
    expect(ahead.wanted('k', true)).toBe(0)
  })

  test('a crowded loop takes nothing ahead: many requests a turn turn it off, one a turn back on', async () => {
    for (let t = 0; t < 30; t++) {
      for (let i = 0; i < 2 * CROWDED; i++) turns.ask()
      await nextTurn()
    }
    expect(turns.ask()).toBe(true)
    await nextTurn()
    for (let t = 0; t < 60; t++) {
      turns.ask()
      await nextTurn()
    }
    expect(turns.ask()).toBe(false)
    await nextTurn()
  })

  test('what goes stale is given back once, and the depth shrinks; a stop gives back the rest and ends every wait', async () => {
    const { ahead, given } = pool()
    ahead.busy('k', 0)
    ahead.wanted('k')
    ahead.take('k', 0, any) // depth 2
    ahead.wanted('k')
    ahead.settle('k', 1, performance.now())
    ahead.settle('k', 2, performance.now())
    await Bun.sleep(STALE_MS * 3)
    expect(given.sort()).toEqual([1, 2])
    expect(ahead.size).toBe(0)
    expect(ahead.wanted('k')).toBe(1) // depth back to 1
    const waiting = ahead.next('k', any)!
    ahead.busy('j', 0)
    ahead.wanted('j')
    ahead.settle('j', 9, performance.now())
    ahead.close()
    expect(await waiting).toBeUndefined()
    expect(given.sort()).toEqual([1, 2, 9])
    // what comes back after the stop goes straight back
    ahead.settle('k', 4, performance.now())
    expect(given.sort()).toEqual([1, 2, 4, 9])
    expect(ahead.wanted('k')).toBe(0)
  })
})
