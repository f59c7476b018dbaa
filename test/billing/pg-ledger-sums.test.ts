// The PostgreSQL ledger keeps this instance's holds summed by key as they change, so that an
// admission reads two figures instead of walking every hold of the instance. The sums must stay
// what the holds add up to through holds, endings and the writes that delete their rows: a
// refused admission reports them, and the other instances' holds are what the table has past them.
// Admissions of one key asked while its transaction runs go together in the next one, in order.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { onPostgres } from '../helpers/database.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices

describe.skipIf(!onPostgres)('PostgreSQL ledger: holds summed by key', () => {
  beforeAll(async () => {
    t = await testServices()
  })
  afterAll(async () => {
    await t.close()
  })

  test('the sums follow holds, endings and deleted rows, key by key', async () => {
    // holds made ahead for the next requests would be holds this test does not count
    // (pg-ledger-ahead.test.ts follows the sums with them)
    const ledger = new PgLedger(t.s.storage.sql, undefined, undefined, false)
    const other = new PgLedger(t.s.storage.sql) // a second instance on the same table
    const keys = await Promise.all([1, 2, 3].map(async (i) => (await t.s.keys.create({ name: 'sums ' + i, credits: 100 })).record))
    let seed = 11
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    // what the test itself holds: running (not ended) per key
    const running = new Map<string, { key: string; usd: number }>()
    const expected = (key: string) => [...running.values()].filter((h) => h.key === key).reduce((a, h) => a + h.usd, 0)
    const othersHeld = await other.reserve({ id: keys[0]!.id, credits: 100, spent: 0 }, 7)
    expect(othersHeld.admitted).toBe(true)
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 15; i++) {
        const key = keys[Math.floor(rand() * 3)]!
        const usd = Math.round(rand() * 1e6) / 1e5
        const h = await ledger.reserve({ id: key.id, credits: 100, spent: 0 }, usd)
        if (h.admitted && h.reservationId) running.set(h.reservationId, { key: key.id, usd })
      }
      for (const [id] of running) {
        if (rand() < 0.4) {
          ledger.settle(id)
          running.delete(id)
        }
      }
      // half the rounds, a record write deletes the ended ones' rows
      if (round % 2 === 0) {
        const w = ledger.startWrite()
        await t.s.storage.sql.tx(async (q) => w.begin(q))
        w.end(true)
      }
      expect(ledger.open).toBe(running.size)
      for (const key of keys) expect(ledger.reserved(key.id)).toBeCloseTo(expected(key.id), 9)
      // a refusal reports this instance's running holds plus the other instance's row, no more
      await t.s.storage.sql.run('UPDATE api_keys SET credits = ? WHERE id = ?', [0.000001, keys[0]!.id])
      const refused = await ledger.reserve({ id: keys[0]!.id, credits: 0.000001, spent: 0 }, 1)
      await t.s.storage.sql.run('UPDATE api_keys SET credits = ? WHERE id = ?', [100, keys[0]!.id])
      expect(refused.admitted).toBe(false)
      expect((refused as { reserved: number }).reserved).toBeCloseTo(expected(keys[0]!.id) + 7, 9)
    }
    await ledger.stop()
    await other.stop()
  })

  test('admissions of one key asked at once share a transaction, decided in order; two instances never pass the balance', async () => {
    const sql = t.s.storage.sql
    const { record } = await t.s.keys.create({ name: 'batched', credits: 3 })
    const a = new PgLedger(sql)
    const b = new PgLedger(sql)
    const tx = sql.tx.bind(sql)
    let transactions = 0
    sql.tx = ((fn: Parameters<typeof tx>[0], committed?: Parameters<typeof tx>[1]) => (transactions++, tx(fn, committed))) as typeof sql.tx
    try {
      const ask = (l: PgLedger) => Array.from({ length: 10 }, () => l.reserve({ id: record.id, credits: 3, spent: 0 }, 1))
      const [fromA, fromB] = await Promise.all([Promise.all(ask(a)), Promise.all(ask(b))])
      // one alone, then the nine asked meanwhile together, on each instance
      expect(transactions).toBeLessThanOrEqual(4)
      const admitted = [...fromA, ...fromB].filter((h) => h.admitted)
      expect(admitted.length).toBe(3)
      for (const holds of [fromA, fromB]) {
        // in the order asked: what was admitted comes first
        const firstRefused = holds.findIndex((h) => !h.admitted)
        expect(holds.slice(firstRefused).every((h) => !h.admitted)).toBe(true)
        // a refusal counts every hold, this instance's and the other's
        for (const h of holds.slice(firstRefused)) expect((h as { reserved: number }).reserved).toBeCloseTo(3, 9)
      }
      const [{ n }] = (await sql.all<{ n: number }>('SELECT count(*)::int AS n FROM credit_reservations WHERE api_key_id = ?', [record.id])) as { n: number }[]
      expect(n).toBe(3)
      for (const h of admitted) (fromA.includes(h) ? a : b).settle((h as { reservationId: string }).reservationId)
    } finally {
      sql.tx = tx
      await a.stop()
      await b.stop()
    }
  })
})
