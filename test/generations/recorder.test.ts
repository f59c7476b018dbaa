import { afterEach, describe, expect, test } from 'bun:test'
import { Recorder } from '../../src/generations/recorder.ts'
import { toRow } from '../../src/generations/row.ts'
import { GenerationStore } from '../../src/generations/store.ts'
import { failGenerationWrites, fillSqlite, onPostgres } from '../helpers/database.ts'
import { genInput } from './input.ts'
import { rollup, testServices, type TestServices } from './services.ts'

const DAY = 86_400_000
const HOUR = 3_600_000
// gpt-4o list prices: $2.50 / M input, $1.25 / M cached input, $10 / M output
const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 300 }
const GPT4O_LIST = (1000 * 2.5 + 2000 * 1.25 + 300 * 2.5 + 500 * 10) / 1e6

let t: TestServices

const count = async (t: TestServices) => (await t.s.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM generations'))!.n

async function until(ok: () => boolean | Promise<boolean>, ms = 2_000) {
  for (const end = Date.now() + ms; !(await ok()); await Bun.sleep(5)) if (Date.now() > end) throw new Error('timed out')
}
afterEach(async () => {
  await t?.close()
})

async function keyOf(t: TestServices, account = 'default') {
  return (await t.s.keys.create({ name: 'k', account })).record
}

describe('recorder: cost', () => {
  test('catalog price × (1 − discount), computed once and stored', async () => {
    t = await testServices({ SWITCHYARD_DISCOUNT: '0.25' })
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { usage: USAGE })
    t.s.recorder.record(g)
    const row = (await t.s.recorder.get(g.id))!
    expect(row.cost).toBeCloseTo(GPT4O_LIST * 0.75, 12)
    expect(row.unpriced).toBe(false)
    expect(row.promptTokens).toBe(3300)
    expect(row.completionTokens).toBe(500)
    expect(row.totalTokens).toBe(3800)
    expect(row.cacheReadInputTokens).toBe(2000)
    expect(row.cacheCreationInputTokens).toBe(300)
  })

  test('config price overrides with cache rates, discounted', async () => {
    t = await testServices(
      {},
      'pricing:\n  discount: 0.1\n  overrides:\n    claude-sonnet-4-5: { input_mtok: 2, output_mtok: 8, cache_read_mtok: 0.5, cache_write_mtok: 3 }\n',
    )
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { model: 'claude-sonnet-4-5', endpoint: 'anthropic.messages', usage: USAGE })
    t.s.recorder.record(g)
    expect((await t.s.recorder.get(g.id))!.cost).toBeCloseTo(((1000 * 2 + 2000 * 0.5 + 300 * 3 + 500 * 8) / 1e6) * 0.9, 12)
  })

  test('a model with no known price is unpriced with cost null, never $0', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { model: 'mock-unpriced-model', usage: USAGE })
    t.s.recorder.record(g)
    const row = (await t.s.recorder.get(g.id))!
    expect(row.cost).toBeNull()
    expect(row.unpriced).toBe(true)
    expect((await t.s.keys.get(key.id))!.spent).toBe(0)
    const [h] = (await rollup(t.s))
    expect(h).toMatchObject({ requests: 1, cost: 0, unpriced_requests: 1, input_tokens: 3300, output_tokens: 500, total_tokens: 3800, cache_read_tokens: 2000, cache_write_tokens: 300, reasoning_tokens: 0 })
  })
})

describe('recorder: spend and rollup', () => {
  test("the key's spent grows by each cost", async () => {
    t = await testServices()
    const key = await keyOf(t)
    const a = genInput(t.s.catalog, key, { usage: USAGE })
    const b = genInput(t.s.catalog, key, { model: 'gpt-4o-mini', usage: USAGE })
    t.s.recorder.record(a)
    t.s.recorder.record(b)
    await t.s.recorder.flush()
    const ca = (await t.s.recorder.get(a.id))!.cost!
    const cb = (await t.s.recorder.get(b.id))!.cost!
    expect(ca).toBeGreaterThan(0)
    expect(cb).toBeGreaterThan(0)
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(ca + cb, 12)
  })

  test('a reused reply id is never dropped: every record is stored and counted under its own gen- id', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { usage: USAGE })
    const first = t.s.recorder.record(g)!
    const second = t.s.recorder.record({ ...g, createdAt: g.createdAt + 1, usage: { ...USAGE, outputTokens: 9999 } })!
    await t.s.recorder.flush()
    const third = t.s.recorder.record({ ...g, createdAt: g.createdAt + 2 })!
    await t.s.recorder.flush()
    expect(new Set([first, second, third]).size).toBe(3)
    for (const id of [first, second, third]) expect(id).toMatch(/^gen-[0-9a-f]{32}$/)
    // the reply id finds the latest; each gateway id finds its own record
    expect((await t.s.recorder.get(g.id))!.id).toBe(third)
    expect((await t.s.recorder.get(second))!.completionTokens).toBe(9999)
    expect((await t.s.recorder.get(second))!.replyId).toBe(g.id)
    expect(await count(t)).toBe(3)
    expect((await rollup(t.s))[0]!.requests).toBe(3)
    const total = (await t.s.storage.sql.get<{ c: number }>('SELECT coalesce(sum(cost), 0) AS c FROM generations'))!.c
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(total, 12)
  })

  test('a flush of 238 records (statements of 100, 20, 5 and 1 rows) stores each once, with rollup and spend', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { usage: USAGE })
    const ids = Array.from({ length: 238 }, (_, i) => t.s.recorder.record({ ...g, id: `chatcmpl-many-${i}`, createdAt: g.createdAt + i })!)
    await t.s.recorder.flush()
    expect(new Set(ids).size).toBe(238)
    expect(await count(t)).toBe(238)
    expect((await t.s.storage.sql.get<{ n: number }>("SELECT count(DISTINCT reply_id) AS n FROM generations WHERE reply_id LIKE 'chatcmpl-many-%'"))!.n).toBe(238)
    expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(238)
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(238 * GPT4O_LIST, 10)
  })

  test('a record whose gateway id is already stored is counted nowhere: not in the rollup, not in spend', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { usage: USAGE, recordId: 'gen-' + 'a'.repeat(32) })
    t.s.recorder.record(g)
    await t.s.recorder.flush()
    const spent = (await t.s.keys.get(key.id))!.spent
    // the same id again, in one write with a record that does go in, and an hour and model of
    // its own: statements sent together first count all three, then take the lost one back
    const other = genInput(t.s.catalog, key, { usage: USAGE })
    t.s.recorder.record({ ...g, model: t.s.catalog.resolve('gpt-4o-mini')!, createdAt: g.createdAt - 5 * HOUR })
    t.s.recorder.record(other)
    await t.s.recorder.flush()
    expect(await count(t)).toBe(2)
    expect((await rollup(t.s)).map((r) => [r.model, r.requests])).toEqual([['gpt-4o', 2]])
    expect((await rollup(t.s))[0]!.cost).toBeCloseTo(2 * GPT4O_LIST, 12)
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(spent + GPT4O_LIST, 12)
    expect(t.logs.some((l) => l.includes('were not stored (id conflict)'))).toBe(true)
  })

  test('a row a NOT NULL refuses fails its whole write (the insert that skips conflicts must not skip it silently)', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const store = new GenerationStore(t.s.storage)
    const good = toRow(genInput(t.s.catalog, key, { usage: USAGE }), GPT4O_LIST)
    const bad = { ...toRow(genInput(t.s.catalog, key, { usage: USAGE }), GPT4O_LIST), provider: null as unknown as string }
    await expect(t.s.storage.sql.tx((q) => store.insertRows([good, bad], q))).rejects.toThrow()
    // nothing of the write stays: neither the good row nor its hour
    expect(await count(t)).toBe(0)
    expect(await rollup(t.s)).toEqual([])
    // the good row alone then goes in
    expect((await t.s.storage.sql.tx((q) => store.insertRows([good], q))).map((r) => r.id)).toEqual([good.id])
  })

  test('rollup rows per account, UTC hour and model; 10:59:59.999 and 11:00:00.000 are different hours', async () => {
    t = await testServices()
    const a = await keyOf(t, 'acct-a')
    const b = await keyOf(t, 'acct-b')
    const h10 = Date.UTC(2026, 0, 5, 10)
    const rec = (k: typeof a, at: number, model = 'gpt-4o') => t.s.recorder.record(genInput(t.s.catalog, k, { createdAt: at, model }))
    rec(a, h10)
    rec(a, h10 + HOUR - 1)
    rec(a, h10 + HOUR)
    rec(a, h10 + 5, 'gpt-4o-mini')
    rec(b, h10 + 7)
    await t.s.recorder.flush()
    const rows = (await rollup(t.s)).map((r) => [r.account, new Date(r.hour).toISOString(), r.model, r.requests])
    expect(rows).toEqual([
      ['acct-a', '2026-01-05T10:00:00.000Z', 'gpt-4o', 2],
      ['acct-a', '2026-01-05T10:00:00.000Z', 'gpt-4o-mini', 1],
      ['acct-a', '2026-01-05T11:00:00.000Z', 'gpt-4o', 1],
      ['acct-b', '2026-01-05T10:00:00.000Z', 'gpt-4o', 1],
    ])
    const [first] = (await rollup(t.s))
    expect(first!.input_tokens).toBe(200)
    expect(first!.output_tokens).toBe(40)
    expect(first!.total_tokens).toBe(240)
  })

  test('an alias is recorded under the canonical model id', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { model: 'gpt-4o-2024-08-06' })
    t.s.recorder.record(g)
    expect((await t.s.recorder.get(g.id))!.model).toBe('gpt-4o')
  })
})

describe('recorder: never delays, never throws', () => {
  test('record() only queues; the write happens a few ms later in the background', async () => {
    t = await testServices()
    const key = await keyOf(t)
    for (let i = 0; i < 3; i++) t.s.recorder.record(genInput(t.s.catalog, key))
    expect(await count(t)).toBe(0)
    // written after the flush delay (50 ms), plus a round trip on PostgreSQL
    for (let i = 0; i < 50 && (await count(t)) < 3; i++) await Bun.sleep(10)
    expect(await count(t)).toBe(3)
  })

  test('garbage counters are stored as sane integers', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, {
      usage: { inputTokens: Number.NaN, outputTokens: -5, cacheReadTokens: 2.6, cacheWriteTokens: Infinity },
      createdAt: Number.NaN,
      latencyMs: Number.NaN,
    })
    expect(() => t.s.recorder.record(g)).not.toThrow()
    const row = (await t.s.recorder.get(g.id))!
    expect([row.promptTokens, row.completionTokens, row.cacheReadInputTokens, row.cacheCreationInputTokens]).toEqual([3, 0, 3, 0])
    expect(Math.abs(row.createdAt - Date.now())).toBeLessThan(5_000)
    expect(row.latencyMs).toBeNull()
  })

  // the write's statements after the failed insert (sent without waiting, as PostgreSQL
  // pipelines them) must not commit, or the spend would count again when the write is retried
  // (when SQLite rolls the whole transaction back itself: test/foundation/sqlite-tx.test.ts)
  test.skipIf(onPostgres)('a write that fills the disk commits nothing; retried once there is room, it counts each record once', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const free = fillSqlite(t.s.storage.sqlite!)
    const inputs = Array.from({ length: 40 }, () => genInput(t.s.catalog, key, { usage: USAGE }))
    for (const g of inputs) t.s.recorder.record(g)
    await t.s.recorder.flush()
    expect(t.logs.some((l) => l.includes('writing generation records failed'))).toBe(true)
    expect(await count(t)).toBe(0)
    expect(await rollup(t.s)).toEqual([])
    expect((await t.s.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [key.id]))!.spent).toBe(0)

    free()
    await t.s.recorder.flush()
    expect(await count(t)).toBe(40)
    expect((await rollup(t.s))[0]!.requests).toBe(40)
    expect((await t.s.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [key.id]))!.spent).toBeCloseTo(40 * GPT4O_LIST, 10)
  })

  test('a failing write is logged, not thrown', async () => {
    t = await testServices()
    const key = await keyOf(t)
    await t.s.recorder.stop()
    await t.s.storage.sql.run('DROP TABLE usage_hourly')
    expect(() => t.s.recorder.record(genInput(t.s.catalog, key))).not.toThrow()
    // after stop() the write starts at once; it fails, and says so
    await until(() => t.logs.some((l) => l.includes('writing generation records failed')))
    // the transaction rolled back: no record without its rollup
    expect(await count(t)).toBe(0)
  })

  test('a long wait for room does not spend a batch\'s tries: an ordinary error after it is tried again, and nothing is lost', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const g = genInput(t.s.catalog, key, { usage: USAGE })
    // the disk full before the record is queued: its write, a few ms later, may beat the trigger
    // made after it on a busy machine
    const full = await failGenerationWrites(t.s.storage.sql, 'full')
    t.s.recorder.record(g)
    // five failures for want of room, each tried again (the retry's pause is 100 ms a failure)
    for (let i = 0; i < 5; i++) await t.s.recorder.flush()
    await full()
    // then one ordinary error: the first of the batch's three tries, not a fourth
    const once = await failGenerationWrites(t.s.storage.sql, 'error')
    await t.s.recorder.flush()
    await once()
    // six at least: the retry's own timer may add a try of its own on a slow machine
    expect(t.logs.filter((l) => l.includes('writing generation records failed')).length).toBeGreaterThanOrEqual(6)
    await t.s.recorder.flush()
    expect(await count(t)).toBe(1)
    expect(t.logs.some((l) => l.includes('given up'))).toBe(false)
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(GPT4O_LIST, 12)
  })

  test('a record the database keeps refusing loses only itself: the rest of its write is stored, and only its cost is taken back', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const refuse = await failGenerationWrites(t.s.storage.sql, 'error', 'chatcmpl-refused')
    try {
      const g = genInput(t.s.catalog, key, { usage: USAGE })
      for (let i = 0; i < 5; i++) t.s.recorder.record({ ...g, id: i === 2 ? 'chatcmpl-refused' : `chatcmpl-kept-${i}` })
      // three tries of the whole write, then each record alone
      for (let i = 0; i < 3; i++) await t.s.recorder.flush()
      expect(await count(t)).toBe(4)
      expect((await t.s.storage.sql.get<{ n: number }>("SELECT count(*) AS n FROM generations WHERE reply_id LIKE 'chatcmpl-kept-%'"))!.n).toBe(4)
      expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(4)
      expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(4 * GPT4O_LIST, 12)
      expect(t.s.billing.unwritten(key.id)).toBe(0)
      expect(t.logs.some((l) => l.includes('generation records given up') && l.includes('"records":1'))).toBe(true)
    } finally {
      await refuse()
    }
  })

  test('records arriving after stop() are written at once (shutdown loses nothing)', async () => {
    t = await testServices()
    const key = await keyOf(t)
    const early = genInput(t.s.catalog, key)
    t.s.recorder.record(early)
    await t.s.recorder.stop()
    expect(await t.s.recorder.store.get(early.id)).toBeDefined()
    const late = genInput(t.s.catalog, key)
    t.s.recorder.record(late)
    // written by record() itself (nothing else will flush after stop): no flush() called here
    await until(async () => (await t.s.recorder.store.get(late.id)) !== undefined)
  })
})

describe('recorder: retention', () => {
  test('records older than the retention are pruned; the rollup stays', async () => {
    t = await testServices({ SWITCHYARD_RETENTION_DAYS: '30' })
    const key = await keyOf(t)
    const now = Date.now()
    const old = genInput(t.s.catalog, key, { createdAt: now - 31 * DAY })
    const recent = genInput(t.s.catalog, key, { createdAt: now - 29 * DAY })
    t.s.recorder.record(old)
    t.s.recorder.record(recent)
    await t.s.recorder.flush()
    expect(await t.s.recorder.prune(now)).toBe(1)
    expect(await t.s.recorder.get(old.id)).toBeUndefined()
    expect(await t.s.recorder.get(recent.id)).toBeDefined()
    expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(2)
  })

  test('retention is never below the 7 days records must be kept (a config built by hand included), default 90', async () => {
    t = await testServices({ SWITCHYARD_RETENTION_DAYS: '7' })
    const key = await keyOf(t)
    const now = Date.now()
    const g = genInput(t.s.catalog, key, { createdAt: now - 6 * DAY })
    t.s.recorder.record(g)
    await t.s.recorder.flush()
    const r = new Recorder({ ...t.s, config: { generations: { retentionDays: 1, maxBacklog: 1 } } })
    expect(r.retentionDays).toBe(7)
    expect(await r.prune(now)).toBe(0)
    expect(await t.s.recorder.get(g.id)).toBeDefined()
    await t.close()
    t = await testServices()
    expect(t.s.recorder.retentionDays).toBe(90)
  })

  test('pruning a backlog larger than one chunk removes all of it', async () => {
    t = await testServices({ SWITCHYARD_RETENTION_DAYS: '30' })
    // a recorder of its own, not started: the started one's first prune (a second after its start)
    // could be under way when this test asks for one, which then answers 0 as already running
    await t.s.recorder.stop()
    const r = new Recorder({ ...t.s })
    const key = await keyOf(t)
    const now = Date.now()
    for (let i = 0; i < 12_000; i++) r.record(genInput(t.s.catalog, key, { createdAt: now - 40 * DAY - i }))
    await r.flush()
    expect(await r.prune(now)).toBe(12_000)
  })

  test('pruning runs in small steps and gives the thread back between them', async () => {
    t = await testServices({ SWITCHYARD_RETENTION_DAYS: '30' })
    await t.s.recorder.stop()
    const r = new Recorder({ ...t.s }, { pruneChunk: 100 })
    const key = await keyOf(t)
    const now = Date.now()
    for (let i = 0; i < 450; i++) r.record(genInput(t.s.catalog, key, { createdAt: now - 40 * DAY - i }))
    const recent = genInput(t.s.catalog, key, { createdAt: now - 29 * DAY })
    r.record(recent)
    await r.flush()
    const steps: number[] = []
    const pruneSome = r.store.pruneSome.bind(r.store)
    r.store.pruneSome = async (before, limit) => {
      const n = await pruneSome(before, limit)
      steps.push(n)
      return n
    }
    // a timer set now fires while the pruning is under way: each step yields to the loop
    let ticks = 0
    const tick = setInterval(() => ticks++, 0)
    expect(await r.prune(now)).toBe(450)
    clearInterval(tick)
    expect(steps).toEqual([100, 100, 100, 100, 50])
    expect(ticks).toBeGreaterThanOrEqual(4)
    expect(await count(t)).toBe(1)
    expect((await rollup(t.s)).reduce((n, x) => n + x.requests, 0)).toBe(451)
    await r.stop()
  })

  test('start() registers a stop hook in onClose that stops the prune timer', async () => {
    t = await testServices({ SWITCHYARD_RETENTION_DAYS: '30' })
    // the server's own recorder must not prune behind this test's back
    await t.s.recorder.stop()
    const onClose: (() => void | Promise<void>)[] = []
    const r = new Recorder({ ...t.s }, { pruneEveryMs: 10 }).start(onClose)
    expect(onClose).toHaveLength(1)
    const key = await keyOf(t)
    t.s.recorder.record(genInput(t.s.catalog, key, { createdAt: Date.now() - 40 * DAY }))
    await t.s.recorder.flush()
    await Bun.sleep(60)
    expect(await count(t)).toBe(0)
    for (const c of onClose) await c()
    t.s.recorder.record(genInput(t.s.catalog, key, { createdAt: Date.now() - 40 * DAY }))
    await t.s.recorder.flush()
    await Bun.sleep(60)
    expect(await count(t)).toBe(1)
    void r
  })
})

describe('recorder: waiting for records still being counted', () => {
  // a key's lookup waits for its own cut streams' bills, never for another tenant's (each wait up to 2 s)
  test("one key's or account's wait passes over another's pending record; an unnamed wait waits for all", async () => {
    t = await testServices()
    const mine = await keyOf(t, 'ours')
    const theirs = await keyOf(t, 'theirs')
    let release!: (i: ReturnType<typeof genInput>) => void
    const late = new Promise<ReturnType<typeof genInput>>((r) => (release = r))
    t.s.recorder.recordLater(late, undefined, { keyId: theirs.id, account: theirs.account })
    const waited = async (of?: { keyId?: string; account?: string }) => {
      const start = performance.now()
      await t.s.recorder.settled(300, of)
      return performance.now() - start
    }
    expect(await waited({ keyId: mine.id })).toBeLessThan(100)
    expect(await waited({ account: mine.account })).toBeLessThan(100)
    expect(await waited({ keyId: theirs.id })).toBeGreaterThanOrEqual(250)
    expect(await waited({ account: theirs.account })).toBeGreaterThanOrEqual(250)
    expect(await waited()).toBeGreaterThanOrEqual(250)
    release(genInput(t.s.catalog, theirs))
    await t.s.recorder.settled()
    await t.s.recorder.flush()
    expect(await count(t)).toBe(1)
  })

  // a cut stream's bill is begun on the turn after its reply ended (its tap read then): a
  // report asked for at once still counts it, on a database slow enough to show the gap
  test('a wait takes in what was to be recorded on the next turn: a count begun there is waited for', async () => {
    t = await testServices()
    const mine = await keyOf(t, 'ours')
    let release!: (i: ReturnType<typeof genInput>) => void
    const late = new Promise<ReturnType<typeof genInput>>((r) => (release = r))
    t.s.recorder.later(() => t.s.recorder.recordLater(late, undefined, { keyId: mine.id, account: mine.account }))
    setTimeout(() => release(genInput(t.s.catalog, mine)), 100)
    await t.s.recorder.settled(2_000, { keyId: mine.id })
    await t.s.recorder.flush()
    expect(await count(t)).toBe(1)
  })
})
