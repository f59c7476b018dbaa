// On PostgreSQL a write of records is one statement, one round trip: in a transaction, BEGIN
// and COMMIT were a round trip each beside the statements', every 25 ms under load. These tests
// count the statements the recorder sends and check that the one statement stores exactly what
// the transaction stored.
import { afterEach, describe, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { Billing } from '../../src/billing/billing.ts'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { costsByKey } from '../../src/billing/spend.ts'
import { roundUsd } from '../../src/lib/usd.ts'
import type { Param, Sql } from '../../src/db/sql.ts'
import { Recorder } from '../../src/generations/recorder.ts'
import type { GenerationRow } from '../../src/generations/row.ts'
import { onPostgres } from '../helpers/database.ts'
import { genInput } from './input.ts'
import { rollup, testServices, type TestServices } from './services.ts'

let t: TestServices
afterEach(async () => {
  await t?.close()
  t = undefined as unknown as TestServices
})

/** `sql`, counting the statements and transactions sent through it. */
function counting(sql: Sql) {
  const seen = { statements: 0, transactions: 0 }
  const wrap = (q: Sql): Sql => ({
    dialect: q.dialect,
    all: <T,>(text: string, params?: readonly Param[]) => (seen.statements++, q.all<T>(text, params)),
    get: <T,>(text: string, params?: readonly Param[]) => (seen.statements++, q.get<T>(text, params)),
    run: (text: string, params?: readonly Param[]) => (seen.statements++, q.run(text, params)),
    tx: <T,>(fn: (inner: Sql) => Promise<T>, committed?: (out: T) => void) => (seen.transactions++, q.tx((inner) => fn(wrap(inner)), committed)),
  })
  return { sql: wrap(sql), seen }
}

async function setUp(billing?: Billing) {
  t ??= await testServices()
  const key = (await t.s.keys.create({ name: 'k' })).record
  const { sql, seen } = counting(t.s.storage.sql)
  const recorder = new Recorder({ storage: { ...t.s.storage, sql } as typeof t.s.storage, catalog: t.s.catalog, billing: billing ?? t.s.billing, log: t.s.log, config: t.s.config })
  t.s.onClose.push(() => recorder.stop())
  return { key, recorder, seen }
}

const stored = (id: string) => t.s.storage.sql.get<GenerationRow>('SELECT id, reply_id AS "replyId", error, attempts, finish_reason AS "finishReason", prompt_tokens AS "promptTokens", cost FROM generations WHERE id = ?', [id])

describe.skipIf(!onPostgres)('records on PostgreSQL: one statement a write', () => {
  test('25 records of two models and two hours: one statement, the same rows, rollup and spend a transaction stores', async () => {
    const { key, recorder, seen } = await setUp()
    const hour = 3_600_000
    const at = Math.floor(Date.now() / hour) * hour + 1_000
    const ids: string[] = []
    const inputs = Array.from({ length: 25 }, (_, i) =>
      genInput(t.s.catalog, key, { model: i % 3 === 0 ? 'gpt-4o-mini' : 'gpt-4o', createdAt: at - (i % 2) * hour, usage: { inputTokens: 100 + i, outputTokens: 7 * i, cacheReadTokens: 3 * i, cacheWriteTokens: i % 2, reasoningTokens: i, cacheWrite1hTokens: i % 2, inputAudioTokens: i % 4, outputAudioTokens: i % 5, webSearches: 1 + (i % 3), fileSearches: i % 2 } }),
    )
    for (const g of inputs) ids.push(recorder.record(g)!)
    const before = { ...seen }
    await recorder.flush()
    expect(seen.statements - before.statements).toBe(1)
    expect(seen.transactions - before.transactions).toBe(0)

    const rows = await t.s.storage.sql.all<{ id: string; cost: number; created_at: number; model: string; prompt_tokens: number; completion_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number; reasoning_tokens: number; usage_extras: string | null }>(
      'SELECT id, cost, created_at, model, prompt_tokens, completion_tokens, cache_read_input_tokens, cache_creation_input_tokens, reasoning_tokens, usage_extras FROM generations ORDER BY created_at, id',
    )
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort())
    // the rollup: one row per hour and model, each counting its records
    const hours = await rollup(t.s)
    expect(hours.length).toBe(4)
    for (const h of hours) {
      const mine = rows.filter((r) => r.model === h.model && Math.floor(r.created_at / hour) * hour === h.hour)
      expect(h.requests).toBe(mine.length)
      expect(h.input_tokens).toBe(mine.reduce((n, r) => n + r.prompt_tokens, 0))
      expect(h.output_tokens).toBe(mine.reduce((n, r) => n + r.completion_tokens, 0))
      expect(h.cache_read_tokens).toBe(mine.reduce((n, r) => n + r.cache_read_input_tokens, 0))
      expect(h.cache_write_tokens).toBe(mine.reduce((n, r) => n + r.cache_creation_input_tokens, 0))
      expect(h.reasoning_tokens).toBe(mine.reduce((n, r) => n + r.reasoning_tokens, 0))
      // and what else the costs count, as each record keeps it
      const extra = (name: string) => mine.reduce((n, r) => n + (r.usage_extras === null ? 0 : (JSON.parse(r.usage_extras)[name] ?? 0)), 0)
      expect([h.cache_write_1h_tokens, h.input_audio_tokens, h.output_audio_tokens, h.web_search_requests, h.file_search_requests]).toEqual(
        ['cache_write_1h_tokens', 'audio_input_tokens', 'audio_output_tokens', 'web_searches', 'file_searches'].map(extra),
      )
      expect(h.web_search_requests).toBeGreaterThan(0)
      expect(h.cost).toBeCloseTo(mine.reduce((n, r) => n + r.cost, 0), 12)
    }
    // the key's spend is the sum the transaction would have added, to the last bit of the 1e-10 USD
    // money sums are kept to
    const costs = costsByKey(inputs.map((g, i) => ({ apiKeyId: key.id, cost: rows.find((r) => r.id === ids[i])!.cost })))
    expect((await t.s.keys.get(key.id))!.spent).toBe(roundUsd(costs.get(key.id)!))
    expect(t.s.billing.unwritten(key.id)).toBe(0)
  })

  test('text that JSON escapes is stored as it was: quotes, backslashes, newlines, escapes, accents, emoji', async () => {
    const { key, recorder, seen } = await setUp()
    const error = 'upstream said "no"\\n\nline two \u00e9 \u4e2d \ud83d\ude00 \t \\u0041 {"a":[1]} end'
    const attempts = [{ provider: 'openai "quoted" \\ name', status: 500, ms: 12 }]
    const g = genInput(t.s.catalog, key, { error, attempts, id: 'chatcmpl-"odd"\\id' })
    const id = recorder.record({ ...g, finishReason: 'length' })!
    await recorder.flush()
    expect(seen.transactions).toBe(0)
    const row = (await stored(id))!
    expect(row.replyId).toBe('chatcmpl-"odd"\\id')
    expect(row.error).toBe(error)
    expect(JSON.parse(row.attempts!)).toEqual(attempts)
    expect(row.finishReason).toBe('length')
  })

  test('a batch with an id stored already goes the transaction way: the rest is stored, the repeat counted nowhere', async () => {
    const { key, recorder, seen } = await setUp()
    const first = genInput(t.s.catalog, key, { recordId: 'gen-' + 'b'.repeat(32) })
    recorder.record(first)
    await recorder.flush()
    const spent = (await t.s.keys.get(key.id))!.spent
    const other = genInput(t.s.catalog, key)
    recorder.record(first)
    const otherId = recorder.record(other)!
    const before = { ...seen }
    await recorder.flush()
    // the one statement failed whole, then the transaction stored what it could
    expect(seen.transactions - before.transactions).toBe(1)
    expect((await t.s.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM generations'))!.n).toBe(2)
    expect((await stored(otherId))!.id).toBe(otherId)
    expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(2)
    expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(spent + (await stored(otherId))!.cost!, 12)
    expect(t.s.billing.unwritten(key.id)).toBe(0)
    // an id conflict is the expected way there: no warning of its own
    expect(t.logs.some((l) => l.includes('went the long way'))).toBe(false)
  })

  test('a text the JSON form refuses (a lone surrogate) is not lost: the transaction stores the record', async () => {
    const { key, recorder, seen } = await setUp()
    const g = genInput(t.s.catalog, key, { error: 'half a pair: \ud83d here' })
    const id = recorder.record(g)!
    await recorder.flush()
    expect(seen.transactions).toBe(1)
    expect((await stored(id))!.id).toBe(id)
    expect(t.logs.some((l) => l.includes('went the long way'))).toBe(true)
  })

  test('with the PostgreSQL ledger, the reservations a write ends are deleted by the same statement', async () => {
    t = await testServices()
    const funded = (await t.s.keys.create({ name: 'funded', credits: 100 })).record
    const keys = new KeyStore(t.s.storage)
    await keys.load()
    const billing = new Billing({ keys, catalog: t.s.catalog, sql: t.s.storage.sql }, new PgLedger(t.s.storage.sql))
    const { recorder, seen } = await setUp(billing)
    const model = t.s.catalog.resolve('gpt-4o')!
    const held = await Promise.all([1, 2, 3].map(() => billing.admit({ apiKey: funded, model, promptTokens: 10, maxOutputTokens: 10 })))
    const ids = held.map((a) => a!.reservationId!)
    // the three holds' rows (the ledger may hold one more ahead for the key's next request)
    const reservations = async () => (await t.s.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM credit_reservations WHERE id IN (?, ?, ?)', ids))!.n
    expect(await reservations()).toBe(3)
    for (const a of held) recorder.record(genInput(t.s.catalog, funded, { reservationId: a!.reservationId }))
    const before = { ...seen }
    await recorder.flush()
    expect(seen.statements - before.statements).toBe(1)
    expect(seen.transactions - before.transactions).toBe(0)
    expect(await reservations()).toBe(0)
    expect((await t.s.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [funded.id]))!.spent).toBeGreaterThan(0)
    await recorder.stop()
    await billing.stop()
  })
})
