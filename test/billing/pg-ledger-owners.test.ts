// Instances sharing PostgreSQL each hold a lock on a number of their own, and their holds carry
// it: the holds of a gateway whose lock is gone (killed with requests open) are those of
// requests that died with it, and any instance deletes them; a live gateway's never. A gateway
// "dies" here by closing its own client, as a killed process's sockets are closed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { onPostgres } from '../helpers/database.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices

const rowsOf = async (keyId: string) => (await t.s.storage.sql.all<{ id: string }>('SELECT id FROM credit_reservations WHERE api_key_id = ? ORDER BY id', [keyId])).map((r) => r.id)
const idOf = (h: unknown) => (h as { reservationId: string }).reservationId

describe.skipIf(!onPostgres)('PostgreSQL ledger: holds of gateways no longer running', () => {
  beforeAll(async () => {
    t = await testServices()
  })
  afterAll(async () => {
    await t.close()
  })

  /** A ledger with a session of its own for its lock, as another process would have. */
  async function instance() {
    const client = new SQL({ url: t.s.config.database.url!, max: 1 })
    const ledger = new PgLedger(t.s.storage.sql)
    await ledger.own(client)
    return { ledger, die: () => client.close({ timeout: 0 }) }
  }

  test("a live gateway's holds are never deleted by another; a dead one's are, once its lock has been free a few seconds", async () => {
    const key = (await t.s.keys.create({ name: 'owners', credits: 100 })).record
    const a = await instance()
    const b = await instance()
    const held = [await a.ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 1), await a.ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 2)]
    const mine = await b.ledger.reserve({ id: key.id, credits: 100, spent: 0 }, 3)
    expect(await b.ledger.releaseOrphans()).toBe(0)
    expect(await a.ledger.releaseOrphans()).toBe(0)
    expect((await rowsOf(key.id)).length).toBe(3)

    await a.die()
    // PostgreSQL ends the dead session's backend a moment after its socket closes; its holds go
    // once its lock has been seen free for a few seconds (a live gateway whose session was cut
    // has it again by then)
    const died = performance.now()
    let released = 0
    for (let i = 0; i < 500 && released === 0; i++) released = await b.ledger.releaseOrphans().then(async (n) => (n > 0 ? n : (await Bun.sleep(20), 0)))
    expect(released).toBe(2)
    expect(performance.now() - died).toBeGreaterThan(4_000)
    const left = await rowsOf(key.id)
    expect(left).toEqual([idOf(mine)])
    expect(left).not.toContain(idOf(held[0]))
    await b.ledger.stop()
    await b.die()
  })

  test('a refusal by the holds of a gateway that died is not a refusal: they are deleted and it is asked again', async () => {
    const key = (await t.s.keys.create({ name: 'refused by the dead', credits: 0.01 })).record
    const a = await instance()
    const b = await instance()
    const figures = { id: key.id, credits: 0.01, spent: 0 }
    expect((await a.ledger.reserve(figures, 0.0096)).admitted).toBe(true)
    expect((await a.ledger.reserve(figures, 0.0096)).admitted).toBe(true)
    // while a runs, its holds refuse b's request
    expect(await b.ledger.reserve(figures, 0.0096)).toEqual({ admitted: false, spent: 0, reserved: 0.0192 })
    await a.die()
    await Bun.sleep(1_100) // a refusal looks at most once a second
    // and waits for a lock it finds free to have been free a few seconds
    expect((await b.ledger.reserve(figures, 0.0096)).admitted).toBe(true)
    await b.ledger.stop()
    await b.die()
  })
})
