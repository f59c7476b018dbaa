// The reservation ledger on its own — sums per key, idempotent release, and expiry of a
// reservation that is never settled (so a request that died without a record cannot hold its
// key's credit for good).
import { expect, test } from 'bun:test'
import { CreditLedger } from '../../src/auth/credits.ts'

test('ledger: reservations sum per key; releasing twice or an unknown id changes nothing', () => {
  const l = new CreditLedger()
  const a = l.reserve('k1', 0.25)
  l.reserve('k1', 0.5)
  l.reserve('k2', 1)
  expect(l.reserved('k1')).toBeCloseTo(0.75, 15)
  l.release(a)
  l.release(a)
  l.release('rsv_unknown')
  l.release(undefined)
  expect(l.reserved('k1')).toBeCloseTo(0.5, 15)
  expect(l.reserved('k2')).toBe(1)
  expect(l.open).toBe(2)
})

test('ledger: a bad amount reserves nothing', () => {
  const l = new CreditLedger()
  for (const usd of [NaN, -1, Infinity]) l.reserve('k', usd)
  expect(l.reserved('k')).toBe(0)
})

test('ledger: an unsettled reservation expires after the TTL; a younger one stays', () => {
  let now = 1_000_000
  const l = new CreditLedger(() => now, 60_000)
  l.reserve('k', 1)
  now += 30_000
  const young = l.reserve('k', 2)
  now += 30_000 // the first is now 60 s old
  expect(l.reserved('k')).toBe(2)
  expect(l.open).toBe(1)
  l.release(young)
  expect(l.reserved('k')).toBe(0)
})

test('ledger: unflushed spend goes up at settlement and back to zero when written', () => {
  const l = new CreditLedger()
  l.addUnflushed('k', 0.1)
  l.addUnflushed('k', 0.2)
  expect(l.unflushed('k')).toBeCloseTo(0.3, 15)
  l.addUnflushed('k', -0.1)
  l.addUnflushed('k', -0.2)
  expect(l.unflushed('k')).toBe(0)
})
