// A live gateway whose lock session is cut from outside (a backend terminated, a proxy that
// dropped the connection) is still running and its requests still hold credit. Another
// instance that finds that lock free must not take the moment to delete the live gateway's
// holds: the key would be spent past its credit by the other instance meanwhile. The live one
// takes its number again within a second or so and keeps its holds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { OWNER_LOCKS } from '../../src/billing/pg-owner.ts'
import { onPostgres } from '../helpers/database.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices

const rowsOf = async (keyId: string) => (await t.s.storage.sql.all<{ id: string }>('SELECT id FROM credit_reservations WHERE api_key_id = ? ORDER BY id', [keyId])).map((r) => r.id)
const idOf = (h: unknown) => (h as { reservationId: string }).reservationId
const ownerOf = (id: string) => Number(id.split('_')[1])
/** The backends holding the owner lock of `owner` (none while it is free). */
const lockHolders = async (owner: number) =>
  (await t.s.storage.sql.all<{ pid: number }>(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ${OWNER_LOCKS} AND objid = ? AND objsubid = 2 AND granted`, [owner])).map((r) => Number(r.pid))

describe.skipIf(!onPostgres)('PostgreSQL ledger: a live gateway that lost its lock session', () => {
  beforeAll(async () => {
    t = await testServices()
  })
  afterAll(async () => {
    await t.close()
  })

  async function instance() {
    const client = new SQL({ url: t.s.config.database.url!, max: 1 })
    const ledger = new PgLedger(t.s.storage.sql, undefined, 60_000, false)
    await ledger.own(client)
    return { ledger, client }
  }

  test("another instance refuses for as long as the live one's holds use the credit up, and the live one owns its number again", async () => {
    const key = (await t.s.keys.create({ name: 'lock lost', credits: 0.01 })).record
    const figures = { id: key.id, credits: 0.01, spent: 0 }
    const a = await instance()
    const b = await instance()
    const held = [await a.ledger.reserve(figures, 0.005), await a.ledger.reserve(figures, 0.005)]
    expect(held.map((h) => h.admitted)).toEqual([true, true])
    const owner = ownerOf(idOf(held[0]))
    const [pid] = await lockHolders(owner)
    expect(pid).toBeGreaterThan(0)

    await t.s.storage.sql.all('SELECT pg_terminate_backend(?)', [pid])
    // for a few seconds b is asked again and again (each refusal may look for dead gateways' holds)
    const deadline = performance.now() + 4_000
    const admitted: unknown[] = []
    while (performance.now() < deadline) {
      const h = await b.ledger.reserve(figures, 0.0049)
      if (h.admitted) admitted.push(h)
      await Bun.sleep(100)
    }
    expect(admitted).toEqual([])
    // a's holds are there, and its number locked by a session again
    expect(await rowsOf(key.id)).toEqual(held.map(idOf).sort())
    expect((await lockHolders(owner)).length).toBe(1)
    for (const x of [a, b]) {
      await x.ledger.stop()
      await x.client.close({ timeout: 0 })
    }
  }, 30_000)
})
