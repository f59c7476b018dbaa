// Instances sharing a batch on PostgreSQL touch its claimed items from several statements: the
// results writer stores them (one row at a time, in a transaction that goes on to records and
// keys), while the instance renews its claims, and others fail what a dead instance held or give
// back their own. A statement that waited on a row the writer holds, while holding another the
// writer goes on to, closed a ring: PostgreSQL found a deadlock after a second and aborted one
// side (the log said so every few seconds with two instances at work). Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { ItemLeases } from '../../src/batches/leases.ts'
import { BatchStore } from '../../src/batches/store.ts'
import { openPg } from '../../src/db/pg-client.ts'
import type { Storage } from '../../src/db/storage.ts'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'

const schema = 'sy_t_lease_locks_' + process.pid
let storage: Storage
let writer: SQL
let url: string

/** A batch of `n` pending items; → its id. */
async function batchOf(n: number): Promise<string> {
  const id = 'batch_' + crypto.randomUUID().replaceAll('-', '')
  const now = Date.now()
  await writer.unsafe(
    `INSERT INTO batches (id, api_key_id, family, endpoint, completion_window, status, total, created_at, expires_at) VALUES ($1, 'key', 'openai', '/v1/chat/completions', '24h', 'processing', $2, $3, $4)`,
    [id, n, now, now + 86_400_000],
  )
  for (let i = 0; i < n; i++) {
    await writer.unsafe(`INSERT INTO batch_items (batch_id, idx, body, model, prompt_estimate) VALUES ($1, $2, '{}', 'gpt-4o-mini', 1)`, [id, i])
  }
  return id
}

const leaseOf = async (id: string, idx: number) =>
  Number(((await writer.unsafe('SELECT lease_until AS u FROM batch_items WHERE batch_id = $1 AND idx = $2', [id, idx])) as { u: unknown }[])[0]!.u)

/**
 * A writer's transaction: stores `first`, runs `beside` while it holds that row, then stores
 * `then`. → whether `beside` had ended before the second row was taken, and any error.
 */
async function storeAround(id: string, first: number, then: number, beside: () => Promise<unknown>): Promise<{ besideDone: boolean; error?: string }> {
  let besideDone = false
  let error: string | undefined
  const store = `UPDATE batch_items SET status = 'succeeded', response = '{}', finished_at = $3 WHERE batch_id = $1 AND idx = $2 AND status IS NULL`
  let running: Promise<void> | undefined
  try {
    await writer.begin(async (tx) => {
      await tx.unsafe(store, [id, first, Date.now()])
      running = beside().then(
        () => void (besideDone = true),
        (e: Error) => void (error = `beside: ${e.message}`),
      )
      // a moment for the other statement to reach the rows
      for (let i = 0; i < 50 && !besideDone && !error; i++) await Bun.sleep(20)
      await tx.unsafe(store, [id, then, Date.now()])
    })
  } catch (e) {
    error ??= `writer: ${(e as Error).message}`
  }
  await running
  return { besideDone, error }
}

describe.skipIf(!onPostgres)('claimed batch items touched by a writer and a lease statement at once', () => {
  beforeAll(async () => {
    url = await freshSchema(schema)
    storage = await openPg(url, 2)
    writer = new SQL({ url, max: 2 })
  })
  afterAll(async () => {
    await storage?.close()
    await writer?.close()
    await dropSchema(schema)
  })

  test('a renewal beside a writer storing its items renews the others and waits for none', async () => {
    const id = await batchOf(4)
    const leases = new ItemLeases(storage.sql, 60_000)
    const { items } = await leases.claim(id, 4, 100)
    expect(items.map((i) => i.idx)).toEqual([0, 1, 2, 3])
    const before = await leaseOf(id, 0)
    await Bun.sleep(5)
    // the writer holds item 2, then goes on to item 0 (an order of its own)
    const r = await storeAround(id, 2, 0, () => leases.renew(id))
    expect(r.error).toBeUndefined()
    expect(r.besideDone).toBe(true)
    // the rows not being stored were renewed
    expect(await leaseOf(id, 1)).toBeGreaterThan(before)
    expect(await leaseOf(id, 3)).toBeGreaterThan(before)
  })

  test("failing a dead instance's items beside a writer storing some of them fails the rest and waits for none", async () => {
    const id = await batchOf(4)
    const dead = new ItemLeases(storage.sql, 1)
    await dead.claim(id, 4, 100)
    await Bun.sleep(5)
    const other = new ItemLeases(storage.sql, 60_000)
    let failed = 0
    // the dead one's writer was still storing item 2 (and goes on to 0)
    const r = await storeAround(id, 2, 0, async () => (failed = await other.failLost(id, { message: 'lost', code: 'batch_item_lost', status: 503 })))
    expect(r.error).toBeUndefined()
    expect(r.besideDone).toBe(true)
    // 0 was taken before the writer came to it; 2 was the writer's: stored, not failed
    expect(failed).toBe(3)
    const rows = (await writer.unsafe('SELECT idx, status FROM batch_items WHERE batch_id = $1 ORDER BY idx', [id])) as { idx: number; status: string }[]
    expect(rows.map((x) => x.status)).toEqual(['failed', 'failed', 'succeeded', 'failed'])
    const [b] = (await writer.unsafe('SELECT failed FROM batches WHERE id = $1', [id])) as { failed: number }[]
    expect(Number(b!.failed)).toBe(3)
  })

  test('claims given back beside a writer storing one of them give back the rest and wait for none', async () => {
    const id = await batchOf(4)
    const leases = new ItemLeases(storage.sql, 60_000)
    await leases.claim(id, 4, 100)
    const r = await storeAround(id, 2, 0, () => leases.dropExcept(id, [3]))
    expect(r.error).toBeUndefined()
    expect(r.besideDone).toBe(true)
    const rows = (await writer.unsafe('SELECT idx, lease_owner AS o FROM batch_items WHERE batch_id = $1 ORDER BY idx', [id])) as { idx: number; o: string | null }[]
    // 1 given back; 3 kept (in flight); 0 and 2 stored by the writer, their claims as they were
    expect(rows[1]!.o).toBeNull()
    expect(rows[3]!.o).toBe(leases.owner)
  })

  test('an item refused for now, given back while a renewal holds its row, is given back once it is free (kept claimed, it never ran anywhere)', async () => {
    const id = await batchOf(3)
    const leases = new ItemLeases(storage.sql, 60_000)
    await leases.claim(id, 3, 100)
    let released = false
    let error: string | undefined
    // the instance's own renewal (every second) holds item 1's row the moment its claim goes back
    await writer.begin(async (tx) => {
      await tx.unsafe('SELECT idx FROM batch_items WHERE batch_id = $1 AND idx = 1 FOR UPDATE', [id])
      void leases.release(id, [1]).then(
        () => void (released = true),
        (e: Error) => void (error = e.message),
      )
      await Bun.sleep(200)
    })
    for (let i = 0; i < 100 && !released && !error; i++) await Bun.sleep(20)
    expect(error).toBeUndefined()
    expect(released).toBe(true)
    const rows = (await writer.unsafe('SELECT idx, lease_owner AS o, lease_until AS u FROM batch_items WHERE batch_id = $1 ORDER BY idx', [id])) as { idx: number; o: string | null; u: unknown }[]
    // no claim left on it: any instance takes it again (its renewals would have kept it here for ever)
    expect([rows[1]!.o, rows[1]!.u]).toEqual([null, null])
    expect(rows[0]!.o).toBe(leases.owner)
    expect(rows[2]!.o).toBe(leases.owner)
    const other = new ItemLeases(storage.sql, 60_000)
    expect((await other.claim(id, 3, 100)).items.map((i) => i.idx)).toEqual([1])
  })

  test("a cancel failing a batch's pending items beside a writer storing some fails the rest and waits for none", async () => {
    const id = await batchOf(6)
    const store = new BatchStore(storage)
    const error = { message: 'cancelled', code: 'batch_cancelled', status: 499 }
    // the items put back (one by one), then the rest (in chunks)
    const r = await storeAround(id, 2, 0, async () => {
      await store.failPending(id, 'cancelled', error, 100, 0, [1, 2])
      await store.failPending(id, 'cancelled', error, 100, 0, undefined, Date.now())
    })
    expect(r.error).toBeUndefined()
    expect(r.besideDone).toBe(true)
    const rows = (await writer.unsafe('SELECT idx, status FROM batch_items WHERE batch_id = $1 ORDER BY idx', [id])) as { idx: number; status: string }[]
    expect(rows.map((x) => x.status)).toEqual(['failed', 'failed', 'succeeded', 'failed', 'failed', 'failed'])
    const [b] = (await writer.unsafe('SELECT failed, cancelled_items AS c FROM batches WHERE id = $1', [id])) as { failed: number; c: number }[]
    expect([Number(b!.failed), Number(b!.c)]).toEqual([5, 5])
  })
})
