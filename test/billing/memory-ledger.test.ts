// The reservation ledger on its own — sums per key, idempotent release, and expiry of a
// reservation that is never settled (so a request that died without a record cannot hold its
// key's credit for good).
import { expect, test } from 'bun:test'
import { MemoryLedger } from '../../src/billing/ledger.ts'
import { SpendByKey } from '../../src/billing/spend.ts'

test('ledger: reservations sum per key; releasing twice or an unknown id changes nothing', () => {
  const l = new MemoryLedger()
  const a = l.hold('k1', 0.25)
  l.hold('k1', 0.5)
  l.hold('k2', 1)
  expect(l.reserved('k1')).toBeCloseTo(0.75, 15)
  l.settle(a)
  l.settle(a)
  l.settle('rsv_unknown')
  l.settle(undefined)
  expect(l.reserved('k1')).toBeCloseTo(0.5, 15)
  expect(l.reserved('k2')).toBe(1)
  expect(l.open).toBe(2)
})

test('ledger: a bad amount reserves nothing', () => {
  const l = new MemoryLedger()
  for (const usd of [NaN, -1, Infinity]) l.hold('k', usd)
  expect(l.reserved('k')).toBe(0)
})

test('ledger: an unsettled reservation expires after the TTL; a younger one stays', () => {
  let now = 1_000_000
  const l = new MemoryLedger(() => now, 60_000)
  l.hold('k', 1)
  now += 30_000
  const young = l.hold('k', 2)
  now += 30_000 // the first is now 60 s old
  expect(l.reserved('k')).toBe(2)
  expect(l.open).toBe(1)
  l.settle(young)
  expect(l.reserved('k')).toBe(0)
})

test('unwritten spend goes up as costs are charged and back to zero as they are stored', () => {
  const l = new SpendByKey()
  l.add('k', 0.1)
  l.add('k', 0.2)
  expect(l.get('k')).toBeCloseTo(0.3, 15)
  l.add('k', -0.1)
  l.add('k', -0.2)
  expect(l.get('k')).toBe(0)
  expect(l.drain()).toEqual([])
})
