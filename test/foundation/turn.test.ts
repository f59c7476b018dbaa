// Large bodies that arrive together are parsed and checked one a turn of the event loop, so a
// small request that came in meanwhile is answered between them rather than after them all.
import { expect, test } from 'bun:test'
import { turnOfItsOwn } from '../../src/lib/turn.ts'

test('callers are let go in the order they asked, each in a turn of the loop of its own', async () => {
  let turn = 0
  let ticking = true
  const tick = () => {
    turn++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  const seen: { who: number; turn: number }[] = []
  await Promise.all([0, 1, 2, 3, 4].map((who) => turnOfItsOwn().then(() => void seen.push({ who, turn }))))
  ticking = false
  expect(seen.map((s) => s.who)).toEqual([0, 1, 2, 3, 4])
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.turn).toBeGreaterThan(seen[i - 1]!.turn)
  // and the gate is open again at once for the next caller
  const t0 = turn
  await turnOfItsOwn()
  expect(turn - t0).toBeLessThanOrEqual(1)
})
