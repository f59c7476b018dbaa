// A batch results writer's transaction (item results, their generation records, the keys' spend
// and the batch's counters) whose COMMIT took effect but whose answer never came (the connection
// to PostgreSQL dropped in between) fails as "database away" and is tried again; the retry finds
// the results stored already. They were stored by that first attempt: each is counted once, as
// stored, and its cost reaches the main thread's figures (the key's cached spend, Redis's running
// spend), so the key's credit holds and the item ends as it did, not as one another stored. A real
// gateway on PostgreSQL; the lost answer is a test hook (SWITCHYARD_TEST_LOSE_RESULTS_ANSWER)
// that fails the writer's first transaction after it committed, the way a cut connection does.
// The same for a result that ran nowhere (an item its key's credit refused), which the main thread stores
// itself (landing.ts): SWITCHYARD_TEST_LOSE_LANDING_ANSWER. And for a claim of items to run
// (leases.ts: SWITCHYARD_TEST_LOSE_CLAIM_ANSWER): the items it claimed are this instance's, which
// it does not know, and renews; they run once all the same.
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { rmSync } from 'node:fs'
import { names } from '../../src/db/columns.ts'
import { apiKeys, batchItems, generations } from '../../src/db/schema.ts'
import { fixture, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { TEST_REDIS_URL } from '../helpers/redis.ts'
import { spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { chat, NO_LIMITS } from './helpers.ts'

const ADMIN = 'adm-lost-results-answer'
const g = names(generations)
const k = names(apiKeys)
const it = names(batchItems)

let up: FakeUpstream
const dirs: string[] = []
afterAll(async () => {
  await up?.stop()
  for (const d of dirs) {
    await dropDatabaseFor(d)
    rmSync(d, { recursive: true, force: true })
  }
})

const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }

/**
 * Waits, up to 10 s, for `done`: the retry of a write whose answer was lost comes a moment after
 * the batch has ended (its end is read from the database, which the first attempt wrote).
 */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && !(await done()); ) await Bun.sleep(50)
}

const itemsEnded = async (gw: Spawned, status: string) => {
  const metrics = await (await fetch(`${gw.url}/metrics`, { headers: admin })).text()
  return Number(new RegExp(`^switchyard_batch_items_total\\{status="${status}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0)
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

/** A gateway on a data dir of its own in front of `upstream`, the test hook `hook` set (its lost answer). */
async function hooked(upstream: FakeUpstream, dirPrefix: string, hook: string, extra: Record<string, string> = {}) {
  const dataDir = tempDir(dirPrefix)
  dirs.push(dataDir)
  const env = { ...NO_LIMITS, ...upstreamEnv(upstream), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_LOG_LEVEL: 'info', [hook]: '1', ...extra }
  return { dataDir, gw: await spawnGateway({ env, dataDir }) }
}

/** A key made with `credits` and a batch of its made with `body`: the key, its headers and the batch id. */
async function keyAndBatch(gw: Spawned, name: string, credits: number, body: Record<string, unknown>) {
  const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name, credits }) })
  expect(r.status).toBe(201)
  const made = (await r.json()) as { id: string; key: string }
  const headers = { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' }
  const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify(body) })
  expect(created.status).toBe(200)
  return { made, headers, id: ((await created.json()) as { id: string }).id }
}

/** The batch as it stands once it has ended, or after 20 s. */
async function ended(gw: Spawned, headers: Record<string, string>, id: string): Promise<any> {
  let batch: any
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await Bun.sleep(50)) {
    batch = await (await fetch(`${gw.url}/api/v1/batches/${id}`, { headers })).json()
    if (['completed', 'failed', 'cancelled', 'expired'].includes(batch.status)) break
  }
  return batch
}

/** The key's records, the batch's results and the key's stored spend, read from the database directly. */
async function stored(dataDir: string, keyId: string, batchId: string) {
  const db = await openDatabaseOf(dataDir)
  try {
    const recs = await db.sql.all<{ cost: number }>(`SELECT ${g.cost} AS cost FROM ${g.$table} WHERE ${g.apiKeyId} = ?`, [keyId])
    const results = await db.sql.all<{ status: string }>(`SELECT ${it.status} AS status FROM ${it.$table} WHERE ${it.batchId} = ? AND ${it.status} IS NOT NULL`, [batchId])
    const key = await db.sql.get<{ spent: number }>(`SELECT ${k.spent} AS spent FROM ${k.$table} WHERE ${k.id} = ?`, [keyId])
    return { records: recs.length, cost: recs.reduce((s, r) => s + Number(r.cost), 0), results: results.map((r) => r.status), spent: Number(key!.spent) }
  } finally {
    await db.close()
  }
}

/** Redis's running spend of a key, under the gateway's prefix. */
async function redisSpent(prefix: string, keyId: string): Promise<number> {
  const client = new RedisClient(TEST_REDIS_URL!)
  try {
    return Number(await client.hget(`${prefix}cr:{${keyId}}`, 'spent'))
  } finally {
    client.close()
  }
}

describe.skipIf(!onPostgres)('a batch results write committed, its answer lost', () => {
  const variants = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])]
  for (const { redis } of variants) {
    test(`the retry finds the result stored: counted once, its cost in every figure, the credit holds${redis ? ' (Redis: its running spend agrees)' : ''}`, async () => {
      if (!up) {
        up = await startFakeUpstream()
        up.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
      }
      const prefix = `lostres:${crypto.randomUUID().slice(0, 8)}:`
      const { dataDir, gw } = await hooked(up, 'lost-results-answer-', 'SWITCHYARD_TEST_LOSE_RESULTS_ANSWER', redis ? { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: prefix } : {})
      try {
        // a credit any one request spends past: the batch's one item is admitted, nothing after it
        const { made, headers, id } = await keyAndBatch(gw, 'lost', 1e-9, { requests: [{ custom_id: 'only', ...chat('gpt-4o-mini', 'hi', { max_tokens: 50 }) }] })
        const batch = await ended(gw, headers, id)
        // the writer's first transaction failed after its commit, and was tried again
        await until(() => gw.output().includes('results found stored by a write whose answer was lost'))
        // and the main thread has heard of it (the worker's log line may come first)
        await until(async () => (await itemsEnded(gw, 'succeeded')) > 0)
        expect(gw.output()).toContain('SWITCHYARD_TEST_LOSE_RESULTS_ANSWER')
        expect(gw.output()).toContain('results found stored by a write whose answer was lost')
        // nothing accepted lost, nothing stored twice: one result, one record, its cost once
        const after = await stored(dataDir, made.id, id)
        expect(after.results).toEqual(['succeeded'])
        expect(after.records).toBe(1)
        expect(after.cost).toBeGreaterThan(1e-9)
        expect(after.spent).toBeCloseTo(after.cost, 12)
        expect(batch.request_counts).toEqual({ total: 1, completed: 1, failed: 0 })
        // the usage report counts it once, at its cost
        const usage = (await (await fetch(`${gw.url}/api/v1/usage`, { headers })).json()) as { totals: { total_requests: number; total_cost: number } }
        expect(usage.totals.total_requests).toBe(1)
        expect(usage.totals.total_cost).toBeCloseTo(after.cost, 6)
        // what the gateway shows of the key: its stored spend
        const shown = await fetch(`${gw.url}/admin/v1/keys/${made.id}`, { headers: admin })
        expect(((await shown.json()) as { spent: number }).spent).toBeCloseTo(after.spent, 12)
        if (redis) expect(await redisSpent(prefix, made.id)).toBeCloseTo(after.spent, 12)
        // the item ended here as it did (succeeded), once
        expect(await itemsEnded(gw, 'succeeded')).toBe(1)
        // the credit is spent: the next request is refused, not admitted on figures that lost the cost
        expect(await ask(gw, made.key)).toBe(402)
      } finally {
        gw.kill('SIGKILL')
        await gw.exited
      }
    }, 60_000)
  }
})

describe.skipIf(!onPostgres)('a result that ran nowhere, its write committed and its answer lost', () => {
  test('the retry finds it stored: the item its credit refused ended once, as failed', async () => {
    if (!up) {
      up = await startFakeUpstream()
      up.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
    }
    const { dataDir, gw } = await hooked(up, 'lost-landing-answer-', 'SWITCHYARD_TEST_LOSE_LANDING_ANSWER')
    try {
      // a credit the first item spends past: the second is refused (402), and fails without running
      const requests = ['first', 'second'].map((custom_id) => ({ custom_id, ...chat('gpt-4o-mini', 'hi', { max_tokens: 50 }) }))
      const { made, headers, id } = await keyAndBatch(gw, 'lost-landing', 1e-9, { requests })
      const batch = await ended(gw, headers, id)
      expect(gw.output()).toContain('SWITCHYARD_TEST_LOSE_LANDING_ANSWER')
      expect((await stored(dataDir, made.id, id)).results.sort()).toEqual(['failed', 'succeeded'])
      expect(batch.request_counts).toEqual({ total: 2, completed: 1, failed: 1 })
      // the retry (a moment after the end) finds the failure stored as its own, and counts it once
      await until(async () => (await itemsEnded(gw, 'failed')) > 0)
      expect(await itemsEnded(gw, 'failed')).toBe(1)
    } finally {
      gw.kill('SIGKILL')
      await gw.exited
    }
  }, 60_000)
})

describe.skipIf(!onPostgres)('a claim of batch items committed, its answer lost', () => {
  test('the items it claimed are given back and run, each once: the batch ends, none failed', async () => {
    const own = await startFakeUpstream()
    own.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
    const { dataDir, gw } = await hooked(own, 'lost-claim-answer-', 'SWITCHYARD_TEST_LOSE_CLAIM_ANSWER')
    try {
      const requests = Array.from({ length: 6 }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `claim ${i}`, { max_tokens: 50 }) }))
      const { made, headers, id } = await keyAndBatch(gw, 'lost-claim', 100, { requests, settings: { concurrency: 2 } })
      const batch = await ended(gw, headers, id)
      // the first claim failed after its commit
      expect(gw.output()).toContain('SWITCHYARD_TEST_LOSE_CLAIM_ANSWER')
      expect(batch.status).toBe('completed')
      expect(batch.request_counts).toEqual({ total: 6, completed: 6, failed: 0 })
      expect((await stored(dataDir, made.id, id)).results).toEqual(Array(6).fill('succeeded'))
      // each item went upstream once
      const sent = await Promise.all(own.requests.map(async (q) => ((await q.json()) as { messages: { content: string }[] }).messages[0]!.content))
      expect(sent.sort()).toEqual(requests.map((_, i) => `claim ${i}`).sort())
    } finally {
      gw.kill('SIGKILL')
      await gw.exited
      await own.stop()
    }
  }, 60_000)
})

describe.skipIf(!onPostgres)('a batch results write committed, its answer lost, and the gateway killed before a retry found it', () => {
  const variants = [{ redis: false }, ...(TEST_REDIS_URL ? [{ redis: true }] : [])]
  for (const { redis } of variants) {
    test(`the next start finds the results stored as spooled: each cost counted once in every figure${redis ? ' (Redis: its running spend agrees)' : ''}`, async () => {
      const own = await startFakeUpstream()
      own.script(() => ({ json: fixture('openai/chat/nonstream-text.json') }))
      const prefix = `lostkill:${crypto.randomUUID().slice(0, 8)}:`
      const shared: Record<string, string> = redis ? { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: prefix } : {}
      // every write of results loses its answer: the first stores them, each retry finds them
      // stored and loses its own answer too, so nothing but the database has counted their costs
      let { dataDir, gw } = await hooked(own, 'lost-results-kill-', 'SWITCHYARD_TEST_LOSE_RESULTS_ANSWER', { ...shared, SWITCHYARD_TEST_LOSE_RESULTS_ANSWER: '1000000' })
      try {
        const requests = Array.from({ length: 3 }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `kill ${i}`, { max_tokens: 50 }) }))
        const { made, headers, id } = await keyAndBatch(gw, 'lost-kill', 100, { requests })
        await until(() => own.requests.length === 3 && (gw.output().match(/storing results failed; retrying/g)?.length ?? 0) >= 2)
        expect(own.requests.length).toBe(3)
        const before = await stored(dataDir, made.id, id)
        expect(before.results).toEqual(['succeeded', 'succeeded', 'succeeded'])
        gw.kill('SIGKILL')
        await gw.exited
        // started again without the hook: the spooled results are found stored as they were kept
        gw = await spawnGateway({ env: { ...NO_LIMITS, ...upstreamEnv(own), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_LOG_LEVEL: 'info', ...shared }, dataDir })
        await gw.waitForOutput('spooled results of a gateway no longer running written', 10_000)
        const batch = await ended(gw, headers, id)
        expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 })
        const after = await stored(dataDir, made.id, id)
        expect(after.records).toBe(3)
        expect(after.cost).toBeGreaterThan(0)
        expect(after.spent).toBeCloseTo(after.cost, 12)
        // what the gateway shows of the key, and Redis's running spend: the same costs, once
        const shown = await fetch(`${gw.url}/admin/v1/keys/${made.id}`, { headers: admin })
        expect(((await shown.json()) as { spent: number }).spent).toBeCloseTo(after.spent, 12)
        if (redis) expect(await redisSpent(prefix, made.id)).toBeCloseTo(after.spent, 12)
        // each item went upstream once
        expect(own.requests.length).toBe(3)
      } finally {
        gw.kill('SIGKILL')
        await gw.exited
        await own.stop()
      }
    }, 60_000)
  }
})
