// What billing promises, stated directly, on each ledger: memory (one instance), PostgreSQL and
// Redis (two instances each, sharing the store as two gateways would). Each "instance" is its
// own key cache, billing and recorder over the same database; requests are admitted, charged
// through the recorder as a gateway does, and written by it.
//   - never more than one request past a credit;
//   - each record billed exactly once, also when its write fails and is tried again;
//   - a reservation never ends before its cost is stored: a cost charged while a write is
//     under way stays visible to every instance.
// The PostgreSQL and Redis cases run in the shared-store run (.ci/run sets the URLs).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { Billing } from '../../src/billing/billing.ts'
import { MemoryLedger, type Ledger } from '../../src/billing/ledger.ts'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { Recorder } from '../../src/generations/recorder.ts'
import type { ApiKey } from '../../src/http/context.ts'
import { createLogger } from '../../src/http/log.ts'
import { genInput } from '../generations/input.ts'
import { testServices, type TestServices } from '../generations/services.ts'
import { failGenerationWrites, onPostgres } from '../helpers/database.ts'
import { freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'

// mock-gpt at $1,000 per million tokens ($0.001 a token): a request of 10 prompt tokens capped
// at 10 output tokens holds $0.02; one that used 5 + 10 tokens costs $0.015
const YAML = `pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n`
const HOLD = 0.02
const COST = 0.015
// the failed writes below are logged as errors: expected here, kept to be shown if a test fails
const logged: string[] = []
const log = createLogger('error', (l) => void logged.push(l))

let t: TestServices
beforeAll(async () => {
  t = await testServices({}, YAML)
})
afterAll(async () => {
  await t.close()
})

interface Instance {
  /** The Redis connection of a Redis case (one per case, its own key prefix). */
  redis?: SharedRedis
  keys: KeyStore
  billing: Billing
  recorder: Recorder
}

type Kind = 'memory' | 'postgres' | 'redis'
const available = (kind: Kind) => kind === 'memory' || (kind === 'postgres' ? onPostgres : TEST_REDIS_URL !== undefined)

/** The instances of one case: each with its own memory, on the ledger `kind` (one prefix per case in Redis). */
async function instances(kind: Kind): Promise<Instance[]> {
  // the case's instances share one Redis prefix, as instances of one cluster do
  const redis = kind === 'redis' ? new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 2_000, prefix: freshPrefix() }, log) : undefined
  const ledger = (): Ledger => {
    if (kind === 'memory') return new MemoryLedger()
    if (kind === 'postgres') return new PgLedger(t.s.storage.sql)
    return new RedisLedger(redis!, log)
  }
  const out: Instance[] = []
  for (let i = 0; i < (kind === 'memory' ? 1 : 2); i++) {
    const keys = new KeyStore(t.s.storage)
    const billing = new Billing({ keys, catalog: t.s.catalog, sql: t.s.storage.sql }, ledger())
    await keys.load()
    out.push({ redis, keys, billing, recorder: new Recorder({ config: t.s.config, storage: t.s.storage, catalog: t.s.catalog, billing, log }, { flushDelayMs: 5 }) })
  }
  return out
}

async function funded(credits: number, all: Instance[]): Promise<ApiKey> {
  const { record } = await t.s.keys.create({ name: 'billing invariants', credits })
  for (const i of all) await i.keys.reloadOne(record.id)
  return record
}

const model = () => t.s.catalog.resolve('mock-gpt')!

/** One request through an instance: admitted (or refused: false), answered after `ms`, recorded at COST. */
async function serve(i: Instance, key: ApiKey, ms = 0): Promise<boolean> {
  let admission
  try {
    admission = await i.billing.admit({ apiKey: key, model: model(), promptTokens: 10, maxOutputTokens: 10 })
  } catch (e) {
    if ((e as { status?: number }).status === 402) return false
    throw e
  }
  if (ms > 0) await Bun.sleep(ms)
  i.recorder.record(genInput(t.s.catalog, key, { model: 'mock-gpt', usage: { inputTokens: 5, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, reservationId: admission?.reservationId }))
  return true
}

async function settle(all: Instance[]) {
  for (const i of all) await i.recorder.flush()
  for (let n = 0; n < 100 && all.some((i) => i.billing.open > 0); n++) await Bun.sleep(10)
}

const stored = async (id: string) => (await t.s.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [id]))!.spent
const recorded = async (id: string) => (await t.s.storage.sql.get<{ c: number; n: number }>('SELECT coalesce(sum(cost), 0) AS c, count(*) AS n FROM generations WHERE api_key_id = ?', [id]))!

async function close(all: Instance[]) {
  for (const i of all) {
    await i.recorder.stop()
    await i.billing.stop()
  }
  all[0]?.redis?.close()
}

for (const kind of ['memory', 'postgres', 'redis'] as const) {
  describe.skipIf(!available(kind))(`${kind} ledger`, () => {
    test('a burst on a nearly spent key, then requests one by one: never more than one request past the credit', async () => {
      const all = await instances(kind)
      try {
        // $0.1 covers six requests of $0.015 (the seventh crosses zero). The burst holds $0.02
        // each: five at once, or one more where admissions wait on each other (a shared store)
        // long enough for some to end at their real cost first
        const key = await funded(0.1, all)
        const burst = await Promise.all(Array.from({ length: 40 }, (_, n) => serve(all[n % all.length]!, key, 5 + (n % 7) * 3)))
        expect(burst.filter(Boolean).length).toBeGreaterThanOrEqual(5)
        expect(burst.filter(Boolean).length).toBeLessThanOrEqual(7)
        const one: boolean[] = []
        for (let n = 0; n < 10; n++) one.push(await serve(all[n % all.length]!, key))
        const served = burst.filter(Boolean).length + one.filter(Boolean).length
        expect(served).toBeGreaterThanOrEqual(6)
        expect(served).toBeLessThanOrEqual(7)
        await settle(all)
        // and what was served is exactly what was stored
        expect(await stored(key.id)).toBeCloseTo(served * COST, 12)
      } finally {
        await close(all)
      }
    })

    test('each record is billed once: a write that fails and is tried again stores its costs once', async () => {
      const all = await instances(kind)
      try {
        const key = await funded(10, all)
        // a failure the recorder retries without limit (a full database): an ordinary error is
        // given up after three tries, which a loaded machine reaches while the four are served
        const undo = await failGenerationWrites(t.s.storage.sql, 'full')
        try {
          for (let n = 0; n < 4; n++) expect(await serve(all[n % all.length]!, key)).toBe(true)
          for (const i of all) void i.recorder.flush()
          await Bun.sleep(30)
        } finally {
          await undo()
        }
        // the recorder's retry (100 ms a failure so far after the last one) stores them
        for (let n = 0; n < 250 && (await recorded(key.id)).n < 4; n++) await Bun.sleep(20)
        await settle(all)
        const r = await recorded(key.id)
        // what the recorders said, when a record is missing (only the failures meant here otherwise)
        if (r.n !== 4) console.error(logged.filter((l) => !l.includes('(simulated)')).join('\n'))
        expect(r.n).toBe(4)
        expect(r.c).toBeCloseTo(4 * COST, 12)
        expect(await stored(key.id)).toBeCloseTo(4 * COST, 12)
        for (const i of all) {
          expect(i.billing.unwritten(key.id)).toBe(0)
          await i.keys.reloadOne(key.id)
          expect(i.keys.current(key.id)!.spent).toBeCloseTo(4 * COST, 12)
        }
        const shared = await all[0]!.billing.figures(key.id)
        if (shared) expect(shared.spent).toBeCloseTo(4 * COST, 12)
      } finally {
        await close(all)
      }
    })

    test('a cost charged while a write is under way is not ended by that write: every instance still counts it', async () => {
      const all = await instances(kind)
      const [a, b = a] = all as [Instance, Instance?]
      try {
        // $0.025: the first request leaves $0.01, so the second is admitted and crosses zero;
        // after both, nothing may be admitted anywhere
        const key = await funded(0.025, all)
        const model_ = model()
        const first = (await a.billing.admit({ apiKey: key, model: model_, promptTokens: 10, maxOutputTokens: 10 }))!
        a.billing.charge(key.id, first.reservationId, COST)
        // the write of the first cost is taken now, as the recorder takes its queue ...
        const write = a.billing.startWrite()
        // ... and the second request ends before that write reaches the database
        const second = (await a.billing.admit({ apiKey: key, model: model_, promptTokens: 10, maxOutputTokens: 10 }))!
        a.billing.charge(key.id, second.reservationId, COST)
        const costs = new Map([[key.id, COST]])
        let ok = false
        try {
          await t.s.storage.sql.tx(async (q) => {
            await write.begin(q)
            await write.store(q, costs)
          })
          ok = true
        } finally {
          write.end(ok, ok ? costs : undefined)
        }
        // the second cost is stored nowhere yet: held, or charged, it must still count
        await expect(Promise.resolve().then(() => b.billing.admit({ apiKey: key, model: model_, promptTokens: 10, maxOutputTokens: 10 }))).rejects.toMatchObject({ status: 402 })
        await expect(Promise.resolve().then(() => a.billing.admit({ apiKey: key, model: model_, promptTokens: 10, maxOutputTokens: 10 }))).rejects.toMatchObject({ status: 402 })
        // the sweep of ended reservations (after a second) must not change that either
        await Bun.sleep(1_300)
        await expect(Promise.resolve().then(() => b.billing.admit({ apiKey: key, model: model_, promptTokens: 10, maxOutputTokens: 10 }))).rejects.toMatchObject({ status: 402 })
        // once the second cost is stored too, the figures agree everywhere
        const last = a.billing.startWrite()
        await t.s.storage.sql.tx(async (q) => {
          await last.begin(q)
          await last.store(q, costs)
        })
        last.end(true, costs)
        expect(await stored(key.id)).toBeCloseTo(2 * COST, 12)
        expect(a.billing.unwritten(key.id)).toBe(0)
      } finally {
        await close(all)
      }
    })
  })
}

