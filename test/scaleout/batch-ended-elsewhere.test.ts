// Two gateway processes on one PostgreSQL database share a batch; one of them ends it (writes
// its output files). The other lets the batch go: it once asked the database every half second,
// for ever, whether it might end it itself (an idle instance's CPU grew with every such batch).
// Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, expect, test } from 'bun:test'
import { dropSchema, onPostgres } from '../helpers/database.ts'
import { chat, replayFixtures } from '../batches/helpers.ts'
import { twoInstances } from './two-instances.ts'

if (!onPostgres) console.log('test/scaleout/batch-ended-elsewhere.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const schema = 'sy_t_batch_end_' + process.pid
afterAll(() => dropSchema(schema))

test.skipIf(!onPostgres)('a batch another instance ended is let go: no instance keeps asking about it', async () => {
  const pair = await twoInstances(schema)
  const { db, up, headers } = pair
  try {
    replayFixtures(up, { delayMs: 30 })
    const [a, b] = await pair.start()
    // a few batches, so that each instance has some that the other one ends
    const ids: string[] = []
    for (let n = 0; n < 4; n++) {
      const requests = Array.from({ length: 60 }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `batch ${n} item ${i}`) }))
      const created = await fetch(`${(n % 2 ? b : a).url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 4 } }) })
      expect(created.status).toBe(200)
      ids.push(((await created.json()) as { id: string }).id)
    }
    for (let i = 0; i < 3000; i++) {
      const rows = (await db.unsafe('SELECT count(*)::int AS n FROM batches WHERE ended_at IS NULL')) as { n: number }[]
      if (rows[0]!.n === 0) break
      await Bun.sleep(20)
    }
    expect((await db.unsafe('SELECT count(*)::int AS n FROM batches WHERE ended_at IS NULL'))[0].n).toBe(0)

    // the statistics of the batch tables over six idle seconds: reads of the batch rows and of
    // their items' pending count (a few here; 70 in three seconds when an instance kept asking).
    // An idle connection reports its statistics up to 10 s late: those of the batches' own work
    // are let in first
    const reads = async () => {
      const [r] = (await db.unsafe(`SELECT coalesce(sum(coalesce(idx_scan, 0) + coalesce(seq_scan, 0)), 0)::int AS n FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ('batches', 'batch_items')`)) as { n: number }[]
      return r!.n
    }
    await Bun.sleep(11_000)
    await db.unsafe('SELECT pg_stat_clear_snapshot()')
    const before = await reads()
    await Bun.sleep(6000)
    await db.unsafe('SELECT pg_stat_clear_snapshot()')
    const after = await reads()
    // a sweep reads each table a few times; asking about 4 batches every half second, 2 ways, is dozens
    expect(after - before).toBeLessThan(30)
  } finally {
    await pair.stop()
  }
}, 120_000)
