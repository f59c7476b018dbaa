// Records that wait for a database that is away are kept on the local disk (the spool), so a
// kill -9 during the outage loses none of the replies the clients got: the next start writes
// them. A real gateway on PostgreSQL, its database cut through a proxy while it serves.
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { names } from '../../src/db/columns.ts'
import { apiKeys, generations } from '../../src/db/schema.ts'
import { fixture, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { databaseEnv, dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { TEST_REDIS_URL } from '../helpers/redis.ts'
import { spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { startTcpProxy, type Proxy } from '../helpers/tcp-proxy.ts'

const ADMIN = 'adm-spool'
const g = names(generations)
const k = names(apiKeys)

let up: FakeUpstream
const dirs: string[] = []
afterAll(async () => {
  await up?.stop()
  for (const d of dirs) {
    await dropDatabaseFor(d)
    rmSync(d, { recursive: true, force: true })
  }
})

interface Setup {
  dataDir: string
  proxy: Proxy
  env: Record<string, string>
  redisPrefix?: string
}

async function setup(redis: boolean): Promise<Setup> {
  if (!up) {
    up = await startFakeUpstream()
    let n = 0
    up.script(() => ({ json: fixture('openai/chat/nonstream-text.json').replaceAll('chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU', `chatcmpl-spool${++n}`) }))
  }
  const dataDir = tempDir('spool-')
  dirs.push(dataDir)
  const url = new URL((await databaseEnv(dataDir)).SWITCHYARD_DATABASE_URL!)
  const proxy = startTcpProxy(url.hostname, Number(url.port || 5432))
  const viaProxy = new URL(url)
  viaProxy.host = `127.0.0.1:${proxy.port}`
  const env: Record<string, string> = { ...upstreamEnv(up), SWITCHYARD_DATABASE_URL: viaProxy.toString(), SWITCHYARD_ADMIN_TOKEN: ADMIN }
  let redisPrefix: string | undefined
  if (redis) {
    redisPrefix = `spool:${crypto.randomUUID().slice(0, 8)}:`
    Object.assign(env, { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: redisPrefix })
  }
  return { dataDir, proxy, env, redisPrefix }
}

async function newKey(gw: Spawned, credits: number | null): Promise<{ id: string; key: string }> {
  const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'spool', credits }) })
  expect(r.status).toBe(201)
  return (await r.json()) as { id: string; key: string }
}

async function ask(gw: Spawned, key: string): Promise<number> {
  const r = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  })
  await r.text()
  return r.status
}

/** The key's records and stored spend, read from the database directly. */
async function stored(dataDir: string, keyId: string) {
  const db = await openDatabaseOf(dataDir)
  try {
    const recs = await db.sql.all<{ id: string; cost: number }>(`SELECT ${g.id} AS id, ${g.cost} AS cost FROM ${g.$table} WHERE ${g.apiKeyId} = ?`, [keyId])
    const key = await db.sql.get<{ spent: number }>(`SELECT ${k.spent} AS spent FROM ${k.$table} WHERE ${k.id} = ?`, [keyId])
    return { records: recs.length, ids: new Set(recs.map((r) => r.id)).size, cost: recs.reduce((s, r) => s + Number(r.cost), 0), spent: Number(key!.spent) }
  } finally {
    await db.close()
  }
}

async function usageOf(gw: Spawned, key: string) {
  const r = await fetch(`${gw.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  expect(r.status).toBe(200)
  return ((await r.json()) as { totals: { total_requests: number; total_cost: number } }).totals
}

/** Polls until the key has `n` records (a restart writes a spool soon after it starts). */
async function recordsReach(dataDir: string, keyId: string, n: number, ms = 10_000) {
  let s = await stored(dataDir, keyId)
  for (const until = Date.now() + ms; s.records < n && Date.now() < until; s = await stored(dataDir, keyId)) await Bun.sleep(100)
  return s
}

const SERVED_WHILE_CUT = 10

/** The spool files in the data dir (records kept on disk while the database was away). */
function spools(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'spool')).filter((f) => f.endsWith('.jsonl'))
  } catch {
    return []
  }
}

/** One request with the database there, then SERVED_WHILE_CUT with it cut: all answered 200. */
async function serveThroughCut(gw: Spawned, s: Setup, key: string) {
  expect(await ask(gw, key)).toBe(200)
  await Bun.sleep(300)
  s.proxy.cut()
  const statuses: number[] = []
  for (let i = 0; i < SERVED_WHILE_CUT; i++) statuses.push(await ask(gw, key))
  expect(statuses).toEqual(Array(SERVED_WHILE_CUT).fill(200))
  // past the records' 25 ms window, and past the first write that failed
  await Bun.sleep(400)
}

async function checkAllOnce(gw: Spawned, s: Setup, made: { id: string; key: string }) {
  const after = await recordsReach(s.dataDir, made.id, SERVED_WHILE_CUT + 1)
  // every served request has exactly one record, and the key's spend is their costs
  expect(after.records).toBe(SERVED_WHILE_CUT + 1)
  expect(after.ids).toBe(SERVED_WHILE_CUT + 1)
  expect(after.cost).toBeGreaterThan(0)
  expect(after.spent).toBeCloseTo(after.cost, 12)
  const totals = await usageOf(gw, made.key)
  expect(totals.total_requests).toBe(SERVED_WHILE_CUT + 1)
  expect(totals.total_cost).toBeCloseTo(after.cost, 12)
  if (s.redisPrefix) {
    const redis = new RedisClient(TEST_REDIS_URL!)
    try {
      expect(Number(await redis.hget(`${s.redisPrefix}cr:{${made.id}}`, 'spent'))).toBeCloseTo(after.spent, 12)
    } finally {
      redis.close()
    }
  }
}

describe.skipIf(!onPostgres)('records waiting for a database that is away survive a kill -9', () => {
  const variants = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])]
  for (const { redis } of variants) {
    test(`served while the database was cut, killed, started again: each recorded and charged once${redis ? ' (Redis: its spend agrees)' : ''}`, async () => {
      const s = await setup(redis)
      let gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
      try {
        // credits held in Redis need no database; without it, an unlimited key (admission on
        // PostgreSQL would need the database)
        const made = await newKey(gw, redis ? 1 : null)
        await serveThroughCut(gw, s, made.key)
        gw.kill('SIGKILL')
        await gw.exited
        expect(spools(s.dataDir)).toHaveLength(1)
        s.proxy.restore()
        gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
        await checkAllOnce(gw, s, made)
        expect(spools(s.dataDir)).toEqual([])
      } finally {
        gw.kill('SIGKILL')
        await gw.exited
        s.proxy.stop()
      }
    }, 60_000)
  }

  test('killed after the spooled records reached the database, before the spool went: nothing counted twice', async () => {
    const s = await setup(false)
    const hook = { ...s.env, SWITCHYARD_TEST_KILL_AFTER_SPOOL_COMMIT: '1' }
    let gw = await spawnGateway({ env: hook, dataDir: s.dataDir })
    try {
      const made = await newKey(gw, null)
      await serveThroughCut(gw, s, made.key)
      // the database back: the backlog is written, then the hook kills the process at once
      s.proxy.restore()
      expect(await Promise.race([gw.exited, Bun.sleep(10_000).then(() => 'still running')])).not.toBe('still running')
      const between = await stored(s.dataDir, made.id)
      expect(between.records).toBe(SERVED_WHILE_CUT + 1)
      // and still in the spool: the next start writes them again
      expect(spools(s.dataDir)).toHaveLength(1)
      gw = await spawnGateway({ env: s.env, dataDir: s.dataDir })
      // the start's replay of the spool is done before it listens; its log line, written with the
      // lines of the next 50 ms, may come after the banner
      expect(await gw.waitForOutput('spool of a gateway no longer running written')).toContain('spool of a gateway no longer running written')
      await checkAllOnce(gw, s, made)
      expect(spools(s.dataDir)).toEqual([])
    } finally {
      gw.kill('SIGKILL')
      await gw.exited
      s.proxy.stop()
    }
  }, 60_000)
})
