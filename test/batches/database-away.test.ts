// A running batch's results while its database is away or full. Items answered by the upstream
// meanwhile wait for it: once it is back, or after a restart (a kill -9 or a graceful stop in the
// outage), each item ends once with its result stored, each record is stored once, each cost
// counted once (the key's spend, Redis's running spend, the usage report), and the batch's counts
// agree with its output file. A real gateway in a subprocess: on PostgreSQL its database cut
// through a proxy while the batch runs; on either store, full (a trigger that fails the records'
// inserts as a full disk does) until every item has answered.
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { databaseEnv, dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { TEST_REDIS_URL } from '../helpers/redis.ts'
import { spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { startTcpProxy, type Proxy } from '../helpers/tcp-proxy.ts'
import { chat, NO_LIMITS, replayFixtures } from './helpers.ts'

const ADMIN = 'adm-batch-db-away'
const N = 24

const dirs: string[] = []
const ups: FakeUpstream[] = []
afterAll(async () => {
  for (const u of ups) await u.stop()
  for (const d of dirs) {
    await dropDatabaseFor(d)
    rmSync(d, { recursive: true, force: true })
  }
})

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(25)
  }
}

type How = 'cut' | 'full'

/** Makes the records' inserts fail as a full disk does, in the database itself (every connection sees it); returns the undo. */
async function fill(dataDir: string): Promise<() => Promise<void>> {
  const db = await openDatabaseOf(dataDir)
  const message = 'database or disk is full (simulated)'
  if (db.sql.dialect === 'sqlite') {
    await db.sql.run(`CREATE TRIGGER test_full BEFORE INSERT ON generations BEGIN SELECT RAISE(ABORT, '${message}'); END`)
    return async () => {
      await db.sql.run('DROP TRIGGER test_full')
      await db.close()
    }
  }
  await db.sql.run(`CREATE FUNCTION test_full() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION '${message}' USING ERRCODE = '53100'; END $$ LANGUAGE plpgsql`)
  await db.sql.run('CREATE TRIGGER test_full BEFORE INSERT ON generations FOR EACH ROW EXECUTE FUNCTION test_full()')
  return async () => {
    await db.sql.run('DROP TRIGGER test_full ON generations')
    await db.sql.run('DROP FUNCTION test_full()')
    await db.close()
  }
}

/** A fake upstream taking 150 ms an answer (counting each prompt), a data dir, and (PostgreSQL) its database through a proxy. */
async function setup(how: How, redis = false) {
  const up = await startFakeUpstream()
  ups.push(up)
  let answered = 0
  const sent = replayFixtures(up, { delayMs: 150, special: () => void answered++ })
  const dataDir = tempDir('batch-db-away-')
  dirs.push(dataDir)
  let proxy: Proxy | undefined
  const via: Record<string, string> = {}
  if (how === 'cut') {
    const url = new URL((await databaseEnv(dataDir)).SWITCHYARD_DATABASE_URL!)
    proxy = startTcpProxy(url.hostname, Number(url.port || 5432))
    const viaProxy = new URL(url)
    viaProxy.host = `127.0.0.1:${proxy.port}`
    via.SWITCHYARD_DATABASE_URL = viaProxy.toString()
  }
  const redisPrefix = redis ? `dbaway:${crypto.randomUUID().slice(0, 8)}:` : undefined
  if (redisPrefix) Object.assign(via, { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: redisPrefix })
  const env: Record<string, string> = {
    ...NO_LIMITS,
    SWITCHYARD_ADMIN_TOKEN: ADMIN,
    OPENAI_API_KEY: 'sk-up',
    OPENAI_BASE_URL: up.url,
    SWITCHYARD_LOG_LEVEL: 'info',
    SWITCHYARD_BATCH_LEASE_MS: '2000',
    ...via,
  }
  let undo: (() => Promise<void>) | undefined
  const away = {
    async start() {
      if (proxy) proxy.cut()
      else undo = await fill(dataDir)
    },
    async end() {
      if (proxy) proxy.restore()
      else await undo?.()
      undo = undefined
    },
    async stop() {
      proxy?.stop()
      await undo?.().catch(() => {})
    },
  }
  return { how, dataDir, away, env, key: '', keyId: '', redisPrefix, sent, answered: () => answered }
}

type Setup = Awaited<ReturnType<typeof setup>>

/** The results spools left in the data dir. */
function spools(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'spool', 'batch-results')).filter((f) => f.endsWith('.jsonl'))
  } catch {
    return []
  }
}

/**
 * The batch's key, made on the first gateway, with credit: held in Redis when there is one, else
 * in the database, so that on PostgreSQL with no Redis an item handed out just before the cut
 * waits unsent for its hold (and its claim cannot be given back while the database is away).
 */
async function newKey(gw: Spawned, s: Setup, credits: number | null = 100) {
  const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'away', credits }) })
  expect(r.status).toBe(201)
  const made = (await r.json()) as { id: string; key: string }
  s.key = made.key
  s.keyId = made.id
}

async function createBatch(gw: Spawned, s: Setup) {
  await newKey(gw, s)
  const key = s.key
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const requests = Array.from({ length: N }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `away ${i}`, { max_tokens: 20 }) }))
  const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests, settings: { concurrency: 4 } }) })
  expect(created.status).toBe(200)
  return ((await created.json()) as { id: string }).id
}

const batchOf = async (gw: Spawned, key: string, id: string) => (await (await fetch(`${gw.url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any

/**
 * The database goes away once a few items are stored and some are at the upstream; returns once
 * nothing is at the upstream and what answered waits for the database (no more is handed out:
 * the items waiting for it take the batch's places).
 */
async function awayMidBatch(gw: Spawned, s: Setup, id: string) {
  const sent = () => [...s.sent.values()].reduce((a, b) => a + b, 0)
  await until('a few items done', async () => (await batchOf(gw, s.key, id)).request_counts?.completed >= 4)
  await until('items at the upstream', () => sent() > s.answered())
  await s.away.start()
  for (let settled = false; !settled; ) {
    await until('the items in flight answered', () => s.answered() >= sent())
    const was = sent()
    await Bun.sleep(500)
    settled = sent() === was && s.answered() >= was
  }
  // results wait, and are not stored
  expect(await gw.waitForOutput('storing results failed; retrying', 10_000)).toContain('storing results failed; retrying')
  expect(sent()).toBeLessThan(N)
}

/** The batch of `n` items ended, read through the gateway and the database: every figure agrees, each item once, none failed. */
async function expectAllOnce(gw: Spawned, s: Setup, id: string, n = N) {
  await until('the batch ends', async () => {
    const b = await batchOf(gw, s.key, id)
    return b.output_file_id != null || b.error_file_id != null
  }, 30_000)
  const b = await batchOf(gw, s.key, id)
  const headers = { authorization: `Bearer ${s.key}` }
  const lines = async (file: string | null) => (file ? (await (await fetch(`${gw.url}/api/v1/files/${file}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l)) : [])
  const out = await lines(b.output_file_id)
  const errors = await lines(b.error_file_id)
  // no item failed (one never sent is not lost after a stop either), none went upstream twice
  expect(errors.map((e: any) => [e.custom_id, e.error?.code ?? JSON.stringify(e.response?.body?.error ?? e).slice(0, 300)])).toEqual([])
  expect(b.status).toBe('completed')
  expect(b.request_counts).toEqual({ total: n, completed: n, failed: 0 })
  expect(out.map((l: any) => l.custom_id).sort()).toEqual(Array.from({ length: n }, (_, i) => `item-${i}`).sort())
  for (const [prompt, k] of s.sent) expect([prompt, k]).toEqual([prompt, 1])
  expect(s.sent.size).toBe(n)
  const db = await openDatabaseOf(s.dataDir)
  try {
    const stored = (await db.sql.get<{ n: number }>('SELECT count(*) AS n FROM batch_items WHERE batch_id = ? AND status IS NOT NULL', [id]))!
    const recs = (await db.sql.all<{ id: string; cost: number }>('SELECT id, cost FROM generations WHERE batch_id = ?', [id]))
    const keyId = s.keyId
    const spent = Number((await db.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [keyId]))!.spent)
    expect(Number(stored.n)).toBe(n)
    expect(recs.length).toBe(n)
    expect(new Set(recs.map((r) => r.id)).size).toBe(n)
    const cost = recs.reduce((a, r) => a + Number(r.cost), 0)
    expect(cost).toBeGreaterThan(0)
    expect(spent).toBeCloseTo(cost, 12)
    const usage = (await (await fetch(`${gw.url}/api/v1/usage`, { headers })).json()) as { totals: { total_requests: number; total_cost: number } }
    expect(usage.totals.total_requests).toBe(n)
    expect(usage.totals.total_cost).toBeCloseTo(cost, 9)
    // what the gateway shows of the key: its stored spend, counted once
    const shown = await fetch(`${gw.url}/admin/v1/keys/${keyId}`, { headers: { authorization: `Bearer ${ADMIN}` } })
    expect(((await shown.json()) as { spent: number }).spent).toBeCloseTo(spent, 12)
    if (s.redisPrefix) {
      const redis = new RedisClient(TEST_REDIS_URL!)
      try {
        expect(Number(await redis.hget(`${s.redisPrefix}cr:{${keyId}}`, 'spent'))).toBeCloseTo(spent, 12)
      } finally {
        redis.close()
      }
    }
  } finally {
    await db.close()
  }
  // nothing waits on the disk any more
  expect(spools(s.dataDir)).toEqual([])
}

// a full database on SQLite; on PostgreSQL a cut one (the full one's trigger is the same writer's
// path there). A stop by SIGTERM waits out its grace (the writes wait for the database): once, on
// the cut database without Redis (the same spool as SIGKILL's, kept by the writer's stop).
type Stop = 'SIGKILL' | 'SIGTERM'
const cases: { how: How; redis?: boolean; stops: Stop[] }[] = onPostgres
  ? [{ how: 'cut', stops: ['SIGKILL', 'SIGTERM'] }, ...(TEST_REDIS_URL ? [{ how: 'cut' as const, redis: true, stops: ['SIGKILL' as const] }] : [])]
  : [{ how: 'full', stops: ['SIGKILL'] }]
const what = (how: How, redis?: boolean) => `${how === 'cut' ? 'the database cut' : 'the database full'}${redis ? ' (Redis: its running spend agrees)' : ''}`

describe('a batch whose database goes away mid-run', () => {
  for (const { how, redis, stops } of cases) {
    test(`${what(how, redis)}, then back: each item ends once, stored and counted once`, async () => {
      const s = await setup(how, redis)
      const gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
      try {
        const id = await createBatch(gw, s)
        await awayMidBatch(gw, s, id)
        await Bun.sleep(1_000)
        await s.away.end()
        await expectAllOnce(gw, s, id)
      } finally {
        gw.kill('SIGKILL')
        await gw.exited
        await s.away.stop()
      }
    }, 90_000)

    for (const signal of stops) {
      test(`${what(how, redis)}, stopped (${signal}) with results waiting for it, started again once it is back: each item ends once, stored and counted once`, async () => {
        const s = await setup(how, redis)
        let gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
        try {
          const id = await createBatch(gw, s)
          await awayMidBatch(gw, s, id)
          gw.kill(signal)
          await gw.exited
          // kept on the disk for the next start
          expect(spools(s.dataDir)).toHaveLength(1)
          await s.away.end()
          gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
          // log lines go out in batches a few times a second: the banner may come first
          expect(await gw.waitForOutput('spooled results of a gateway no longer running written', 10_000)).toContain('spooled results of a gateway no longer running written')
          await expectAllOnce(gw, s, id)
        } finally {
          gw.kill('SIGKILL')
          await gw.exited
          await s.away.stop()
        }
      }, 90_000)
    }
  }
})

/**
 * On PostgreSQL with no Redis, a key's credit holds wait on its row, locked here by another
 * session: a batch of `n` items is made and its items handed out, claimed, waiting for their holds;
 * then the database goes away under them and the row is let go (their holds fail: it is away).
 */
async function waitingForHolds(gw: Spawned, s: Setup, n: number) {
  const direct = await openDatabaseOf(s.dataDir)
  await newKey(gw, s, 100)
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  const locked = new Promise<void>((held) =>
    void direct.sql.tx(async (q) => {
      await q.get('SELECT id FROM api_keys WHERE id = ? FOR UPDATE', [s.keyId])
      held()
      await released
    }),
  )
  await locked
  try {
    const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }
    const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `away ${i}`, { max_tokens: 20 }) }))
    const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests }) })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { id: string }).id
    await Bun.sleep(1_500)
    expect(s.sent.size).toBe(0)
    await s.away.start()
    release()
    await Bun.sleep(1_500)
    return id
  } finally {
    release()
    await direct.close().catch(() => {})
  }
}

describe.skipIf(!onPostgres)('a batch item admitted while the database that holds the credit goes away', () => {
  test('it waits for the database and runs once it is back, rather than failing', async () => {
    const s = await setup('cut')
    const gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
    try {
      const id = await waitingForHolds(gw, s, 3)
      await s.away.end()
      await expectAllOnce(gw, s, id, 3)
    } finally {
      gw.kill('SIGKILL')
      await gw.exited
      await s.away.stop()
    }
  }, 90_000)

  // its claim could not be given back while the database was away: the next start on the data
  // dir knows it was never sent (the stopped process's journal of what it sent), and runs it. A
  // SIGTERM waits out its grace first, the database still away.
  for (const [signal, how] of [['SIGKILL', 'killed (kill -9)'], ['SIGTERM', 'stopped (SIGTERM)']] as const)
  test(`${how} while it waits, started again once the database is back: it runs once, not failed as lost`, async () => {
    const s = await setup('cut')
    let gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
    try {
      const id = await waitingForHolds(gw, s, 3)
      gw.kill(signal)
      await gw.exited
      await s.away.end()
      gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
      await expectAllOnce(gw, s, id, 3)
    } finally {
      gw.kill('SIGKILL')
      await gw.exited
      await s.away.stop()
    }
  }, 90_000)
})
