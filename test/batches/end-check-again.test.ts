// A batch's end is looked for when its last item's result is written. If the database cannot
// answer that look (away, or full), nothing else may wake the batch: no item is left in flight
// to end. The look is tried again until it is answered, and the batch ends.
import { expect, test } from 'bun:test'
import { Ending, type EndingDeps } from '../../src/batches/ending.ts'
import { newActive } from '../../src/batches/active.ts'
import type { BatchRow } from '../../src/batches/types.ts'

const row = { id: 'batch_1', apiKeyId: 'key_1', endpoint: '/v1/messages', status: 'processing', family: 'anthropic', total: 2, succeeded: 2, failed: 0 } as unknown as BatchRow

function rig(fail: (n: number) => Error | null) {
  const logged: string[] = []
  const log = { info: () => {}, warn: () => {}, debug: () => {}, error: (msg: string) => void logged.push(msg) }
  let asked = 0
  const transitions: unknown[] = []
  const store = {
    unfinished: async () => {
      const e = fail(++asked)
      if (e) throw e
      return 0
    },
    byId: async () => row,
    transition: async (_id: string, _from: string[], set: unknown) => (transitions.push(set), true),
  }
  const active = new Map()
  const a = newActive(row, 4)
  a.exhausted = true
  active.set(a.id, a)
  const ending = new Ending({ s: { log } as unknown as EndingDeps['s'], store: store as unknown as EndingDeps['store'], active, closed: () => false } as unknown as EndingDeps)
  return { ending, a, active, transitions, logged, asked: () => asked }
}

const until = async (ok: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end && !ok(); ) await Bun.sleep(20)
}

test('an end check the database could not answer is tried again, and the batch ends', async () => {
  const down = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' })
  const r = rig((n) => (n <= 2 ? down : null))
  r.ending.maybeEnd(r.a)
  await until(() => r.transitions.length > 0, 5_000)
  expect(r.asked()).toBe(3)
  expect(r.transitions).toEqual([expect.objectContaining({ status: 'completed' })])
  expect(r.active.has(r.a.id)).toBe(false)
})

test('a full disk is waited out the same way; an error of another kind is logged, not looped on', async () => {
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
  const r = rig((n) => (n === 1 ? full : null))
  r.ending.maybeEnd(r.a)
  await until(() => r.transitions.length > 0, 5_000)
  expect(r.transitions.length).toBe(1)

  const bug = rig(() => new Error('no such column'))
  bug.ending.maybeEnd(bug.a)
  await Bun.sleep(1_300)
  expect(bug.asked()).toBe(1)
  expect(bug.logged).toEqual(['batches: scheduling failed'])
})
