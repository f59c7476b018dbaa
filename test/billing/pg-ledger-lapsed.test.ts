// An instance that dies with requests open leaves their reservation rows behind. They stop
// counting once they lapse, but nothing else would ever delete them: the table would only grow
// with every crash. Each instance deletes lapsed rows now and then, in small steps, whoever made
// them, and never a row that still counts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { onPostgres } from '../helpers/database.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices

async function rowsOf(keyId: string): Promise<{ lapsed: number; live: number }> {
  const now = Date.now()
  const rows = await t.s.storage.sql.all<{ expires_at: number }>('SELECT expires_at FROM credit_reservations WHERE api_key_id = ?', [keyId])
  return { lapsed: rows.filter((r) => Number(r.expires_at) <= now).length, live: rows.filter((r) => Number(r.expires_at) > now).length }
}

/** Rows as a dead instance would have left them: `n` of `usd` each, lapsed `agoMs` ago (negative: still counting). */
async function leave(keyId: string, n: number, usd: number, agoMs: number) {
  const at = Date.now() - agoMs
  const ids = Array.from({ length: n }, () => 'rsv_' + crypto.randomUUID().replaceAll('-', ''))
  for (let i = 0; i < ids.length; i += 200) {
    const part = ids.slice(i, i + 200)
    await t.s.storage.sql.run(
      `INSERT INTO credit_reservations (id, api_key_id, usd, expires_at) VALUES ${part.map(() => '(?, ?, ?, ?)').join(', ')}`,
      part.flatMap((id) => [id, keyId, usd, at]),
    )
  }
}

describe.skipIf(!onPostgres)('PostgreSQL ledger: rows a dead instance left', () => {
  beforeAll(async () => {
    t = await testServices()
  })
  afterAll(async () => {
    await t.close()
  })

  test('lapsed rows go, in steps, and every row that still counts stays', async () => {
    const key = (await t.s.keys.create({ name: 'lapsed', credits: 100 })).record
    const ledger = new PgLedger(t.s.storage.sql, undefined, 3_600_000)
    await leave(key.id, 1_203, 0.5, 60_000) // more than two steps' worth
    await leave(key.id, 2, 3, -60_000) // another instance's requests, still running
    const mine = await ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 4)
    expect(mine.admitted).toBe(true)
    expect(await rowsOf(key.id)).toEqual({ lapsed: 1_203, live: 3 })

    // more than one statement's worth (another instance's purge could take a few meanwhile)
    expect(await ledger.purgeLapsed()).toBeGreaterThan(1_000)
    expect(await rowsOf(key.id)).toEqual({ lapsed: 0, live: 3 })

    // what still counts counts as before: a refusal reports the other instance's 6 and this one's 4
    await t.s.storage.sql.run('UPDATE api_keys SET credits = ? WHERE id = ?', [0.000001, key.id])
    const refused = await ledger.reserve({ id: key.id, credits: 0.000001, spent: 0 }, 1)
    expect(refused).toEqual({ admitted: false, spent: 0, reserved: 10 })
    await ledger.stop()
  })

  test("a request in progress has its row's lapse moved on, so the other instances go on counting it", async () => {
    const key = (await t.s.keys.create({ name: 'renewed', credits: 100 })).record
    const ledger = new PgLedger(t.s.storage.sql, 60_000)
    const a = await ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 1)
    const b = await ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 2)
    const lapse = async (id: string) => Number((await t.s.storage.sql.get<{ expires_at: number }>('SELECT expires_at FROM credit_reservations WHERE id = ?', [id]))!.expires_at)
    const idA = (a as { reservationId: string }).reservationId
    const idB = (b as { reservationId: string }).reservationId
    const before = [await lapse(idA), await lapse(idB)]
    await Bun.sleep(20)
    ledger.renew([idA, 'rsv_unknown'])
    for (let i = 0; i < 100 && (await lapse(idA)) === before[0]; i++) await Bun.sleep(10)
    expect(await lapse(idA)).toBeGreaterThan(before[0]!)
    expect(await lapse(idB)).toBe(before[1]!)
    await ledger.stop()
  })

  test('two instances purging at once delete every lapsed row, none twice', async () => {
    const key = (await t.s.keys.create({ name: 'lapsed twice', credits: 100 })).record
    await leave(key.id, 1_500, 0.25, 1_000)
    const a = new PgLedger(t.s.storage.sql, undefined, 3_600_000)
    const b = new PgLedger(t.s.storage.sql, undefined, 3_600_000)
    const [da, db] = await Promise.all([a.purgeLapsed(), b.purgeLapsed()])
    // another purge may have taken some in between (the other test file's instances): at least none twice
    expect(da + db).toBeLessThanOrEqual(1_500)
    expect(await rowsOf(key.id)).toEqual({ lapsed: 0, live: 0 })
    await a.stop()
    await b.stop()
  })

  test('each instance purges on its own, without being asked', async () => {
    const key = (await t.s.keys.create({ name: 'lapsed on a timer', credits: 100 })).record
    const ledger = new PgLedger(t.s.storage.sql, undefined, 40)
    await leave(key.id, 7, 1, 10)
    await leave(key.id, 1, 1, -60_000)
    const until = Date.now() + 5_000
    while ((await rowsOf(key.id)).lapsed > 0 && Date.now() < until) await Bun.sleep(20)
    expect(await rowsOf(key.id)).toEqual({ lapsed: 0, live: 1 })
    await ledger.stop()
  })
})
