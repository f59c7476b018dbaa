// Several gateway processes on one SQLite data dir, sharing Redis (a supported set-up: the
// data-dir lock is not taken then). Exactly one of them runs the batches: a second process that
// started resumed every open batch and ran its items beside the first (the same item sent twice),
// and took the first one's marks of items in flight for a dead process's (failed as lost though
// their results were on their way). The others store the batches they are given and tell the
// runner; when the runner dies (kill -9), another takes over within seconds and fails as lost
// what the dead one had marked, once, as a restart does. A cancel made on a process that does not
// run the batch fails only its items not in flight: those at the upstream end with their results.
import { expect, test } from 'bun:test'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { chat, NO_LIMITS, replayFixtures } from './helpers.ts'

// on PostgreSQL the instances share items under leases instead (test/scaleout/batch-shared.test.ts)
const skip = onPostgres ? 'on PostgreSQL' : redisSkipReason()
if (skip) console.warn(`test/batches/one-dir-runner.test.ts: skipped (${skip})`)

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/** A fake upstream taking `delayMs` an answer and counting each prompt, a data dir, and the env of gateways sharing one Redis prefix. */
async function rig(delayMs: number) {
  const up = await startFakeUpstream()
  const dataDir = tempDir('switchyard-one-dir-')
  const key = 'sk-sy-onedir-' + crypto.randomUUID().replaceAll('-', '')
  const env = { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_LOG_LEVEL: 'info', REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: freshPrefix() }
  let answered = 0
  const sent = replayFixtures(up, { delayMs, special: () => void answered++ })
  const answering = () => [...sent.values()].reduce((a, b) => a + b, 0) - answered
  const procs: Spawned[] = []
  const spawn = async () => {
    const p = await spawnGateway({ env, dataDir })
    procs.push(p)
    return p
  }
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const stop = async () => {
    for (const p of procs) p.kill('SIGKILL')
    await Promise.all(procs.map((p) => p.exited))
    await up.stop()
    cleanup(dataDir)
  }
  return { dataDir, headers, sent, answering, spawn, stop }
}

type Rig = Awaited<ReturnType<typeof rig>>

async function createBatch(r: Rig, gw: Spawned, n: number) {
  const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `one-dir ${i}`) }))
  const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers: r.headers, body: JSON.stringify({ requests, settings: { concurrency: 6 } }) })
  expect(created.status).toBe(200)
  const id = ((await created.json()) as any).id as string
  const batch = async (g: Spawned) => (await (await fetch(`${g.url}/api/v1/batches/${id}`, { headers: r.headers })).json()) as any
  return { id, batch }
}

/** Indexes stored, marked in flight without a result, and the error codes of the failed ones. */
async function itemsOf(dataDir: string, id: string) {
  const db = await openDatabaseOf(dataDir, { readonly: true })
  const idx = async (where: string) => (await db.sql.all<{ idx: number }>(`SELECT idx FROM batch_items WHERE batch_id = ? AND ${where} ORDER BY idx`, [id])).map((r) => r.idx)
  const codes = (await db.sql.all<{ error: string }>(`SELECT error FROM batch_items WHERE batch_id = ? AND status = 'failed' ORDER BY idx`, [id])).map((r) => JSON.parse(r.error).code as string)
  const out = { stored: await idx('status IS NOT NULL'), marked: await idx('status IS NULL AND lease_owner IS NOT NULL'), succeeded: await idx(`status = 'succeeded'`), failed: await idx(`status = 'failed'`), codes }
  const ended = (await db.sql.get<{ ended: number | null }>('SELECT ended_at AS ended FROM batches WHERE id = ?', [id]))?.ended ?? null
  await db.close()
  return { ...out, ended }
}

const prompt = (i: number) => `one-dir ${i}`

test.skipIf(!!skip)('a second gateway started on the data dir while a batch runs: no item is sent twice, none is failed as lost, every item ends', async () => {
  const N = 60
  const r = await rig(100)
  try {
    const a = await r.spawn()
    const { id, batch } = await createBatch(r, a, N)
    await until('a few items done', async () => (await batch(a)).request_counts.completed >= 6)
    await until('items at the upstream', () => r.answering() > 0)
    // two more start while items are in flight on the first
    const [b, c] = [await r.spawn(), await r.spawn()]
    await until('the batch completes', async () => (await batch(b)).output_file_id != null, 30_000)
    const done = await batch(c)
    expect(done.status).toBe('completed')
    expect(done.request_counts).toEqual({ total: N, completed: N, failed: 0 })
    const items = await itemsOf(r.dataDir, id)
    expect(items.codes).toEqual([])
    expect(items.stored.length).toBe(N)
    expect(r.sent.size).toBe(N)
    for (const [p, n] of r.sent) expect([p, n]).toEqual([p, 1])
  } finally {
    await r.stop()
  }
}, 60_000)

test.skipIf(!!skip)('the runner killed (kill -9) while another gateway lives: it takes over within seconds, the dead one’s marked items fail as lost once, the rest run once', async () => {
  const N = 60
  const r = await rig(100)
  try {
    const a = await r.spawn()
    const b = await r.spawn()
    // made on the one that does not run batches: it tells the runner
    const { id, batch } = await createBatch(r, b, N)
    await until('a quarter of the items done', async () => (await batch(b)).request_counts.completed >= N / 4)
    await until('items at the upstream', () => r.answering() > 0)
    a.kill('SIGKILL')
    expect(await a.exited).not.toBe(0)
    const killedAt = Date.now()
    const { stored, marked } = await itemsOf(r.dataDir, id)
    // the runner was the first process: what it had in flight is marked
    expect(marked.length).toBeGreaterThan(0)
    expect(marked.length).toBeLessThanOrEqual(6)
    const atUpstream = [...r.sent.keys()].map((p) => Number(p.slice('one-dir '.length))).filter((i) => !stored.includes(i))
    expect(marked).toEqual(expect.arrayContaining(atUpstream))

    await until('the other takes over', () => b.output().includes('batches: this process runs the batches now'), 10_000)
    expect(Date.now() - killedAt).toBeLessThan(10_000)
    await until('the batch completes', async () => (await batch(b)).output_file_id != null, 30_000)
    const done = await batch(b)
    expect(done.status).toBe('completed')
    // of the marked ones, those the dead one's journal names as sent (every one that reached the
    // upstream among them) fail as lost, once; the marked ones it never sent run here, as the rest
    const items = await itemsOf(r.dataDir, id)
    expect(items.failed.length).toBeGreaterThan(0)
    expect(marked).toEqual(expect.arrayContaining(items.failed))
    expect(items.failed).toEqual(expect.arrayContaining(atUpstream))
    expect(done.request_counts).toEqual({ total: N, completed: N - items.failed.length, failed: items.failed.length })
    expect(items.codes).toEqual(items.failed.map(() => 'batch_item_lost'))
    expect(items.succeeded).toEqual(Array.from({ length: N }, (_, i) => i).filter((i) => !items.failed.includes(i)))
    for (const [p, n] of r.sent) expect([p, n]).toEqual([p, 1])
    for (const i of items.succeeded) expect(r.sent.get(prompt(i))).toBe(1)
  } finally {
    await r.stop()
  }
}, 60_000)

test.skipIf(!!skip)('a cancel on a gateway that does not run the batch: the items at the upstream end with their results, the rest fail cancelled, the runner stops and ends the batch', async () => {
  const N = 30
  const r = await rig(1_500)
  try {
    const a = await r.spawn()
    const b = await r.spawn()
    const { id, batch } = await createBatch(r, a, N)
    await until('six items at the upstream', () => r.sent.size >= 6)
    await Bun.sleep(100)
    const cancelled = await fetch(`${b.url}/api/v1/batches/${id}/cancel`, { method: 'POST', headers: r.headers })
    expect(cancelled.status).toBe(200)
    expect(['cancelling', 'cancelled']).toContain(((await cancelled.json()) as any).status)
    await until('the batch ends', async () => (await itemsOf(r.dataDir, id)).ended !== null, 20_000)
    const done = await batch(a)
    expect(done.status).toBe('cancelled')
    const items = await itemsOf(r.dataDir, id)
    // exactly the six in flight ran, each once; nothing was sent after the cancel
    expect(r.sent.size).toBe(6)
    for (const [p, n] of r.sent) expect([p, n]).toEqual([p, 1])
    expect(items.succeeded.map(prompt).sort()).toEqual([...r.sent.keys()].sort())
    expect(items.codes).toEqual(Array.from({ length: N - 6 }, () => 'batch_cancelled'))
    expect(done.request_counts).toEqual({ total: N, completed: 6, failed: N - 6 })
  } finally {
    await r.stop()
  }
}, 60_000)
