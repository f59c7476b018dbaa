// Two gateway processes on one PostgreSQL database share a batch's work, item by item
// (claims under a lease); one is killed with kill -9 halfway. Every item ends with exactly one
// result and goes upstream at most once: what the dead instance held (it may have reached the
// upstream) fails with batch_item_lost once its lease runs out; the rest runs on the other
// instance; each stored result is billed once. Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, expect, test } from 'bun:test'
import { dropSchema, onPostgres } from '../helpers/database.ts'
import { chat, replayFixtures } from '../batches/helpers.ts'
import { twoInstances } from './two-instances.ts'

if (!onPostgres) console.log('test/scaleout/batch-shared.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const N = 300
const CONCURRENCY = 6
const schema = 'sy_t_batch_' + process.pid
afterAll(() => dropSchema(schema))

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

test.skipIf(!onPostgres)('a batch worked by two instances, one killed with kill -9 halfway: one result per item, none sent twice, each billed once', async () => {
  const pair = await twoInstances(schema)
  const { db, up, headers } = pair
  try {
    // each upstream answer takes 40 ms: the batch runs for a few seconds
    const sent = replayFixtures(up, { delayMs: 40 })
    const [a, b] = await pair.start()
    const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `shared ${i}`) }))
    const created = await fetch(`${a.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: CONCURRENCY } }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as any).id as string
    const owners = async () => (await db.unsafe('SELECT lease_owner AS o, count(*)::int AS n FROM batch_items WHERE batch_id = $1 AND status IS NOT NULL GROUP BY 1', [id])) as { o: string; n: number }[]
    // both instances store results of this batch (b found it on its own)
    await until('both instances working', async () => (await owners()).filter((r) => r.n > 5).length === 2)

    a.kill('SIGKILL')
    expect(await a.exited).not.toBe(0)
    // one statement, one snapshot: b goes on storing results (with their records) meanwhile
    const [snap] = (await db.unsafe(
      `SELECT (SELECT coalesce(json_agg(idx), '[]') FROM batch_items WHERE batch_id = $1 AND status IS NOT NULL)::text AS stored,
              (SELECT count(*)::int FROM generations WHERE batch_id = $1) AS n`,
      [id],
    )) as { stored: string; n: number }[]
    const stored = JSON.parse(snap!.stored) as number[]
    const recordsBefore = snap!.n
    expect(stored.length).toBeLessThan(N)
    expect(recordsBefore).toBe(stored.length)
    const sentBefore = new Map(sent)

    await until('the batch completes', async () => ((await (await fetch(`${b.url}/api/v1/batches/${id}`, { headers })).json()) as any).output_file_id != null, 60_000)
    const batch = (await (await fetch(`${b.url}/api/v1/batches/${id}`, { headers })).json()) as any
    expect(batch.status).toBe('completed')
    const lost = batch.request_counts.failed as number
    expect(batch.request_counts.total).toBe(N)
    expect(batch.request_counts.completed + lost).toBe(N)
    // what the dead instance held: at most its concurrency
    expect(lost).toBeLessThanOrEqual(CONCURRENCY)

    // every index exactly once, in the results and in the output and error files
    const page = (await (await fetch(`${b.url}/api/v1/batches/${id}/results?limit=1000`, { headers })).json()) as any
    expect(page.results.map((r: any) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i))
    const lines = async (file: string | null) =>
      file ? (await (await fetch(`${b.url}/api/v1/files/${file}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l)) : []
    const out = await lines(batch.output_file_id)
    const errors = await lines(batch.error_file_id)
    expect([...out, ...errors].map((l) => l.custom_id).sort()).toEqual(requests.map((r) => r.custom_id).sort())
    for (const e of errors) expect(e.error.code).toBe('batch_item_lost')

    // no worker died on b (its items would run again: an item worker once ran items before the
    // results writer had started, and the writer, failing on their outcomes, took the pool down)
    expect(b.output()).not.toContain('lost its worker')
    // a stored item never went upstream again; no item went twice; every succeeded one went once
    for (const idx of stored) expect(sent.get(`shared ${idx}`)).toBe(sentBefore.get(`shared ${idx}`))
    for (const n of sent.values()) expect(n).toBe(1)
    for (const l of out) expect(sent.get(`shared ${Number(l.custom_id.slice(5))}`)).toBe(1)

    // billed exactly once: one record per item, and the key's spend is their sum
    const [recs] = (await db.unsafe('SELECT count(*)::int AS n, sum(cost) AS usd FROM generations WHERE batch_id = $1', [id])) as { n: number; usd: number }[]
    const [{ spent }] = (await db.unsafe('SELECT spent FROM api_keys')) as { spent: number }[]
    expect(recs!.n).toBe(N - lost)
    expect(spent).toBeCloseTo(recs!.usd, 10)
  } finally {
    await pair.stop()
  }
}, 120_000)
