// A write of records whose COMMIT took effect but whose answer never came (the connection to
// PostgreSQL dropped in between) fails as "database away" and is tried again; the retry finds the
// records stored already. They were stored by that first attempt, so their charge must end as
// stored: not taken back from the key's figures or Redis's running spend as if given up, which
// let a key spend past its credit by their costs. A real gateway on PostgreSQL; the lost answer
// is a test hook (SWITCHYARD_TEST_LOSE_RECORDS_ANSWER) that fails the first write after it
// committed, the way a cut connection does. The same on the recorder's transaction path (a write
// of over 1,000 records, its first try that way): SWITCHYARD_TEST_LOSE_RECORDS_TX_ANSWER.
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { rmSync } from 'node:fs'
import { names } from '../../src/db/columns.ts'
import { apiKeys, generations } from '../../src/db/schema.ts'
import { fixture, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { TEST_REDIS_URL } from '../helpers/redis.ts'
import { spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const ADMIN = 'adm-lost-answer'
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
    const recs = await db.sql.all<{ cost: number }>(`SELECT ${g.cost} AS cost FROM ${g.$table} WHERE ${g.apiKeyId} = ?`, [keyId])
    const key = await db.sql.get<{ spent: number }>(`SELECT ${k.spent} AS spent FROM ${k.$table} WHERE ${k.id} = ?`, [keyId])
    return { records: recs.length, cost: recs.reduce((s, r) => s + Number(r.cost), 0), spent: Number(key!.spent) }
  } finally {
    await db.close()
  }
}

describe.skipIf(!onPostgres)('a write of records committed, its answer lost', () => {
  const variants = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])]
  for (const { redis } of variants) {
    test(`the retry finds them stored: charged once, nothing taken back, the credit holds${redis ? ' (Redis: its running spend agrees)' : ''}`, async () => {
      if (!up) {
        up = await startFakeUpstream()
        up.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
      }
      const dataDir = tempDir('lost-answer-')
      dirs.push(dataDir)
      const prefix = `lost:${crypto.randomUUID().slice(0, 8)}:`
      const env: Record<string, string> = { ...upstreamEnv(up), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_TEST_LOSE_RECORDS_ANSWER: '1' }
      if (redis) Object.assign(env, { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: prefix })
      const gw = await spawnGateway({ env, dataDir })
      try {
        // a credit any one request spends past: the first is admitted, none after it
        const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lost', credits: 1e-9 }) })
        expect(r.status).toBe(201)
        const made = (await r.json()) as { id: string; key: string }
        expect(await ask(gw, made.key)).toBe(200)
        // the first write fails after its commit, the retry (100 ms later) finds the record stored
        await gw.waitForOutput('writing generation records failed', 5_000)
        expect(gw.output()).toContain('SWITCHYARD_TEST_LOSE_RECORDS_ANSWER')
        await Bun.sleep(1_000)
        const after = await stored(dataDir, made.id)
        expect(after.records).toBe(1)
        expect(after.cost).toBeGreaterThan(1e-9)
        expect(after.spent).toBeCloseTo(after.cost, 12)
        // what the gateway shows of the key: its stored spend, nothing counted apart
        const shown = await fetch(`${gw.url}/admin/v1/keys/${made.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
        expect(((await shown.json()) as { spent: number }).spent).toBeCloseTo(after.spent, 12)
        if (redis) {
          const client = new RedisClient(TEST_REDIS_URL!)
          try {
            expect(Number(await client.hget(`${prefix}cr:{${made.id}}`, 'spent'))).toBeCloseTo(after.spent, 12)
          } finally {
            client.close()
          }
        }
        // the credit is spent: the next request is refused, not admitted on figures that lost the cost
        expect(await ask(gw, made.key)).toBe(402)
        // and the record was not reported as given up
        expect(gw.output()).not.toContain('were not stored (id conflict)')
      } finally {
        gw.kill('SIGKILL')
        await gw.exited
      }
    }, 60_000)
  }
})

/** `n` requests of `key`, `wave` at a time; each must be served. */
async function askMany(gw: Spawned, key: string, n: number, wave = 50) {
  for (let i = 0; i < n; i += wave) {
    const statuses = await Promise.all(Array.from({ length: Math.min(wave, n - i) }, () => ask(gw, key)))
    expect(statuses.every((s) => s === 200)).toBe(true)
  }
}

describe.skipIf(!onPostgres)("a transaction of records committed, its answer lost (the recorder's long way)", () => {
  const variants = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])]
  for (const { redis } of variants) {
    test(`over 1,000 records in one write: the retry finds them stored, each charged once, nothing taken back${redis ? ' (Redis: its running spend agrees)' : ''}`, async () => {
      if (!up) {
        up = await startFakeUpstream()
        up.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
      }
      const dataDir = tempDir('lost-tx-answer-')
      dirs.push(dataDir)
      const prefix = `losttx:${crypto.randomUUID().slice(0, 8)}:`
      const limits = { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' }
      const env: Record<string, string> = { ...limits, ...upstreamEnv(up), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_TEST_LOSE_RECORDS_TX_ANSWER: '1' }
      if (redis) Object.assign(env, { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: prefix })
      const gw = await spawnGateway({ env, dataDir })
      const db = await openDatabaseOf(dataDir)
      try {
        // a key with a credit far from spent: its records are the subject, not its admission
        const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lost-tx', credits: 1_000 }) })
        expect(r.status).toBe(201)
        const made = (await r.json()) as { id: string; key: string }
        // the records table held: the first write waits with one record, and the next takes every
        // one queued behind it, over 1,000, so it goes the transaction's way
        let release!: () => void
        const held = new Promise<void>((res) => (release = res))
        let locked!: () => void
        const isLocked = new Promise<void>((res) => (locked = res))
        const lock = db.sql.tx(async (q) => {
          await q.run(`LOCK TABLE ${g.$table} IN EXCLUSIVE MODE`)
          locked()
          await held
        })
        await isLocked
        expect(await ask(gw, made.key)).toBe(200)
        await Bun.sleep(200)
        await askMany(gw, made.key, 1_100)
        release()
        await lock
        // that transaction fails after its commit; the retry (100 ms later) finds its records stored
        await gw.waitForOutput('SWITCHYARD_TEST_LOSE_RECORDS_TX_ANSWER', 20_000)
        let after = await stored(dataDir, made.id)
        for (const deadline = Date.now() + 20_000; after.records < 1_101 && Date.now() < deadline; await Bun.sleep(200)) after = await stored(dataDir, made.id)
        await Bun.sleep(1_500)
        after = await stored(dataDir, made.id)
        expect(after.records).toBe(1_101)
        expect(after.spent).toBeCloseTo(after.cost, 9)
        // the usage report counts each once
        const usage = (await (await fetch(`${gw.url}/api/v1/usage`, { headers: { authorization: `Bearer ${made.key}` } })).json()) as { totals: { total_requests: number; total_cost: number } }
        expect(usage.totals.total_requests).toBe(1_101)
        expect(usage.totals.total_cost).toBeCloseTo(after.cost, 6)
        const shown = await fetch(`${gw.url}/admin/v1/keys/${made.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
        expect(((await shown.json()) as { spent: number }).spent).toBeCloseTo(after.spent, 9)
        if (redis) {
          const client = new RedisClient(TEST_REDIS_URL!)
          try {
            expect(Number(await client.hget(`${prefix}cr:{${made.id}}`, 'spent'))).toBeCloseTo(after.spent, 9)
          } finally {
            client.close()
          }
        }
        expect(gw.output()).toContain('found stored by a write whose answer was lost')
        expect(gw.output()).not.toContain('were not stored (id conflict)')
        expect(gw.output()).not.toContain('given up')
      } finally {
        await db.close()
        gw.kill('SIGKILL')
        await gw.exited
      }
    }, 120_000)
  }
})
