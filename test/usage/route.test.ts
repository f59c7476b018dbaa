import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ApiKey } from '../../src/http/context.ts'
import type { GenerationInput } from '../../src/generations/types.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { genInput } from '../generations/input.ts'

// Known prices so that every expected cost is a number written here, not one the code computed.
const YAML = `
pricing:
  discount: 0.5
  overrides:
    gpt-4o: { input_mtok: 2, output_mtok: 8 }
    gpt-4o-mini: { input_mtok: 1, output_mtok: 4 }
    claude-sonnet-4-5: { input_mtok: 3, output_mtok: 15, cache_read_mtok: 0.3, cache_write_mtok: 3.75 }
generations:
  retention_days: 3650
`

let g: Gateway
let k1: { key: string; record: ApiKey }
let k2: { key: string; record: ApiKey }
let k3: { key: string; record: ApiKey }

const T = (s: string) => Date.parse(s)
const u = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0, reasoningTokens = 0) => ({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens })

interface Seed {
  name: string
  key: () => ApiKey
  model: string
  at: string
  usage: ReturnType<typeof u>
  /** Expected cost (USD, after the 50% discount) or null when unpriced. */
  cost: number | null
}

const SEEDS: Seed[] = [
  { name: 'r1', key: () => k1.record, model: 'gpt-4o', at: '2026-01-05T10:15:00.000Z', usage: u(1000, 100), cost: ((1000 * 2 + 100 * 8) / 1e6) * 0.5 },
  { name: 'r2', key: () => k1.record, model: 'gpt-4o', at: '2026-01-05T10:59:59.999Z', usage: u(2000, 200), cost: ((2000 * 2 + 200 * 8) / 1e6) * 0.5 },
  { name: 'r3', key: () => k2.record, model: 'gpt-4o-mini', at: '2026-01-05T11:00:00.000Z', usage: u(3000, 300), cost: ((3000 * 1 + 300 * 4) / 1e6) * 0.5 },
  {
    name: 'r4',
    key: () => k1.record,
    model: 'claude-sonnet-4-5',
    at: '2026-01-05T11:45:00.000Z',
    usage: u(400, 50, 1000, 200, 20),
    cost: ((400 * 3 + 1000 * 0.3 + 200 * 3.75 + 50 * 15) / 1e6) * 0.5,
  },
  { name: 'r5', key: () => k2.record, model: 'mock-unpriced', at: '2026-01-05T13:10:00.000Z', usage: u(500, 60), cost: null },
  { name: 'r6', key: () => k3.record, model: 'gpt-4o', at: '2026-01-05T11:30:00.000Z', usage: u(7000, 700), cost: ((7000 * 2 + 700 * 8) / 1e6) * 0.5 },
  { name: 'r7', key: () => k1.record, model: 'gpt-4o', at: '2026-01-06T09:00:00.000Z', usage: u(10, 1), cost: ((10 * 2 + 1 * 8) / 1e6) * 0.5 },
  { name: 'r8', key: () => k1.record, model: 'gpt-4o', at: '2026-01-04T23:59:59.999Z', usage: u(20, 2), cost: ((20 * 2 + 2 * 8) / 1e6) * 0.5 },
]
const seeded = new Map<string, GenerationInput>()

// what else the costs count (searches, audio, hour writes, the image tool): these seeds have
// none (test/usage/extras.test.ts sums them)
const NO_EXTRAS = { input_cache_write_1h_tokens: 0, input_audio_tokens: 0, output_audio_tokens: 0, web_search_requests: 0, file_search_requests: 0, image_tool_tokens: 0 }

beforeAll(async () => {
  g = await startGateway({ yaml: YAML })
  k1 = await g.services.keys.create({ name: 'k1', account: 'acme' })
  k2 = await g.services.keys.create({ name: 'k2', account: 'acme' })
  k3 = await g.services.keys.create({ name: 'k3', account: 'globex' })
  for (const s of SEEDS) {
    const input = genInput(g.services.catalog, s.key(), { model: s.model, createdAt: T(s.at), usage: s.usage })
    seeded.set(s.name, input)
    g.services.recorder.record(input)
  }
})
afterAll(() => g.stop())

async function usage(query: string, key = k1.key) {
  const r = await fetch(`${g.url}/api/v1/usage${query ? '?' + query : ''}`, { headers: { authorization: `Bearer ${key}` } })
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as any }
}

/** Expected totals from the seeds, by hand. */
function expected(names: string[]) {
  const ss = SEEDS.filter((s) => names.includes(s.name))
  const input = ss.reduce((n, s) => n + s.usage.inputTokens + s.usage.cacheReadTokens + s.usage.cacheWriteTokens, 0)
  const output = ss.reduce((n, s) => n + s.usage.outputTokens, 0)
  return {
    total_requests: ss.length,
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    total_cost: ss.reduce((n, s) => n + (s.cost ?? 0), 0),
    unpriced_requests: ss.filter((s) => s.cost === null).length,
    input_cached_tokens: ss.reduce((n, s) => n + s.usage.cacheReadTokens, 0),
    input_cache_write_tokens: ss.reduce((n, s) => n + s.usage.cacheWriteTokens, 0),
    reasoning_tokens: ss.reduce((n, s) => n + s.usage.reasoningTokens, 0),
    ...NO_EXTRAS,
  }
}

function expectTotals(actual: any, names: string[]) {
  const e = expected(names)
  expect({ ...actual, total_cost: 0 }).toEqual({ ...e, total_cost: 0 })
  expect(actual.total_cost).toBeCloseTo(e.total_cost, 12)
}

const DAY5 = 'from=2026-01-05T00:00:00Z&to=2026-01-06T00:00:00Z'

describe('GET /api/v1/usage: totals, buckets, models', () => {
  test('stored costs are the hand-computed ones', async () => {
    for (const s of SEEDS) {
      const row = (await g.services.recorder.get(seeded.get(s.name)!.id))!
      if (s.cost === null) expect(row.cost).toBeNull()
      else expect(row.cost).toBeCloseTo(s.cost, 15)
    }
  })

  test('a day by hour: exact totals, 24 buckets, empty ones as zeros, only this account', async () => {
    const { status, type, body } = await usage(`${DAY5}&granularity=hour`)
    expect(status).toBe(200)
    expect(type).toStartWith('application/json')
    expectTotals(body.totals, ['r1', 'r2', 'r3', 'r4', 'r5'])
    expect(body.series).toHaveLength(24)
    expect(body.series[0].timestamp).toBe('2026-01-05T00:00:00.000Z')
    expect(body.series[23].timestamp).toBe('2026-01-05T23:00:00.000Z')
    const nonEmpty = body.series
      .filter((p: any) => p.requests > 0)
      .map((p: any) => [p.timestamp.slice(11, 16), p.requests, p.input_tokens, p.output_tokens, p.input_cached_tokens, p.input_cache_write_tokens, p.reasoning_tokens, p.unpriced_requests])
    expect(nonEmpty).toEqual([
      ['10:00', 2, 3000, 300, 0, 0, 0, 0],
      ['11:00', 2, 4600, 350, 1000, 200, 20, 0],
      ['13:00', 1, 500, 60, 0, 0, 0, 1],
    ])
    expect(body.series[10].cost).toBeCloseTo(SEEDS[0]!.cost! + SEEDS[1]!.cost!, 12)
    expect(body.series[12]).toEqual({
      timestamp: '2026-01-05T12:00:00.000Z', requests: 0, input_tokens: 0, output_tokens: 0, cost: 0,
      unpriced_requests: 0, input_cached_tokens: 0, input_cache_write_tokens: 0, reasoning_tokens: 0, ...NO_EXTRAS,
    })
  })

  test('top models ordered by cost, then requests, unpriced last', async () => {
    const { body } = await usage(`${DAY5}&granularity=hour`)
    expect(body.top_models.map((m: any) => [m.model, m.requests, m.tokens])).toEqual([
      ['gpt-4o', 2, 3300], // $0.0042
      ['gpt-4o-mini', 1, 3300], // $0.0021
      ['claude-sonnet-4-5', 1, 1650], // $0.0015
      ['mock-unpriced', 1, 560],
    ])
    expect(body.top_models[0].cost).toBeCloseTo(SEEDS[0]!.cost! + SEEDS[1]!.cost!, 12)
    expect(body.top_models[2]).toMatchObject({ input_tokens: 1600, output_tokens: 50, input_cached_tokens: 1000, input_cache_write_tokens: 200, reasoning_tokens: 20, unpriced_requests: 0 })
    expect(body.top_models[3]).toMatchObject({ cost: 0, unpriced_requests: 1 })
  })

  test('bucket edges: 10:59:59.999 and 11:00:00.000 fall in different hours, partial edges are exact', async () => {
    const { body } = await usage('from=2026-01-05T10:30:00Z&to=2026-01-05T11:30:00Z&granularity=hour')
    expect(body.series.map((p: any) => [p.timestamp, p.requests])).toEqual([
      ['2026-01-05T10:00:00.000Z', 1],
      ['2026-01-05T11:00:00.000Z', 1],
    ])
    expectTotals(body.totals, ['r2', 'r3'])
  })

  test('the window is [from, to): an instant on `to` is outside', async () => {
    const { body } = await usage('from=2026-01-05T10:59:59.999Z&to=2026-01-05T11:00:00.000Z')
    expectTotals(body.totals, ['r2'])
    expect(body.series).toHaveLength(1)
    expect(body.series[0].timestamp).toBe('2026-01-05T10:00:00.000Z')
  })

  test('day buckets aligned to UTC midnight with partial first and last days', async () => {
    const { body } = await usage('from=2026-01-04T23:59:59.999Z&to=2026-01-06T09:00:00.001Z')
    expect(body.granularity).toBe('day')
    expect(body.series.map((p: any) => [p.timestamp, p.requests])).toEqual([
      ['2026-01-04T00:00:00.000Z', 1],
      ['2026-01-05T00:00:00.000Z', 5],
      ['2026-01-06T00:00:00.000Z', 1],
    ])
    expectTotals(body.totals, ['r1', 'r2', 'r3', 'r4', 'r5', 'r7', 'r8'])
    const tighter = await usage('from=2026-01-05T00:00:00Z&to=2026-01-06T09:00:00Z&granularity=day')
    expectTotals(tighter.body.totals, ['r1', 'r2', 'r3', 'r4', 'r5'])
  })

  test('the model filter (an alias means its canonical model)', async () => {
    for (const m of ['gpt-4o', 'gpt-4o-2024-08-06']) {
      const { body } = await usage(`${DAY5}&model=${m}`)
      expect(body.model).toBe('gpt-4o')
      expectTotals(body.totals, ['r1', 'r2'])
      expect(body.top_models.map((x: any) => x.model)).toEqual(['gpt-4o'])
    }
    const partial = await usage('from=2026-01-05T10:30:00Z&to=2026-01-05T11:50:00Z&model=claude-sonnet-4-5')
    expectTotals(partial.body.totals, ['r4'])
    const none = await usage(`${DAY5}&model=no-such-model`)
    expectTotals(none.body.totals, [])
  })

  test('from/to take precedence over timeframe', async () => {
    const a = await usage(`${DAY5}&granularity=hour`)
    const b = await usage(`timeframe=30d&${DAY5}&granularity=hour`)
    expect(b.body).toEqual(a.body)
  })

  test("another account's records are absent; the same account's other keys are counted", async () => {
    const theirs = await usage(DAY5, k3.key)
    expectTotals(theirs.body.totals, ['r6'])
    const byK2 = await usage(DAY5, k2.key)
    expectTotals(byK2.body.totals, ['r1', 'r2', 'r3', 'r4', 'r5'])
    const bootstrap = await usage(DAY5, g.key)
    expectTotals(bootstrap.body.totals, [])
  })

  test('bad parameters → 400 naming them', async () => {
    const cases: [string, string][] = [
      ['timeframe=1y', 'timeframe'],
      ['granularity=minute', 'granularity'],
      ['from=not-a-date', 'from'],
      ['to=2026-01-05T25:00:00Z', 'to'],
      ['from=2026-01-06T00:00:00Z&to=2026-01-05T00:00:00Z', 'from'],
      ['model=', 'model'],
    ]
    for (const [qs, field] of cases) {
      const r = await usage(qs)
      expect(r.status).toBe(400)
      expect(Object.keys(r.body)).toEqual(['error'])
      expect(r.body.error).toStartWith(`${field}:`)
    }
  })

  test('without a key: 401', async () => {
    expect((await fetch(`${g.url}/api/v1/usage`)).status).toBe(401)
  })
})

describe('GET /api/v1/usage: relative windows', () => {
  test('default 24h by hour, 7d and 30d by day, around records made now', async () => {
    const acct = await g.services.keys.create({ name: 'rel', account: 'relative' })
    const now = Date.now()
    const rec = (ago: number) => g.services.recorder.record(genInput(g.services.catalog, acct.record, { createdAt: now - ago, usage: u(100, 10) }))
    rec(60_000)
    rec(25 * 3_600_000)
    rec(8 * 86_400_000)
    const day = await usage('', acct.key)
    expect(day.body.granularity).toBe('hour')
    expect(day.body.series.length).toBeGreaterThanOrEqual(24)
    expect(day.body.series.length).toBeLessThanOrEqual(25)
    expect(day.body.totals.total_requests).toBe(1)
    const week = await usage('timeframe=7d', acct.key)
    expect(week.body.granularity).toBe('day')
    expect(week.body.series.length).toBeGreaterThanOrEqual(7)
    expect(week.body.series.length).toBeLessThanOrEqual(8)
    expect(week.body.totals.total_requests).toBe(2)
    const month = await usage('timeframe=30d', acct.key)
    expect(month.body.totals.total_requests).toBe(3)
    expect(month.body.series.at(-1).timestamp).toBe(new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString())
  })
})
