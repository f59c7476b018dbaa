// The gateway's record id: time-ordered, so a record's insert appends to the primary key's
// index (and PostgreSQL's tie-breaker of one ms follows the order records were made), and
// random past the time, so instances sharing a database never make the same one.
import { expect, test } from 'bun:test'
import { newGenerationId } from '../../src/generations/row.ts'

const ms = (id: string) => parseInt(id.slice(4, 16), 16)

test('ids made one after another sort in the order they were made, each new', () => {
  const before = Date.now()
  const ids = Array.from({ length: 20_000 }, newGenerationId)
  const after = Date.now()
  for (const id of ids) expect(id).toMatch(/^gen-[0-9a-f]{32}$/)
  expect(new Set(ids).size).toBe(ids.length)
  for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) throw new Error(`out of order: ${ids[i - 1]} then ${ids[i]}`)
  // the first 48 bits are the time they were made, in epoch ms (a burst of more ids in one ms
  // than its counter holds runs a few ms ahead, so that they stay in order)
  expect(ms(ids[0]!)).toBeGreaterThanOrEqual(before)
  expect(ms(ids.at(-1)!)).toBeLessThanOrEqual(after + 50)
})

test('past the time and a counter, the rest is random (what keeps instances sharing a database apart)', () => {
  // the last 16 hex digits (64 bits, 62 of them random) of ids made back to back share nothing
  const tails = new Set(Array.from({ length: 1_000 }, () => newGenerationId().slice(-16)))
  expect(tails.size).toBe(1_000)
})
