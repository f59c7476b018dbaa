// A create whose items the database will not store (a full disk, a lost connection): the client
// is told to try again, with Retry-After, in the gateway's own words. The database's message
// (which can name its host) goes to the log only; it came back in a 500.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { chat, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig()
})
afterAll(() => rig.stop())

test.skipIf(onPostgres)('a create the database refuses is a 503 with Retry-After, without the database\'s words', async () => {
  const db = await openDatabaseOf(rig.gw.dataDir)
  await db.sql.run(`CREATE TRIGGER refuse_items BEFORE INSERT ON batch_items BEGIN SELECT RAISE(ABORT, 'could not reach db-internal.corp:5432'); END`)
  try {
    const requests = Array.from({ length: 3 }, (_, i) => ({ custom_id: `r-${i}`, ...chat('gpt-4o-mini', `refused ${i}`) }))
    const res = await rig.call('POST', '/api/v1/batches', { requests })
    const body = (await res.json()) as { error?: unknown }
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBeTruthy()
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(typeof body.error).toBe('string')
    expect(String(body.error)).not.toContain('db-internal')
    // nothing was made
    expect(((await (await rig.call('GET', '/api/v1/batches')).json()) as { data: unknown[] }).data).toEqual([])
  } finally {
    await db.sql.run('DROP TRIGGER IF EXISTS refuse_items')
    await db.close()
  }
}, 30_000)
