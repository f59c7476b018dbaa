// The usage query string → a report window. Every bad value is a 400 naming it.
import { own } from '../lib/own.ts'
import { HttpError } from '../http/errors.ts'
import { onlyKnownParams } from '../http/query.ts'
import { BUCKET_MS, type Granularity, type ReportWindow } from './report.ts'

const TIMEFRAMES: Record<string, { ms: number; granularity: Granularity }> = {
  '24h': { ms: 86_400_000, granularity: 'hour' },
  '7d': { ms: 7 * 86_400_000, granularity: 'day' },
  '30d': { ms: 30 * 86_400_000, granularity: 'day' },
}

const GRANULARITIES: Granularity[] = ['hour', 'day']

/** A series longer than this is a mistake (hourly over years), not a report. */
export const MAX_BUCKETS = 10_000
/** With a series per model (at most MAX_MODEL_SERIES of them), the series are shorter. */
export const MAX_BREAKDOWN_BUCKETS = 2_500

const PARAMS: ReadonlySet<string> = new Set(['timeframe', 'from', 'to', 'granularity', 'model', 'breakdown', 'account'])

// Date, or date and time with an optional offset. Date.parse alone would accept "March 7".
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i

/** Epoch ms of an ISO 8601 date or datetime; a datetime without an offset is UTC. */
export function parseIsoInstant(value: string): number | undefined {
  const m = ISO.exec(value.trim())
  if (!m) return undefined
  const [, y, mo, d, h, mi, s, zone] = m
  if (+mo < 1 || +mo > 12 || +d < 1 || +d > daysIn(+y, +mo)) return undefined
  if (h !== undefined && (+h > 23 || +mi > 59 || (s !== undefined && +s > 59))) return undefined
  let text = value.trim().replace(' ', 'T')
  if (h === undefined) text += 'T00:00:00Z'
  else if (zone === undefined) text += 'Z'
  else if (/^[+-]\d{4}$/.test(zone)) text = text.slice(0, -5) + zone.slice(0, 3) + ':' + zone.slice(3)
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : undefined
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`)
}

function instant(q: URLSearchParams, field: 'from' | 'to'): number | undefined {
  const v = q.get(field)
  if (v === null) return undefined
  const ms = parseIsoInstant(v)
  if (ms === undefined) throw bad(field, `not an ISO 8601 date or datetime: "${v.slice(0, 64)}" (e.g. 2025-06-01T10:30:00Z)`)
  return ms
}

/**
 * `from`/`to` take precedence over `timeframe`; with only one of them, the other end is now
 * (for `from`) or one timeframe earlier (for `to`). `model` is mapped to its canonical id.
 */
export function parseUsageQuery(q: URLSearchParams, now: number, canonicalModel: (id: string) => string = (id) => id): ReportWindow {
  // a misspelt parameter (granulariy=day) would be a report of something else, without a word
  onlyKnownParams(q, PARAMS, `the usage report takes ${[...PARAMS].join(', ')}`)
  for (const name of new Set(q.keys())) if (q.getAll(name).length > 1) throw bad(name, 'given more than once')
  const tfName = q.get('timeframe') ?? '24h'
  const tf = own(TIMEFRAMES, tfName)
  if (!tf) throw bad('timeframe', `must be one of ${Object.keys(TIMEFRAMES).join(', ')}, got "${tfName.slice(0, 64)}"`)

  const fromQ = instant(q, 'from')
  const toQ = instant(q, 'to')
  const to = toQ ?? now
  const from = fromQ ?? to - tf.ms
  if (!(from < to)) throw bad('from', `must be before to (from ${new Date(from).toISOString()}, to ${new Date(to).toISOString()})`)

  const gq = q.get('granularity')
  let granularity: Granularity
  if (gq === null) {
    // with explicit bounds, the timeframe no longer describes the window: go by its length
    granularity = fromQ === undefined && toQ === undefined ? tf.granularity : to - from <= TIMEFRAMES['24h'].ms ? 'hour' : 'day'
  } else if ((GRANULARITIES as string[]).includes(gq)) {
    granularity = gq as Granularity
  } else {
    throw bad('granularity', `must be hour or day, got "${gq.slice(0, 64)}"`)
  }
  const buckets = Math.ceil((to - from) / BUCKET_MS[granularity]) + 1
  if (buckets > MAX_BUCKETS) throw bad('granularity', `${granularity} over this window gives ${buckets} buckets, more than ${MAX_BUCKETS}; use a shorter window${granularity === 'hour' ? ' or day' : ''}`)

  const mq = q.get('model')
  if (mq !== null && mq.trim() === '') throw bad('model', 'must not be empty')
  const bq = q.get('breakdown')
  if (bq !== null && bq !== 'model') throw bad('breakdown', `must be model (a series per model beside the total), got "${bq.slice(0, 64)}"`)
  if (bq === 'model' && buckets > MAX_BREAKDOWN_BUCKETS) {
    throw bad('breakdown', `a series per model over ${buckets} buckets is too long a report; with breakdown=model, a window may hold at most ${MAX_BREAKDOWN_BUCKETS} (use day, or a shorter window)`)
  }
  const w: ReportWindow = { from, to, granularity, model: mq === null ? undefined : canonicalModel(mq) }
  if (bq === 'model') w.breakdown = 'model'
  return w
}
