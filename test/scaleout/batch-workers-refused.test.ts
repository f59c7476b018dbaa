// A batch worker opens database connections of its own when it starts. A PostgreSQL server at
// its connection limit refuses them: an instance whose workers cannot start must neither claim
// a shared batch's items for them nor fail items that never reached a worker (it failed them
// as lost `max_retries` + 1 times over, `worker_failed`, in moments). It tries again, waiting
// longer each time, and works again once its workers start. Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'
import { chat, NO_LIMITS, replayFixtures } from '../batches/helpers.ts'

const schema = 'sy_t_batch_refused_' + process.pid
afterAll(() => dropSchema(schema))

test.skipIf(!onPostgres)('an instance whose batch workers the database refuses leaves the items to others, then helps once they start', async () => {
  const url = await freshSchema(schema)
  const db = new SQL({ url, max: 1 })
  const up = await startFakeUpstream()
  const dataDir = tempDir('switchyard-batch-refused-')
  const viaProxy = new URL(url)
  const proxy = startTcpProxy(viaProxy.hostname, Number(viaProxy.port || 5432))
  viaProxy.host = `127.0.0.1:${proxy.port}`
  const key = 'sk-sy-' + crypto.randomUUID().replaceAll('-', '')
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const env = { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_BATCH_LEASE_MS: '2000', SWITCHYARD_BATCH_WORKERS: '2', SWITCHYARD_BATCH_MAX_RETRIES: '0' }
  const gws: Spawned[] = []
  try {
    const sent = replayFixtures(up, { delayMs: 10 })
    const a = await spawnGateway({ env: { ...env, SWITCHYARD_DATABASE_URL: url }, dataDir })
    gws.push(a)
    const b = await spawnGateway({ env: { ...env, SWITCHYARD_DATABASE_URL: viaProxy.toString() }, dataDir })
    gws.push(b)
    // b is up, with its pool's connections open (requests at once open them all); any new one
    // is refused from now on
    const listed = await Promise.all(Array.from({ length: 16 }, () => fetch(`${b.url}/api/v1/batches`, { headers }).then((r) => r.status)))
    expect(listed.every((s) => s === 200)).toBe(true)
    proxy.refuseNew(true)

    const N = 600
    const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `refused ${i}`) }))
    const created = await fetch(`${a.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 64 } }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { id: string }).id
    const owners = async () => (await db.unsafe('SELECT lease_owner AS o, count(*)::int AS n FROM batch_items WHERE batch_id = $1 AND status IS NOT NULL GROUP BY 1', [id])) as { o: string | null; n: number }[]
    // b finds the batch and tries its workers, twice (with max_retries 0, one item lost with its
    // worker fails it)
    const tries = () => b.output().split('batch worker could not start').length - 1
    for (let i = 0; i < 600 && tries() < 2; i++) await Bun.sleep(50)
    expect(tries()).toBeGreaterThanOrEqual(2)
    // a stores results meanwhile (on a crowded machine its first may come after b's two tries)
    let early = await owners()
    for (let i = 0; i < 400 && early.length === 0; i++) {
      await Bun.sleep(50)
      early = await owners()
    }
    proxy.refuseNew(false)

    for (let i = 0; i < 4500; i++) {
      const [row] = (await db.unsafe('SELECT ended_at FROM batches WHERE id = $1', [id])) as { ended_at: number | null }[]
      if (row!.ended_at !== null) break
      await Bun.sleep(20)
    }
    const batch = (await (await fetch(`${a.url}/api/v1/batches/${id}`, { headers })).json()) as any
    // on a failure, what failed the items and what b logged
    if (batch.status !== 'completed' || batch.request_counts?.failed) {
      console.log(JSON.stringify(batch))
      const out = await (await fetch(`${a.url}/api/v1/files/${batch.error_file_id}/content`, { headers })).text()
      console.log(out.split('\n').slice(0, 3).join('\n'))
      console.log(b.output().split('\n').filter((l) => /warn|error/i.test(l)).slice(0, 20).join('\n'))
    }
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: N, completed: N, failed: 0 } })
    expect(sent.size).toBe(N)
    expect([...sent.values()].every((n) => n === 1)).toBe(true)
    // while refused, only a stored results
    expect(early.length).toBe(1)
    // and b runs batches again once its workers can start
    const own = await fetch(`${b.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests: [{ custom_id: 'after', ...chat('gpt-4o-mini', 'b again') }] }) })
    expect(own.status).toBe(200)
    const ownId = ((await own.json()) as { id: string }).id
    let status = ''
    for (let i = 0; i < 500 && status !== 'completed'; i++) {
      status = ((await (await fetch(`${b.url}/api/v1/batches/${ownId}`, { headers })).json()) as { status: string }).status
      await Bun.sleep(20)
    }
    expect(status).toBe('completed')
  } finally {
    for (const g of gws) {
      g.kill('SIGTERM')
      await g.exited
    }
    proxy.stop()
    await db.close()
    await up.stop()
    cleanup(dataDir)
  }
}, 120_000)
