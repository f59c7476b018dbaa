// A gateway stopped gracefully while its batch items are still at the upstream past its grace:
// its workers are stopped with them, and they may have been sent. On PostgreSQL it gave back
// every claim it held, and another instance sent those items again; their claims now stay
// until their lease runs out, and the other instance fails them as lost, as after a kill -9.
// What it had claimed and never sent still goes back at once. Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { chat, NO_LIMITS } from '../batches/helpers.ts'

const schema = 'sy_t_batch_stop_cut_' + process.pid
afterAll(() => dropSchema(schema))

test.skipIf(!onPostgres)('items at the upstream when a stop cut them fail as lost on the other instance, never sent twice', async () => {
  const url = await freshSchema(schema)
  const db = new SQL({ url, max: 1 })
  const up = await startFakeUpstream()
  const dataDir = tempDir('switchyard-batch-stop-cut-')
  await Bun.write(`${dataDir}/c.yaml`, 'server:\n  shutdown_grace_ms: 500\n')
  const key = 'sk-sy-' + crypto.randomUUID().replaceAll('-', '')
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const env = { ...NO_LIMITS, SWITCHYARD_DATABASE_URL: url, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_BATCH_LEASE_MS: '2000' }
  const sent = new Map<string, number>()
  const reply = fixtureJson('openai/chat/nonstream-text.json')
  // each item 4 s at the upstream: past the first gateway's half-second grace
  up.script((req) => {
    const prompt = String(req.json().messages?.[0]?.content)
    sent.set(prompt, (sent.get(prompt) ?? 0) + 1)
    return { waitMs: 4_000, json: reply }
  })
  const gws: Spawned[] = []
  try {
    const a = await spawnGateway({ env, dataDir, args: ['--config', `${dataDir}/c.yaml`] })
    gws.push(a)
    const N = 6
    const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `cut ${i}`) }))
    const created = await fetch(`${a.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 3 } }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { id: string }).id
    // the first gateway has three items at the upstream; the second is up
    for (let i = 0; i < 500 && sent.size < 3; i++) await Bun.sleep(20)
    expect(sent.size).toBe(3)
    const b = await spawnGateway({ env, dataDir })
    gws.push(b)
    a.kill('SIGTERM')
    expect(await a.exited).toBe(0)

    for (let i = 0; i < 1500; i++) {
      const [row] = (await db.unsafe('SELECT ended_at FROM batches WHERE id = $1', [id])) as { ended_at: number | null }[]
      if (row!.ended_at !== null) break
      await Bun.sleep(20)
    }
    const batch = (await (await fetch(`${b.url}/api/v1/batches/${id}`, { headers })).json()) as any
    // none went upstream twice
    expect([...sent.entries()].filter(([, n]) => n > 1)).toEqual([])
    // the three cut at the stop failed as lost; the rest ran on the second gateway
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: N, completed: N - 3, failed: 3 } })
    const errors = (await (await fetch(`${b.url}/api/v1/files/${batch.error_file_id}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(errors.map((e) => e.error?.code).sort()).toEqual(['batch_item_lost', 'batch_item_lost', 'batch_item_lost'])
  } finally {
    for (const g of gws) {
      g.kill('SIGTERM')
      await g.exited
    }
    await db.close()
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)
