// The key cache's `spent` is what embedded admission reads (the memory ledger): the database's
// figure plus what this process charged and has not stored. A cache read again from the
// database (a poll, a change elsewhere) must count every cost exactly once, whenever it lands:
// while a write of records is open, just after it commits, or between a batch worker storing
// an item's cost and the main thread hearing of it. Counted twice, a key is refused requests
// it paid for; counted never, it runs past its credit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { Billing } from '../../src/billing/billing.ts'
import { MemoryLedger } from '../../src/billing/ledger.ts'
import { Recorder } from '../../src/generations/recorder.ts'
import { createLogger } from '../../src/http/log.ts'
import { genInput } from '../generations/input.ts'
import { testServices, type TestServices } from '../generations/services.ts'
import { onPostgres } from '../helpers/database.ts'

// mock-gpt at $0.001 a token: 5 + 10 tokens cost $0.015
const YAML = `pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n`
const COST = 0.015

let t: TestServices
beforeAll(async () => {
  t = await testServices({}, YAML)
})
afterAll(async () => {
  await t.close()
})

async function instance() {
  const keys = new KeyStore(t.s.storage)
  const billing = new Billing({ keys, catalog: t.s.catalog, sql: t.s.storage.sql }, new MemoryLedger())
  await keys.load()
  const log = createLogger('error', () => {})
  const recorder = new Recorder({ config: t.s.config, storage: t.s.storage, catalog: t.s.catalog, billing, log }, { flushDelayMs: 60_000 })
  return { keys, billing, recorder }
}

async function fundedKey(keys: KeyStore, credits: number) {
  const { record } = await t.s.keys.create({ name: 'cached spent', credits })
  await keys.reloadOne(record.id)
  return record
}

const microtasks = async (n: number) => {
  for (let i = 0; i < n; i++) await undefined
}

// On PostgreSQL the row comes back on a connection of its own, in either order with the write's
// commit on another: read across it, the cost was counted never (the row read before the commit,
// the charge ended after) or twice. Admission there reads the row itself, but the dashboard, a
// key's own figures and Redis's reseed take the cached one.
describe('the cached spend of a funded key, on either store', () => {
  test('a reload landing anywhere in a write of records counts the cost once', async () => {
    const i = await instance()
    const wrong: string[] = []
    try {
      for (let hops = 0; hops < 40; hops++) {
        const key = await fundedKey(i.keys, 1)
        const admission = await i.billing.admit({ apiKey: key, model: t.s.catalog.resolve('mock-gpt')!, promptTokens: 10, maxOutputTokens: 10 })
        i.recorder.record(genInput(t.s.catalog, key, { model: 'mock-gpt', usage: { inputTokens: 5, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, reservationId: admission?.reservationId }))
        const written = i.recorder.flush()
        await microtasks(hops)
        await Promise.all([i.keys.invalidate(), written])
        const spent = i.keys.current(key.id)!.spent
        if (Math.abs(spent - COST) > 1e-9) wrong.push(`reload after ${hops} microtasks: ${spent}`)
      }
    } finally {
      await i.recorder.stop()
      await i.billing.stop()
    }
    expect(wrong).toEqual([])
  })
})

// the memory ledger is the embedded (SQLite) one; on PostgreSQL admission reads the row itself
describe.skipIf(onPostgres)('the cached spend of a funded key', () => {
  test('a batch item stored by the worker and read by a reload before the main thread hears of it counts once', async () => {
    const i = await instance()
    try {
      const key = await fundedKey(i.keys, 0.05)
      // the worker's transaction adds the item's cost to the key's row...
      await t.s.storage.sql.run('UPDATE api_keys SET spent = spent + ? WHERE id = ?', [COST, key.id])
      // ...a poll reads every key again before the worker's message arrives...
      await i.keys.invalidate()
      // ...and then the message comes
      await i.billing.fromWorker([[key.id, COST]])
      expect(i.keys.current(key.id)!.spent).toBeCloseTo(COST, 9)
      // the message first, the reload after: the same figure
      await t.s.storage.sql.run('UPDATE api_keys SET spent = spent + ? WHERE id = ?', [COST, key.id])
      await i.billing.fromWorker([[key.id, COST]])
      await i.keys.invalidate()
      expect(i.keys.current(key.id)!.spent).toBeCloseTo(2 * COST, 9)
    } finally {
      await i.recorder.stop()
      await i.billing.stop()
    }
  })
})
