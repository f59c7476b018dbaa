// A key with no credit limit guards no admission, so a shared ledger may count its costs later
// (Redis gathers them for a second: test/cluster/redis-ahead.test.ts). Billing says which
// charges those are: a cost with no hold, of a key that has no limit as this instance knows it
// now. A funded key's costs, held or not, are never told to wait.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { Billing } from '../../src/billing/billing.ts'
import { MemoryLedger } from '../../src/billing/ledger.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices
beforeAll(async () => {
  t = await testServices()
})
afterAll(async () => {
  await t.close()
})

/** A memory ledger that notes how each settlement was asked for. */
class Noting extends MemoryLedger {
  told: { keyId?: string; usd: number; unlimited?: boolean }[] = []
  override settle(id: string | undefined, keyId?: string, usd = 0, unlimited?: boolean): void {
    this.told.push({ keyId, usd, unlimited })
    super.settle(id)
  }
}

test('only a cost with no hold, of a key with no limit now, may wait', async () => {
  const keys = new KeyStore(t.s.storage)
  const ledger = new Noting()
  const billing = new Billing({ keys, catalog: t.s.catalog, sql: t.s.storage.sql }, ledger)
  const { record: open } = await t.s.keys.create({ name: 'no limit', credits: null })
  const { record: funded } = await t.s.keys.create({ name: 'funded', credits: 10 })
  await keys.load()

  billing.charge(open.id, undefined, 0.5)
  billing.charge(funded.id, undefined, 0.25)
  const held = await billing.admit({ apiKey: funded, model: t.s.catalog.resolve('mock-gpt')!, promptTokens: 10, maxOutputTokens: 10 })
  billing.charge(funded.id, held?.reservationId, 0.125)
  expect(ledger.told).toEqual([
    { keyId: open.id, usd: 0.5, unlimited: true },
    { keyId: funded.id, usd: 0.25, unlimited: false },
    { keyId: funded.id, usd: 0.125, unlimited: false },
  ])

  // funded since: as this instance knows the key now, not as the request saw it
  await t.s.storage.sql.run('UPDATE api_keys SET credits = ? WHERE id = ?', [5, open.id])
  await keys.reloadOne(open.id)
  ledger.told = []
  billing.charge(open.id, undefined, 0.5)
  expect(ledger.told).toEqual([{ keyId: open.id, usd: 0.5, unlimited: false }])
})
