// A batch's concurrency is the batch's, however many instances share its work: two gateway
// processes on one PostgreSQL database together keep at most `settings.concurrency` of its
// items at the upstream at once (each kept its own, so two instances doubled it). Needs
// SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, expect, test } from 'bun:test'
import { dropSchema, onPostgres } from '../helpers/database.ts'
import { chat, replayFixtures } from '../batches/helpers.ts'
import { twoInstances } from './two-instances.ts'

if (!onPostgres) console.log('test/scaleout/batch-concurrency.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const schema = 'sy_t_batch_conc_' + process.pid
afterAll(() => dropSchema(schema))

test.skipIf(!onPostgres)("two instances keep a batch's concurrency between them, and run every item once", async () => {
  const pair = await twoInstances(schema)
  const { db, up, headers } = pair
  try {
    // each answer takes 80 ms (the batch runs about 5 s: the other instance finds it on its own);
    // the fake counts the items it holds at once
    let now = 0
    let most = 0
    const sent = replayFixtures(up, {
      special: () => {
        most = Math.max(most, ++now)
        setTimeout(() => now--, 80)
        return undefined
      },
      delayMs: 80,
    })
    const [a, b] = await pair.start()
    const N = 240
    const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `conc ${i}`) }))
    const created = await fetch(`${a.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 4 } }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { id: string }).id
    for (let i = 0; i < 3000; i++) {
      const [row] = (await db.unsafe('SELECT ended_at FROM batches WHERE id = $1', [id])) as { ended_at: number | null }[]
      if (row!.ended_at !== null) break
      await Bun.sleep(20)
    }
    const batch = (await (await fetch(`${b.url}/api/v1/batches/${id}`, { headers })).json()) as any
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: N, completed: N, failed: 0 } })
    // both instances ran items of it, and never more than 4 at once between them
    const owners = (await db.unsafe('SELECT count(DISTINCT lease_owner)::int AS n FROM batch_items WHERE batch_id = $1', [id])) as { n: number }[]
    expect(owners[0]!.n).toBe(2)
    expect(most).toBeLessThanOrEqual(4)
    expect(most).toBeGreaterThanOrEqual(2)
    expect([...sent.values()].every((n) => n === 1)).toBe(true)
    expect(sent.size).toBe(N)
  } finally {
    await pair.stop()
  }
}, 120_000)
