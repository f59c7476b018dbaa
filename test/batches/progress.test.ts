// progressOf: done of total, the rate since the batch started running and the time left.
import { expect, test } from 'bun:test'
import { formatDuration, progressOf } from '../../src/batches/progress.ts'
import { bar } from '../../src/batches/watch.ts'

const row = (over: Partial<Parameters<typeof progressOf>[0]>) => ({ total: 2000, succeeded: 0, failed: 0, status: 'processing' as const, inProgressAt: 1_000_000, endedAt: null, ...over })

test('queued: nothing done, no rate, time left unknown', () => {
  expect(progressOf(row({ status: 'queued' as never, inProgressAt: null }), 1_005_000)).toEqual({ total: 2000, completed: 0, failed: 0, done: 0, fraction: 0, itemsPerSecond: null, etaSeconds: null, ended: false })
})

test('running: completed and failed both count as done; rate since it started; time left at that rate', () => {
  const p = progressOf(row({ succeeded: 450, failed: 50 }), 1_000_000 + 5_000)
  expect(p).toMatchObject({ done: 500, fraction: 0.25, itemsPerSecond: 100, etaSeconds: 15, ended: false })
  expect(bar(p)).toBe('[########......................]')
})

test('ended: 100 %, the rate over the whole run, nothing left; an empty batch that ended is full too', () => {
  const p = progressOf(row({ succeeded: 2000, status: 'completed' as never, endedAt: 1_000_000 + 4_000 }), 9_999_999)
  expect(p).toMatchObject({ fraction: 1, itemsPerSecond: 500, etaSeconds: 0, ended: true })
  expect(bar(p)).toBe(`[${'#'.repeat(30)}]`)
  expect(progressOf(row({ total: 0, status: 'failed' as never, endedAt: 1_000_000 }), 1_000_001).fraction).toBe(1)
})

test('formatDuration', () => {
  expect([0.4, 59, 61, 3599, 3600, 7325].map(formatDuration)).toEqual(['0s', '59s', '1m 1s', '59m 59s', '1h 0m', '2h 2m'])
})
