import { describe, expect, test } from 'bun:test'
import { segments } from '../../src/usage/query.ts'
import { bucketStarts, buildReport, type UsageRow } from '../../src/usage/report.ts'

const T = (s: string) => Date.parse(s)

const row = (at: string, model: string, requests: number, cost: number, unpriced = 0): UsageRow => ({
  at: T(at),
  model,
  requests,
  inputTokens: requests * 10,
  outputTokens: requests * 2,
  totalTokens: requests * 12,
  cost,
  unpricedRequests: unpriced,
  cacheReadTokens: requests * 3,
  cacheWriteTokens: requests * 4,
  reasoningTokens: requests,
  cacheWrite1hTokens: requests * 2,
  inputAudioTokens: requests * 5,
  outputAudioTokens: requests,
  webSearchRequests: requests,
  fileSearchRequests: 0,
  imageToolTokens: requests * 100,
})

/** What else the costs count, as `row` gives it for `n` requests: each a count of its own, in no token bucket. */
const extras = (n: number) => ({ input_cache_write_1h_tokens: 2 * n, input_audio_tokens: 5 * n, output_audio_tokens: n, web_search_requests: n, file_search_requests: 0, image_tool_tokens: 100 * n })

const none = { unpriced_requests: 0, input_cached_tokens: 0, input_cache_write_tokens: 0, reasoning_tokens: 0, ...extras(0) }

describe('bucketStarts', () => {
  test('hour buckets aligned to UTC hour starts, partial first and last', () => {
    const b = bucketStarts({ from: T('2026-01-05T10:30:00Z'), to: T('2026-01-05T13:15:00Z'), granularity: 'hour' })
    expect(b.map((x) => new Date(x).toISOString())).toEqual([
      '2026-01-05T10:00:00.000Z',
      '2026-01-05T11:00:00.000Z',
      '2026-01-05T12:00:00.000Z',
      '2026-01-05T13:00:00.000Z',
    ])
  })

  test('an exclusive end on a bucket edge adds no empty trailing bucket', () => {
    expect(bucketStarts({ from: T('2026-01-05T10:00:00Z'), to: T('2026-01-05T12:00:00Z'), granularity: 'hour' })).toHaveLength(2)
  })

  test('day buckets aligned to UTC midnight', () => {
    const b = bucketStarts({ from: T('2026-01-05T22:00:00Z'), to: T('2026-01-08T01:00:00Z'), granularity: 'day' })
    expect(b.map((x) => new Date(x).toISOString().slice(0, 10))).toEqual(['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08'])
  })
})

describe('buildReport', () => {
  const w = { from: T('2026-01-05T10:30:00Z'), to: T('2026-01-05T13:15:00Z'), granularity: 'hour' as const }

  test('every bucket present, empty ones with zeros; rows land in their bucket', () => {
    const r = buildReport(w, [row('2026-01-05T10:30:00Z', 'a', 2, 0.5), row('2026-01-05T12:00:00Z', 'a', 1, 0.25)])
    expect(r.series).toEqual([
      { timestamp: '2026-01-05T10:00:00.000Z', requests: 2, input_tokens: 20, output_tokens: 4, cost: 0.5, ...none, input_cached_tokens: 6, input_cache_write_tokens: 8, reasoning_tokens: 2, ...extras(2) },
      { timestamp: '2026-01-05T11:00:00.000Z', requests: 0, input_tokens: 0, output_tokens: 0, cost: 0, ...none },
      { timestamp: '2026-01-05T12:00:00.000Z', requests: 1, input_tokens: 10, output_tokens: 2, cost: 0.25, ...none, input_cached_tokens: 3, input_cache_write_tokens: 4, reasoning_tokens: 1, ...extras(1) },
      { timestamp: '2026-01-05T13:00:00.000Z', requests: 0, input_tokens: 0, output_tokens: 0, cost: 0, ...none },
    ])
    expect(r.totals).toEqual({ total_requests: 3, total_tokens: 36, input_tokens: 30, output_tokens: 6, total_cost: 0.75, ...none, input_cached_tokens: 9, input_cache_write_tokens: 12, reasoning_tokens: 3, ...extras(3) })
    expect(r.from).toBe('2026-01-05T10:30:00.000Z')
    expect(r.to).toBe('2026-01-05T13:15:00.000Z')
  })

  test('top models by cost, then requests, then name', () => {
    const r = buildReport(w, [
      row('2026-01-05T11:00:00Z', 'cheap-many', 9, 0.1),
      row('2026-01-05T11:00:00Z', 'dear', 1, 2),
      row('2026-01-05T12:00:00Z', 'dear', 1, 1),
      row('2026-01-05T12:00:00Z', 'unpriced', 5, 0, 5),
      row('2026-01-05T12:00:00Z', 'b-cheap-few', 2, 0.1),
      row('2026-01-05T12:00:00Z', 'a-cheap-few', 2, 0.1),
    ])
    expect(r.top_models.map((m) => m.model)).toEqual(['dear', 'cheap-many', 'a-cheap-few', 'b-cheap-few', 'unpriced'])
    expect(r.top_models[0]).toEqual({ model: 'dear', requests: 2, tokens: 24, input_tokens: 20, output_tokens: 4, cost: 3, ...none, input_cached_tokens: 6, input_cache_write_tokens: 8, reasoning_tokens: 2, ...extras(2) })
    expect(r.totals.unpriced_requests).toBe(5)
  })

  test('a bucket says how many of its requests were unpriced, so its cost of 0 is not taken for free', () => {
    const r = buildReport({ ...w, breakdown: 'model' }, [row('2026-01-05T11:00:00Z', 'unpriced', 5, 0, 5), row('2026-01-05T12:00:00Z', 'free', 2, 0)])
    expect(r.series.map((p) => [p.cost, p.unpriced_requests])).toEqual([[0, 0], [0, 5], [0, 0], [0, 0]])
    expect(r.series_by_model!.find((s) => s.model === 'unpriced')!.series.map((p) => p.unpriced_requests)).toEqual([0, 5, 0, 0])
    expect(r.top_models.find((m) => m.model === 'unpriced')!.unpriced_requests).toBe(5)
  })

  test('a series per model for the first 20 models only, however many the window holds; each equal to its rows', () => {
    const rows = Array.from({ length: 300 }, (_, i) => row('2026-01-05T11:00:00Z', `mock-m${i}`, 1 + (i % 7), (i + 1) / 1000))
    const r = buildReport({ ...w, breakdown: 'model' }, rows)
    expect(r.top_models.length).toBe(300)
    expect(r.series_by_model!.map((s) => s.model)).toEqual(r.top_models.slice(0, 20).map((m) => m.model))
    for (const s of r.series_by_model!) {
      const mine = rows.filter((x) => x.model === s.model)
      expect(s.series.reduce((n, p) => n + p.requests, 0)).toBe(mine.reduce((n, x) => n + x.requests, 0))
    }
  })

  test('money sums do not show float noise', () => {
    const r = buildReport(w, [row('2026-01-05T11:00:00Z', 'a', 1, 0.1), row('2026-01-05T11:30:00Z', 'a', 1, 0.2)])
    expect(r.totals.total_cost).toBe(0.3)
  })

  test('a row outside the window never leaks in', () => {
    const r = buildReport(w, [row('2026-01-05T09:59:59.999Z', 'a', 1, 1), row('2026-01-05T14:00:00Z', 'a', 1, 1)])
    expect(r.totals.total_requests).toBe(0)
  })
})

describe('segments: rollup for whole hours, records for partial edges', () => {
  const far = 0
  const iso = (s: ReturnType<typeof segments>) => s.map((x) => [new Date(x.from).toISOString(), new Date(x.to).toISOString(), x.exact])

  test('partial head and tail around whole hours', () => {
    expect(iso(segments(T('2026-01-05T10:30:00Z'), T('2026-01-05T13:15:00Z'), far))).toEqual([
      ['2026-01-05T10:30:00.000Z', '2026-01-05T11:00:00.000Z', true],
      ['2026-01-05T11:00:00.000Z', '2026-01-05T13:00:00.000Z', false],
      ['2026-01-05T13:00:00.000Z', '2026-01-05T13:15:00.000Z', true],
    ])
  })

  test('aligned bounds: rollup only', () => {
    expect(iso(segments(T('2026-01-05T10:00:00Z'), T('2026-01-05T13:00:00Z'), far))).toEqual([
      ['2026-01-05T10:00:00.000Z', '2026-01-05T13:00:00.000Z', false],
    ])
  })

  test('inside one hour: one exact segment', () => {
    expect(iso(segments(T('2026-01-05T10:10:00Z'), T('2026-01-05T10:20:00Z'), far))).toEqual([
      ['2026-01-05T10:10:00.000Z', '2026-01-05T10:20:00.000Z', true],
    ])
  })

  test('across one hour edge with no whole hour between', () => {
    expect(iso(segments(T('2026-01-05T10:30:00Z'), T('2026-01-05T11:15:00Z'), far))).toEqual([
      ['2026-01-05T10:30:00.000Z', '2026-01-05T11:00:00.000Z', true],
      ['2026-01-05T11:00:00.000Z', '2026-01-05T11:15:00.000Z', true],
    ])
  })

  test('a tail hour ending at the report\'s now is read whole from the rollup: no record is later', () => {
    const now = T('2026-01-05T13:15:00Z')
    expect(iso(segments(T('2026-01-05T10:30:00Z'), now, far, now))).toEqual([
      ['2026-01-05T10:30:00.000Z', '2026-01-05T11:00:00.000Z', true],
      ['2026-01-05T11:00:00.000Z', '2026-01-05T13:00:00.000Z', false],
      ['2026-01-05T13:00:00.000Z', '2026-01-05T14:00:00.000Z', false],
    ])
    // a window inside the hour of now still starts exactly where it was asked to
    expect(iso(segments(T('2026-01-05T13:05:00Z'), now, far, now))).toEqual([['2026-01-05T13:05:00.000Z', '2026-01-05T13:15:00.000Z', true]])
    // a window ending before now is cut exactly
    expect(iso(segments(T('2026-01-05T10:30:00Z'), now, far, now + 1)).at(-1)).toEqual(['2026-01-05T13:00:00.000Z', '2026-01-05T13:15:00.000Z', true])
  })

  test('a partial hour older than the retention is read whole from the rollup', () => {
    const s = segments(T('2026-01-05T10:30:00Z'), T('2026-01-05T12:15:00Z'), T('2026-01-05T12:00:00Z'))
    expect(iso(s)).toEqual([
      ['2026-01-05T10:00:00.000Z', '2026-01-05T11:00:00.000Z', false],
      ['2026-01-05T11:00:00.000Z', '2026-01-05T12:00:00.000Z', false],
      ['2026-01-05T12:00:00.000Z', '2026-01-05T12:15:00.000Z', true],
    ])
    // segments never overlap
    for (let i = 1; i < s.length; i++) expect(s[i]!.from).toBeGreaterThanOrEqual(s[i - 1]!.to)
  })
})
