// With Redis, a request's cost is sent to Redis's running spend apart from its record's write,
// and a settlement waits up to 25 ms for the key's next admission to go with. A record written
// in that time had its cost in the database and not yet in Redis: a kill -9 then left Redis
// short of the database for as long as it kept the key, and the key could be served past its
// credit. Now a write of records sends their keys' waiting settlements first, and a batch
// worker's stored costs go the moment the main thread hears of them. A kill between the two
// leaves Redis counting a lost record's cost (the safe side), never missing a stored one's.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { KeyStore } from '../../src/auth/keys.ts'
import { Billing } from '../../src/billing/billing.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { Recorder } from '../../src/generations/recorder.ts'
import { createLogger } from '../../src/http/log.ts'
import { genInput } from '../generations/input.ts'
import { testServices, type TestServices } from '../generations/services.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { chat, NO_LIMITS, replayFixtures } from '../batches/helpers.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

// mock-gpt at $0.001 a token: 5 + 10 tokens cost $0.015
const YAML = `pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n`
const COST = 0.015
const log = createLogger('error', () => {})

let t: TestServices
beforeAll(async () => {
  if (!skip) t = await testServices({}, YAML)
})
afterAll(async () => {
  await t?.close()
})

/**
 * A gateway's billing and recorder on a Redis ledger whose script calls are counted, and each
 * call of either store written down in order (`events`: the recorder's statements as `db`).
 */
async function instance() {
  const redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix: freshPrefix() }, log)
  const calls = { n: 0 }
  const events: string[] = []
  const eval_ = redis.eval.bind(redis)
  redis.eval = (...args: Parameters<SharedRedis['eval']>) => (calls.n++, events.push('redis'), eval_(...args))
  const sql = t.s.storage.sql
  const watched = new Proxy(sql, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      if (typeof v !== 'function') return v
      return ['tx', 'run', 'all', 'get'].includes(prop as string) ? (...a: unknown[]) => (events.push('db'), v.apply(target, a)) : v.bind(target)
    },
  })
  const keys = new KeyStore(t.s.storage)
  const ledger = new RedisLedger(redis, log)
  const billing = new Billing({ keys, catalog: t.s.catalog, sql }, ledger)
  await keys.load()
  const recorder = new Recorder({ config: t.s.config, storage: { ...t.s.storage, sql: watched }, catalog: t.s.catalog, billing, log }, { flushDelayMs: 60_000 })
  const stop = async () => {
    await recorder.stop()
    await billing.stop()
    redis.close()
  }
  return { keys, billing, recorder, ledger, calls, events, stop }
}

type Instance = Awaited<ReturnType<typeof instance>>

/** A funded key of this instance's, and an admission of it (its first call to Redis seeds it there). */
async function admitted(i: Instance, name: string) {
  const { record: key } = await t.s.keys.create({ name, credits: 1 })
  await i.keys.reloadOne(key.id)
  const admission = await i.billing.admit({ apiKey: key, model: t.s.catalog.resolve('mock-gpt')!, promptTokens: 10, maxOutputTokens: 10 })
  return { key, admission }
}

/** Every settlement this instance made has had its answer from Redis. */
async function settled(i: Instance) {
  for (let n = 0; n < 100 && i.ledger.open > 0; n++) await Bun.sleep(2)
}

describe.skipIf(!!skip)('Redis has a cost no later than the database', () => {
  test('a write of records sends the waiting settlements of its keys before it stores them', async () => {
    const i = await instance()
    try {
      const { key, admission } = await admitted(i, 'redis first')
      expect(i.calls.n).toBe(1)
      i.recorder.record(genInput(t.s.catalog, key, { model: 'mock-gpt', usage: { inputTokens: 5, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, reservationId: admission?.reservationId }))
      // charged: its settlement waits for an admission to go with
      expect(i.calls.n).toBe(1)
      i.events.length = 0
      await i.recorder.flush()
      // the write sent it before the database was asked to store the record
      expect(i.events[0]).toBe('redis')
      expect(i.events.slice(1)).toContain('db')
      await settled(i)
      const f = await i.ledger.figures(key.id)
      expect(f.spent).toBeCloseTo(COST, 9)
      expect(f.reserved).toBe(0)
    } finally {
      await i.stop()
    }
  })

  test('a batch worker’s cost is counted in Redis before its write begins, and not again once it is stored', async () => {
    const i = await instance()
    try {
      // seeded in Redis by an admission, then given back
      const { key, admission } = await admitted(i, 'batch stored')
      i.billing.release(admission)
      await settled(i)
      const before = i.calls.n
      // the worker asks before its transaction: the call goes at once, and is answered when this resolves
      const counting = i.billing.workerStoring([[key.id, COST]])
      expect(i.calls.n).toBe(before + 1)
      await counting
      expect((await i.ledger.figures(key.id)).spent).toBeCloseTo(COST, 9)
      // then it stores the cost and tells the main thread: the cache reads the row, Redis is left alone
      await t.s.storage.sql.run('UPDATE api_keys SET spent = spent + ? WHERE id = ?', [COST, key.id])
      const calls = i.calls.n
      await i.billing.fromWorker([[key.id, COST]])
      await settled(i)
      expect(i.calls.n).toBe(calls)
      expect((await i.ledger.figures(key.id)).spent).toBeCloseTo(COST, 9)
      expect(i.keys.current(key.id)?.spent).toBeCloseTo(COST, 9)
    } finally {
      await i.stop()
    }
  })
})

describe.skipIf(!!skip)('a batch write and a kill -9', () => {
  test('costs a batch write committed are in Redis already when the gateway is killed right after the commit', async () => {
    const up = await startFakeUpstream()
    replayFixtures(up)
    const dataDir = tempDir('switchyard-redis-batch-kill-')
    const prefix = freshPrefix()
    const crashFile = join(dataDir, 'crash-batch-worker')
    // the results writer's first write is told to the main thread only 2.5 s after its commit
    // (the test hook, src/batches/test-crash.ts): the kill comes in between
    await Bun.write(crashFile, 'after-store')
    const ADMIN = 'admin-redis-batch-kill'
    const env = {
      ...NO_LIMITS,
      REDIS_URL: TEST_REDIS_URL!,
      SWITCHYARD_REDIS_PREFIX: prefix,
      SWITCHYARD_ADMIN_TOKEN: ADMIN,
      SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-redis-batch-kill-0123456789',
      OPENAI_API_KEY: 'sk-up',
      OPENAI_BASE_URL: up.url,
      SWITCHYARD_BATCH_WORKERS: '1',
      SWITCHYARD_TEST_BATCH_WORKER_CRASH_FILE: crashFile,
    }
    let gw: Spawned | undefined
    try {
      gw = await spawnGateway({ env, dataDir })
      const made = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'batch kill', credits: 10 }) })
      expect(made.status).toBe(201)
      const { key, id: keyId } = (await made.json()) as { key: string; id: string }
      const requests = Array.from({ length: 6 }, (_, i) => ({ custom_id: `item-${i}`, ...chat('gpt-4o-mini', `kill ${i}`) }))
      const created = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) })
      expect(created.status).toBe(200)
      // the first write committed (the key's row has its cost), then the kill, before it is told
      const storedSpent = async () => {
        const db = await openDatabaseOf(dataDir, { readonly: true })
        try {
          return (await db.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [keyId]))!.spent
        } finally {
          await db.close()
        }
      }
      const deadline = Date.now() + 20_000
      let stored = 0
      while ((stored = await storedSpent()) === 0 && Date.now() < deadline) await Bun.sleep(10)
      gw.kill('SIGKILL')
      await gw.exited
      expect(stored).toBeGreaterThan(0)
      // what the database holds now (a write could have committed after the last look)
      const final = await storedSpent()
      const redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix }, log)
      try {
        const inRedis = Number(await redis.send('HGET', [`${prefix}cr:{${keyId}}`, 'spent']))
        expect(inRedis).toBeGreaterThan(0)
        expect(inRedis).toBeGreaterThanOrEqual(final - 1e-9)
      } finally {
        redis.close()
      }
    } finally {
      gw?.kill('SIGKILL')
      await up.stop()
      cleanup(dataDir)
    }
  }, 60_000)
})
