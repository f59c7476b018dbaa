// A burst of 100 identical requests on a key funded for 5.5 of them: every answer is a 200 or a
// 402, and at most 7 are served (the covered ones, and one past the credit). What the credit
// tests of every kind of hidden cost share.
import { expect } from 'bun:test'

export async function expectBurstBounded(send: () => Promise<Response>): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: 100 }, async () => {
    const r = await send()
    await r.arrayBuffer()
    return r.status
  }))
  expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([])
  const served = statuses.filter((s) => s === 200).length
  expect(served).toBeGreaterThanOrEqual(1)
  expect(served).toBeLessThanOrEqual(7)
}
