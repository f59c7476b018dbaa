// On SQLite a round of items is marked in flight in the database before any of it is sent
// (marks.ts). A mark the database refuses (a full disk, say) sends nothing: the round waits
// and is tried again, and once the database takes writes again the batch runs to its end, each
// item sent once. (PostgreSQL claims items instead: leases.ts, the scale-out tests.)
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { chat, replayFixtures, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig()
})
afterAll(() => rig.stop())

test.skipIf(onPostgres)('a round the database will not mark is not sent; it runs once the database takes writes again', async () => {
  const sent = replayFixtures(rig.up)
  const db = await openDatabaseOf(rig.gw.dataDir)
  // refuses every mark (the results writer never sets lease_owner)
  await db.sql.run(`CREATE TRIGGER refuse_marks BEFORE UPDATE OF lease_owner ON batch_items WHEN NEW.lease_owner IS NOT NULL BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
  try {
    const requests = Array.from({ length: 10 }, (_, i) => ({ custom_id: `m-${i}`, ...chat('gpt-4o-mini', `mark ${i}`) }))
    const created = await rig.call('POST', '/api/v1/batches', { requests })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as any).id as string
    await Bun.sleep(1_500)
    expect(sent.size).toBe(0)

    await db.sql.run('DROP TRIGGER refuse_marks')
    const b = await rig.ended(id)
    expect(b.status).toBe('completed')
    expect(b.request_counts).toEqual({ total: 10, completed: 10, failed: 0 })
    expect([...sent.values()]).toEqual(Array(10).fill(1))
  } finally {
    await db.sql.run('DROP TRIGGER IF EXISTS refuse_marks')
    await db.close()
  }
}, 30_000)
