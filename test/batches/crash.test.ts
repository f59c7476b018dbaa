// Durability: kill -9 while a batch is processing, restart on the same data
// dir: the batch completes, every index has exactly one result, no item whose result had been
// stored is sent upstream again, and each item is recorded (billed) exactly once. What the dead
// process had in flight: on SQLite (one instance; claims are not written) it runs again after
// the restart; on PostgreSQL its claims are in the database, and like any instance's that
// died they fail with batch_item_lost once their lease runs out, never sent twice.
import { expect, test } from 'bun:test'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir } from '../helpers/server.ts'
import { chat, NO_LIMITS, replayFixtures } from './helpers.ts'

const N = 200

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

test('kill -9 mid-batch, restart: the batch completes, each index once, no stored item sent again, each billed once', async () => {
  const up = await startFakeUpstream()
  const dataDir = tempDir('switchyard-batch-crash-')
  const key = 'sk-sy-crash-' + crypto.randomUUID().replaceAll('-', '')
  // a short lease: on a shared database the dead instance's claims are taken over once it runs out
  const env = { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_LOG_LEVEL: 'info', SWITCHYARD_BATCH_LEASE_MS: '2000' }
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  try {
    // each upstream answer takes 40 ms: with 6 at once the batch runs for over a second
    const sent = replayFixtures(up, { delayMs: 40 })
    const first = await spawnGateway({ env, dataDir })
    const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `crash ${i}`) }))
    const created = await fetch(`${first.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 6 } }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as any).id as string
    const counts = async (url: string) => ((await (await fetch(`${url}/api/v1/batches/${id}`, { headers })).json()) as any).request_counts
    await until('a quarter of the items done', async () => (await counts(first.url)).completed >= N / 4)

    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)

    // what the dead process had stored: those items must never be sent again
    const db = await openDatabaseOf(dataDir)
    const stored = (await db.sql.all<{ idx: number }>('SELECT idx FROM batch_items WHERE batch_id = ? AND status IS NOT NULL', [id])).map((r) => r.idx)
    const recordsBefore = (await db.sql.get<{ n: number }>('SELECT count(*) AS n FROM generations WHERE batch_id = ?', [id]))!.n
    await db.close()
    expect(stored.length).toBeGreaterThanOrEqual(N / 4)
    expect(stored.length).toBeLessThan(N)
    // a stored result and its generation record were written together
    expect(recordsBefore).toBe(stored.length)
    const sentBefore = new Map(sent)

    const second = await spawnGateway({ env, dataDir })
    try {
      await until('the batch completes', async () => (await (await fetch(`${second.url}/api/v1/batches/${id}`, { headers })).json() as any).output_file_id != null)
      const batch = (await (await fetch(`${second.url}/api/v1/batches/${id}`, { headers })).json()) as any
      expect(batch.status).toBe('completed')
      const lost = onPostgres ? (batch.request_counts.failed as number) : 0
      expect(batch.request_counts).toEqual({ total: N, completed: N - lost, failed: lost })
      // at most what it had claimed: its concurrency
      expect(lost).toBeLessThanOrEqual(6)
      expect(await second.waitForOutput('batches: resuming')).toContain('batches: resuming')

      // every index exactly once, in the results route and in the output file
      const page = (await (await fetch(`${second.url}/api/v1/batches/${id}/results?limit=1000`, { headers })).json()) as any
      expect(page.results.map((r: any) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i))
      const lines = async (file: string | null) =>
        file ? (await (await fetch(`${second.url}/api/v1/files/${file}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l)) : []
      const out = await lines(batch.output_file_id)
      const errors = await lines(batch.error_file_id)
      expect([...out, ...errors].map((l) => l.custom_id).sort()).toEqual(requests.map((r) => r.custom_id).sort())
      for (const e of errors) expect(e.error.code).toBe('batch_item_lost')

      // no stored item went upstream again; every succeeded item went; on PostgreSQL none twice
      for (const idx of stored) expect(sent.get(`crash ${idx}`)).toBe(sentBefore.get(`crash ${idx}`))
      for (const idx of stored) expect(sent.get(`crash ${idx}`)).toBe(1)
      for (const l of out) expect(sent.get(`crash ${l.custom_id.slice(5)}`)).toBeGreaterThanOrEqual(1)
      if (onPostgres) for (const n of sent.values()) expect(n).toBe(1)

      // billed exactly once: one record per item, and the key's spend is their sum
      const check = await openDatabaseOf(dataDir)
      const recs = (await check.sql.get<{ n: number; usd: number }>('SELECT count(*) AS n, sum(cost) AS usd FROM generations WHERE batch_id = ?', [id]))!
      const spent = (await check.sql.get<{ spent: number }>('SELECT spent FROM api_keys'))!.spent
      await check.close()
      expect(recs.n).toBe(N - lost)
      expect(spent).toBeCloseTo(recs.usd, 10)
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)
