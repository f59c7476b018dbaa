// Durability: a gateway stopped mid-batch, restarted on the same data dir. kill -9: the batch
// completes, every index has exactly one result, no item reaches the upstream twice, and each
// is recorded (billed) once. What the dead process had in flight may have reached the upstream:
// it was marked so in the database before it was sent (SQLite: one statement a round; PostgreSQL:
// a claim under a lease), and it fails with batch_item_lost rather than being sent again.
// SIGTERM: the items in flight land, the marks of those never sent go back, and every one of
// those runs after the restart: nothing lost, nothing sent twice. Items handed out and then kept
// waiting for credit are not in flight: their marks (claims) go back as they start to wait, so a
// kill -9 does not count them lost. A batch worker thread that crashes is the same: the items
// whose upstream call it had begun fail batch_item_lost, never sent again; those it had not begun
// run, once, and wait for the next worker without their marks.
import { expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { deadJournals } from '../../src/batches/sent-journal.ts'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { chat, NO_LIMITS, replayFixtures } from './helpers.ts'

const ADMIN = 'admin-token-crash-tests'

/**
 * The items of `batchId` that the journals of items sent of dead processes on the data dir name,
 * read as a start reads them (sent-journal.ts) and left for the next start: those whose first
 * upstream call a process was about to make, which a kill may have cut short of the upstream,
 * and which fail as lost after it (they may have reached it).
 */
function journaled(dataDir: string, batchId: string): Set<number> {
  const out = new Set<number>()
  for (const j of deadJournals(dataDir)) {
    for (const i of j.sent.get(batchId) ?? []) out.add(i)
    j.leave()
  }
  return out
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/**
 * A fake upstream that takes `delayMs` an answer and counts each prompt it is sent (and how many
 * it is answering now), and a data dir.
 */
async function rig(delayMs: number | ((prompt: string) => number)) {
  const up = await startFakeUpstream()
  const dataDir = tempDir('switchyard-batch-crash-')
  const key = 'sk-sy-crash-' + crypto.randomUUID().replaceAll('-', '')
  // a short lease: on a shared database the dead instance's claims are taken over once it runs out
  const env = { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_ADMIN_TOKEN: ADMIN, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_LOG_LEVEL: 'info', SWITCHYARD_BATCH_LEASE_MS: '2000' }
  let answered = 0
  // called as each answer goes, after its delay (and answering with the fixture)
  const sent = replayFixtures(up, { delayMs, special: () => void answered++ })
  const answering = () => [...sent.values()].reduce((a, b) => a + b, 0) - answered
  return { up, dataDir, key, env, sent, answering }
}

/** A batch of `n` chat items (prompt `crash i`), made on `gw` with `key`. */
async function createBatch(gw: Spawned, key: string, n: number, extra: Record<string, unknown> = {}) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `crash ${i}`, extra) }))
  const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 6 } }) })
  expect(created.status).toBe(200)
  const id = ((await created.json()) as any).id as string
  const batch = async (url: string) => (await (await fetch(`${url}/api/v1/batches/${id}`, { headers })).json()) as any
  return { id, batch }
}

/** The indexes with a result, and those marked (SQLite) or claimed (PostgreSQL) in flight without one. */
async function itemsOf(dataDir: string, id: string) {
  const db = await openDatabaseOf(dataDir, { readonly: true })
  const idx = async (where: string) => (await db.sql.all<{ idx: number }>(`SELECT idx FROM batch_items WHERE batch_id = ? AND ${where} ORDER BY idx`, [id])).map((r) => r.idx)
  const out = { stored: await idx('status IS NOT NULL'), marked: await idx('status IS NULL AND lease_owner IS NOT NULL') }
  await db.close()
  return out
}

/** The batch's results, output and error files, as the restarted gateway serves them, and its billing. */
async function outcome(gw: Spawned, dataDir: string, key: string, id: string, batch: any) {
  const headers = { authorization: `Bearer ${key}` }
  const page = (await (await fetch(`${gw.url}/api/v1/batches/${id}/results?limit=1000`, { headers })).json()) as any
  const lines = async (file: string | null) =>
    file ? (await (await fetch(`${gw.url}/api/v1/files/${file}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l)) : []
  const out = await lines(batch.output_file_id)
  const errors = await lines(batch.error_file_id)
  const db = await openDatabaseOf(dataDir)
  const records = (await db.sql.get<{ n: number; usd: number }>('SELECT count(*) AS n, sum(cost) AS usd FROM generations WHERE batch_id = ?', [id]))!
  const spent = (await db.sql.all<{ spent: number }>('SELECT spent FROM api_keys')).reduce((s, r) => s + r.spent, 0)
  await db.close()
  const idxOf = (l: any) => Number(l.custom_id.slice(5))
  return { indexes: page.results.map((r: any) => r.index), out: out.map(idxOf).sort((a, b) => a - b), errors, lost: errors.map(idxOf).sort((a, b) => a - b), records, spent }
}

/** Exactly the items `lost` failed as lost, every other one answered, and each billed once (one record an answer, the key's spend their sum). */
function expectOnlyLost(o: Awaited<ReturnType<typeof outcome>>, n: number, lost: number[]) {
  expect(o.lost).toEqual(lost)
  for (const e of o.errors) expect(e.error.code).toBe('batch_item_lost')
  expect(o.out).toEqual(Array.from({ length: n }, (_, i) => i).filter((i) => !lost.includes(i)))
  expect(o.records.n).toBe(n - lost.length)
  expect(o.spent).toBeCloseTo(o.records.usd, 10)
}

test('kill -9 with items at the upstream, restart: the batch completes, no item is sent twice, those in flight fail batch_item_lost, each billed once', async () => {
  const N = 120
  // each answer takes 100 ms: with 6 at once, some are always at the upstream
  const { up, dataDir, key, env, sent, answering } = await rig(100)
  try {
    const first = await spawnGateway({ env, dataDir })
    const { id, batch } = await createBatch(first, key, N)
    await until('a quarter of the items done', async () => (await batch(first.url)).request_counts.completed >= N / 4)
    // items go out in waves: killed while one is at the upstream, not between two
    await until('items at the upstream', () => answering() > 0)

    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)

    const { stored, marked } = await itemsOf(dataDir, id)
    expect(stored.length).toBeGreaterThanOrEqual(N / 4)
    expect(stored.length).toBeLessThan(N)
    // the items the upstream had been sent and whose result was not stored: in flight at the kill,
    // every one of them marked so in the database, and no more than run at once
    const atUpstream = [...sent.keys()].map((p) => Number(p.slice(6))).filter((i) => !stored.includes(i))
    expect(atUpstream.length).toBeGreaterThan(0)
    expect(marked).toEqual(expect.arrayContaining(atUpstream))
    expect(marked.length).toBeLessThanOrEqual(6)
    const sentBefore = new Map(sent)

    const second = await spawnGateway({ env, dataDir })
    try {
      await until('the batch completes', async () => (await batch(second.url)).output_file_id != null)
      // no item went upstream twice: a stored one not again, a lost one not again, the rest once
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
      for (const idx of stored) expect(sent.get(`crash ${idx}`)).toBe(sentBefore.get(`crash ${idx}`))
      const b = await batch(second.url)
      expect(b.status).toBe('completed')
      expect((await second.waitForOutput('batches: resuming')).includes('batches: resuming')).toBe(true)
      expect(second.output().includes('not sent again')).toBe(true)

      const o = await outcome(second, dataDir, key, id, b)
      expect(o.indexes).toEqual(Array.from({ length: N }, (_, i) => i))
      // lost: every item at the upstream at the kill, and of the other claims only those whose
      // call the dead process had begun (its journal of items sent names them); a claim it never
      // sent (PostgreSQL's claims are taken ahead of the calls) ran after the restart, once
      expect(o.lost).toEqual(expect.arrayContaining(atUpstream))
      expect(marked).toEqual(expect.arrayContaining(o.lost))
      expect(b.request_counts).toEqual({ total: N, completed: N - o.lost.length, failed: o.lost.length })
      expectOnlyLost(o, N, o.lost)
      for (const idx of o.out) expect(sent.get(`crash ${idx}`)).toBe(1)
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)

test('SIGTERM mid-batch with items waiting for credit, restart: nothing is lost, the items not sent run after it, none twice, each billed once', async () => {
  const N = 40
  const { up, dataDir, env, sent } = await rig(100)
  try {
    const first = await spawnGateway({ env, dataDir })
    // credit for about three items' worst case at once (16,000 output tokens each): of the six
    // places, the others wait for it, handed out and not sent
    const made = await fetch(`${first.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'three at once', credits: 0.03 }),
    })
    expect(made.status).toBe(201)
    const key = ((await made.json()) as { key: string }).key
    const { id, batch } = await createBatch(first, key, N, { max_tokens: 16_000 })
    await until('a few items done', async () => (await batch(first.url)).request_counts.completed >= 5)
    // more items handed out than the credit lets run: some wait, never sent (each round marks
    // them as it hands them out, and their marks go as they start to wait)
    await Bun.sleep(300)

    first.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    // every item handed out either landed or was given back
    const { stored, marked } = await itemsOf(dataDir, id)
    expect(marked).toEqual([])
    expect(stored.length).toBeLessThan(N)
    for (const idx of stored) expect(sent.get(`crash ${idx}`)).toBe(1)

    const second = await spawnGateway({ env, dataDir })
    try {
      await until('the batch completes', async () => (await batch(second.url)).output_file_id != null)
      const b = await batch(second.url)
      expect(b.status).toBe('completed')
      expect(b.request_counts).toEqual({ total: N, completed: N, failed: 0 })
      const o = await outcome(second, dataDir, key, id, b)
      expect(o.indexes).toEqual(Array.from({ length: N }, (_, i) => i))
      expect(o.errors).toEqual([])
      expect(sent.size).toBe(N)
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
      expect(o.records.n).toBe(N)
      expect(o.spent).toBeCloseTo(o.records.usd, 10)
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)

test('kill -9 with items waiting for credit behind items at the upstream, restart with credit added: the waiting ones run, only those sent are lost, none twice', async () => {
  const N = 12
  // the first gateway's items stay at the upstream 3 s: long enough to kill it while they are
  // there and the others wait for their credit; after the restart answers come at once
  let delay = 3_000
  const { up, dataDir, env, sent } = await rig(() => delay)
  try {
    const first = await spawnGateway({ env, dataDir })
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    // credit for about three items' worst case at once (16,000 output tokens each): of the six
    // places, the others are handed out and wait for it, never sent
    const made = await fetch(`${first.url}/admin/v1/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'three at once', credits: 0.03 }) })
    expect(made.status).toBe(201)
    const { key, id: keyId } = (await made.json()) as { key: string; id: string }
    const { id, batch } = await createBatch(first, key, N, { max_tokens: 16_000 })
    await until('items at the upstream', () => sent.size > 0)
    // the others have been handed out, refused for want of credit, and wait
    await Bun.sleep(700)
    const atUpstream = [...sent.keys()].map((p) => Number(p.slice(6))).sort((a, b) => a - b)
    expect(atUpstream.length).toBeGreaterThan(0)
    expect(atUpstream.length).toBeLessThan(6)

    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)

    // marked (claimed) in flight: exactly the items that reached the upstream, not those waiting
    const { stored, marked } = await itemsOf(dataDir, id)
    expect(stored).toEqual([])
    expect(marked).toEqual(atUpstream)

    delay = 0
    const second = await spawnGateway({ env, dataDir })
    try {
      const credited = await fetch(`${second.url}/admin/v1/keys/${keyId}/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 10 }) })
      expect(credited.status).toBe(200)
      await until('the batch completes', async () => (await batch(second.url)).output_file_id != null, 30_000)
      const b = await batch(second.url)
      expect(b.status).toBe('completed')
      expect(b.request_counts).toEqual({ total: N, completed: N - atUpstream.length, failed: atUpstream.length })
      const o = await outcome(second, dataDir, key, id, b)
      // only the items that had reached the upstream are lost; the waiting ones ran after the restart
      expectOnlyLost(o, N, atUpstream)
      // none went upstream twice
      expect(sent.size).toBe(N)
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)

test('kill -9 while a restarted gateway starts its batch workers: nothing is handed out before they can take it, so only items whose upstream call had begun fail as lost', async () => {
  const N = 12
  const { up, dataDir, key, env, sent } = await rig(3_000)
  try {
    const first = await spawnGateway({ env, dataDir })
    const { id, batch } = await createBatch(first, key, N)
    // all six places at the upstream: those lost with this first process all went
    await until('items at the upstream', () => sent.size >= 6)
    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    const sentFirst = new Set(sent.keys())

    // the second start resumes the batch: its workers take a while to start (a second or more);
    // killed as its items reach the upstream, or half a second after it handed them out
    const second = await spawnGateway({ env, dataDir })
    await until('the resumed batch handed out', async () => (await itemsOf(dataDir, id)).marked.some((i) => !sentFirst.has(`crash ${i}`)) || sent.size > sentFirst.size)
    // posted to started workers, they reach the upstream within a few tens of ms; a worker still
    // starting takes a second or more
    const by = Date.now() + 500
    await until('the resumed items at the upstream', () => sent.size >= 12 || Date.now() > by)
    second.kill('SIGKILL')
    expect(await second.exited).not.toBe(0)
    // what the second had begun to send: on a loaded machine its calls may not have arrived yet
    const begun = journaled(dataDir, id)

    const third = await spawnGateway({ env, dataDir })
    try {
      await until('the batch completes', async () => (await batch(third.url)).completed_at != null, 30_000)
      const b = await batch(third.url)
      expect(b.status).toBe('completed')
      const o = await outcome(third, dataDir, key, id, b)
      expect(o.indexes).toEqual(Array.from({ length: N }, (_, i) => i))
      // only an item that reached the upstream, or whose call had begun, may be failed as lost
      // (one handed out before a worker could take it had not begun); none went twice
      expect(o.lost.filter((i) => !sent.has(`crash ${i}`) && !begun.has(i))).toEqual([])
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
      expect(o.records.n).toBe(N - o.lost.length)
    } finally {
      third.kill('SIGTERM')
      await third.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 90_000)

/**
 * One item worker, six items at once: items 0-4 stay at the upstream 4 s, item 5 answers after
 * 1.5 s, the rest at once. Once the six are at the upstream the crash file is made: item 5's end
 * hands item 6 to the worker in a message of its own, and the worker crashes as it takes it (the
 * test hook, src/batches/test-crash.ts), with 0-4 mid-call and 6 never begun.
 */
async function crashRig() {
  const r = await rig((prompt) => {
    const i = Number(prompt.slice(6))
    return i < 5 ? 4_000 : i === 5 ? 1_500 : 0
  })
  const crashFile = join(r.dataDir, 'crash-batch-worker')
  const env = { ...r.env, SWITCHYARD_BATCH_WORKERS: '1', SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE: crashFile }
  const crashWhenSixAreOut = async (gw: Spawned) => {
    await until('six items at the upstream', () => r.sent.size >= 6)
    expect(r.sent.has('crash 6')).toBe(false)
    await Bun.write(crashFile, '')
    await until('the worker crashed', () => !existsSync(crashFile) && gw.output().includes('batch worker failed'))
  }
  return { ...r, env, crashWhenSixAreOut }
}

const MID_CALL = [0, 1, 2, 3, 4]

test('a batch worker thread that crashes with items at the upstream: those fail batch_item_lost, sent once; the one it had not begun runs once', async () => {
  const N = 12
  const { up, dataDir, key, env, sent, crashWhenSixAreOut } = await crashRig()
  try {
    const gw = await spawnGateway({ env, dataDir })
    try {
      const { id, batch } = await createBatch(gw, key, N)
      await crashWhenSixAreOut(gw)
      await until('the batch completes', async () => (await batch(gw.url)).output_file_id != null, 30_000)
      const b = await batch(gw.url)
      expect(b.status).toBe('completed')
      expect(b.request_counts).toEqual({ total: N, completed: N - MID_CALL.length, failed: MID_CALL.length })
      const o = await outcome(gw, dataDir, key, id, b)
      expect(o.indexes).toEqual(Array.from({ length: N }, (_, i) => i))
      // the items mid-call are lost, as after a kill -9 (they may have been billed upstream); no
      // item went upstream twice, and item 6, handed to the worker as it crashed, ran once
      expectOnlyLost(o, N, MID_CALL)
      expect(sent.size).toBe(N)
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
      // said once the failures are stored, as the batch ends: the log goes out every 50 ms
      expect(await gw.waitForOutput('failed, not sent again')).toContain('failed, not sent again')
    } finally {
      gw.kill('SIGTERM')
      await gw.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)

test('a batch worker crash, then kill -9 while the next worker starts: the item never begun waits unmarked, and runs after the restart instead of failing as lost', async () => {
  const N = 12
  const { up, dataDir, key, env, sent, crashWhenSixAreOut } = await crashRig()
  try {
    const first = await spawnGateway({ env, dataDir })
    const { id, batch } = await createBatch(first, key, N)
    await crashWhenSixAreOut(first)
    // the items mid-call are stored lost at once; item 6 waits for the next worker (whose start
    // takes a while) without its mark (claim), or, kept marked, until it is sent
    let seen = { stored: [] as number[], marked: [] as number[] }
    const waitingUnmarked = () => MID_CALL.every((i) => seen.stored.includes(i)) && !seen.marked.includes(6) && !seen.stored.includes(6)
    await until('item 6 unmarked, or sent', async () => ((seen = await itemsOf(dataDir, id)), waitingUnmarked() || sent.has('crash 6')), 10_000)
    expect(seen.marked).not.toContain(6)
    expect(waitingUnmarked()).toBe(true)
    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)

    const second = await spawnGateway({ env, dataDir })
    try {
      await until('the batch completes', async () => (await batch(second.url)).output_file_id != null, 30_000)
      const b = await batch(second.url)
      expect(b.status).toBe('completed')
      const o = await outcome(second, dataDir, key, id, b)
      expect(o.indexes).toEqual(Array.from({ length: N }, (_, i) => i))
      // only the items that were mid-call are lost; item 6 ran, once
      expectOnlyLost(o, N, MID_CALL)
      expect(sent.get('crash 6')).toBe(1)
      for (const [prompt, n] of sent) expect([prompt, n]).toEqual([prompt, 1])
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)

/** The batch items the gateway's /metrics counts as ended, by result. */
async function itemMetrics(gw: Spawned) {
  const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text()
  const n = (status: string) => Number(new RegExp(`^switchyard_batch_items_total\\{status="${status}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)
  return { completed: n('succeeded'), failed: n('failed') }
}

test('results the writer stores just after the pool failed their items for a dead worker: each item ends once in /metrics and the log, as stored', async () => {
  const N = 6
  const { up, dataDir, key, env } = await rig(200)
  const crashFile = join(dataDir, 'crash-batch-worker')
  // the writer's first write has the item worker crash, and is told to the main thread only once
  // the pool has failed that worker's jobs (the test hook, src/batches/test-crash.ts)
  await Bun.write(crashFile, 'after-store')
  try {
    const gw = await spawnGateway({ env: { ...env, SWITCHYARD_BATCH_WORKERS: '1', SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE: crashFile }, dataDir })
    try {
      const { batch } = await createBatch(gw, key, N)
      await until('the batch completes', async () => (await batch(gw.url)).output_file_id != null, 30_000)
      expect(existsSync(crashFile)).toBe(false)
      const counts = (await batch(gw.url)).request_counts
      expect(counts.total).toBe(N)
      // the results stored before the pool failed their items are kept (succeeded)
      expect(counts.completed).toBeGreaterThan(0)
      // the stored results' news comes late (the hook holds it back): every item counted once by then
      let m = await itemMetrics(gw)
      await until('every item counted', async () => ((m = await itemMetrics(gw)), m.completed + m.failed >= N), 10_000).catch(() => {})
      expect(m).toEqual({ completed: counts.completed, failed: counts.failed })
      // an item failed as lost is said so once; one whose result was stored is not said lost
      expect(gw.output().split('failed, not sent again').length - 1).toBe(counts.failed)
    } finally {
      gw.kill('SIGTERM')
      await gw.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}, 60_000)
