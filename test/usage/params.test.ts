import { describe, expect, test } from 'bun:test'
import { HttpError } from '../../src/http/errors.ts'
import { parseIsoInstant, parseUsageQuery } from '../../src/usage/params.ts'

const NOW = Date.parse('2026-03-10T15:42:00Z')
const q = (s: string) => parseUsageQuery(new URLSearchParams(s), NOW)

function err(s: string): HttpError {
  try {
    q(s)
  } catch (e) {
    return e as HttpError
  }
  throw new Error(`no error for ${s}`)
}

describe('parseIsoInstant', () => {
  test.each([
    ['2026-01-05T10:30:00Z', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05T10:30:00.250Z', '2026-01-05T10:30:00.250Z'],
    ['2026-01-05T10:30Z', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05T10:30:00', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05T12:30:00+02:00', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05T12:30:00+0200', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05 10:30:00Z', '2026-01-05T10:30:00.000Z'],
    ['2026-01-05', '2026-01-05T00:00:00.000Z'],
  ])('%s', (input, out) => {
    expect(new Date(parseIsoInstant(input)!).toISOString()).toBe(out)
  })

  test.each(['March 7', '2026-02-30', '2026-13-01', '2026-01-05T24:00:00Z', '1700000000', '', 'yesterday', '2026-01-05T10:30:00+25'])(
    'rejects %p',
    (input) => {
      expect(parseIsoInstant(input)).toBeUndefined()
    },
  )
})

describe('parseUsageQuery', () => {
  test('defaults: 24h ending now, hourly', () => {
    expect(q('')).toEqual({ from: NOW - 86_400_000, to: NOW, granularity: 'hour', model: undefined })
  })

  test('7d and 30d default to daily', () => {
    expect(q('timeframe=7d')).toMatchObject({ from: NOW - 7 * 86_400_000, granularity: 'day' })
    expect(q('timeframe=30d')).toMatchObject({ from: NOW - 30 * 86_400_000, granularity: 'day' })
    expect(q('timeframe=30d&granularity=hour').granularity).toBe('hour')
  })

  test('from/to take precedence over timeframe', () => {
    const w = q('timeframe=30d&from=2026-03-01T10:30:00Z&to=2026-03-01T12:00:00Z')
    expect(w).toEqual({ from: Date.parse('2026-03-01T10:30:00Z'), to: Date.parse('2026-03-01T12:00:00Z'), granularity: 'hour', model: undefined })
    expect(q('timeframe=24h&from=2026-02-01&to=2026-03-01').granularity).toBe('day')
  })

  test('only from: up to now; only to: one timeframe before it', () => {
    expect(q('from=2026-03-10T00:00:00Z')).toMatchObject({ from: Date.parse('2026-03-10T00:00:00Z'), to: NOW })
    expect(q('to=2026-03-05T00:00:00Z&timeframe=7d')).toMatchObject({ from: Date.parse('2026-02-26T00:00:00Z'), to: Date.parse('2026-03-05T00:00:00Z') })
  })

  test('model is mapped to its canonical id', () => {
    const w = parseUsageQuery(new URLSearchParams('model=gpt-4o-2024-08-06'), NOW, (id) => (id === 'gpt-4o-2024-08-06' ? 'gpt-4o' : id))
    expect(w.model).toBe('gpt-4o')
  })

  test.each([
    ['timeframe=2d', 'timeframe:'],
    ['timeframe=', 'timeframe:'],
    ['granularity=week', 'granularity:'],
    ['from=yesterday', 'from:'],
    ['to=2026-02-30T00:00:00Z', 'to:'],
    ['from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'from:'],
    ['from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from:'],
    ['from=2026-03-11T00:00:00Z', 'from:'],
    ['model=', 'model:'],
    ['from=1990-01-01&granularity=hour', 'granularity:'],
    ['from=1900-01-01', 'granularity:'],
    // a misspelt or repeated parameter would be a report of something else
    ['granulariy=day', 'granulariy: unknown query parameter'],
    ['limit=5', 'limit: unknown query parameter'],
    ['timeframe=24h&timeframe=7d', 'timeframe: given more than once'],
    ['from=2026-01-01&from=2026-02-01', 'from: given more than once'],
    // a series per model over a long window is too long a report
    ['from=2000-01-01&to=2027-01-01&granularity=day&breakdown=model', 'breakdown:'],
  ])('%s → 400 naming the field', (s, field) => {
    const e = err(s)
    expect(e).toBeInstanceOf(HttpError)
    expect(e.status).toBe(400)
    expect(e.message).toStartWith(field)
  })
})

describe('parseUsageQuery: fuzz', () => {
  test('random query strings give a window or a 400, never another error', () => {
    const pieces = ['timeframe', 'from', 'to', 'granularity', 'model', 'x']
    const values = ['', '24h', '7d', '30d', 'hour', 'day', '2026-01-05', '2026-01-05T10:30:00.123456789Z', '0000-01-01', '9999-12-31T23:59:59Z', '-1', 'NaN', '%00', '🙂', 'a'.repeat(5000), '2026-01-05T10:30:00+14:00', '2026-02-29']
    let seed = 7
    const pick = <T>(a: T[]) => a[(seed = (seed * 48_271) % 2_147_483_647) % a.length]!
    for (let i = 0; i < 5_000; i++) {
      const qs = new URLSearchParams()
      for (let j = 0; j < 3; j++) qs.append(pick(pieces), pick(values))
      try {
        const w = parseUsageQuery(qs, NOW)
        expect(w.from).toBeLessThan(w.to)
      } catch (e) {
        expect(e).toBeInstanceOf(HttpError)
        expect((e as HttpError).status).toBe(400)
      }
    }
  })
})
