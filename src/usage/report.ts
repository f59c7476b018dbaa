// The usage report as pure functions: a window cut into UTC-aligned buckets, and aggregated
// rows folded into totals, a series with every bucket (empty ones as zeros) and top models.
import type { ExtrasSum } from '../generations/extras.ts'

export type Granularity = 'hour' | 'day'

export const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000 }

export interface ReportWindow {
  /** Epoch ms, inclusive. */
  from: number
  /** Epoch ms, exclusive. */
  to: number
  granularity: Granularity
  /** Canonical model id to filter on. */
  model?: string
  /** `model`: also a series per model (`series_by_model`), for charts stacked by model. */
  breakdown?: 'model'
}

/**
 * One aggregate of records: `at` is any instant inside the bucket it belongs to. With the sums
 * of what else the costs count (ExtrasSum: hour cache writes, audio tokens, searches, the image
 * tool's tokens).
 */
export interface UsageRow extends Record<ExtrasSum, number> {
  at: number
  model: string
  requests: number
  inputTokens: number
  outputTokens: number
  totalTokens: number
  cost: number
  unpricedRequests: number
  /** Parts of inputTokens: cache reads, and cache writes (5-minute and hour ones together). */
  cacheReadTokens: number
  cacheWriteTokens: number
  /** Part of outputTokens. */
  reasoningTokens: number
}

type Counter = Exclude<keyof UsageRow, 'at' | 'model'>

/**
 * What else the costs count, summed as the records keep it, in each of totals, models and
 * series: OpenAI's usage API name where it has one (`input_audio_tokens`,
 * `output_audio_tokens`), else one in its style. Counts only: the hour cache writes are a part
 * of `input_cache_write_tokens` and the audio tokens of `input_tokens` / `output_tokens`, never
 * added to them; searches and the image tool's model's tokens are beside the model's tokens,
 * in no token bucket of the report.
 */
export interface ExtrasParts {
  input_cache_write_1h_tokens: number
  input_audio_tokens: number
  output_audio_tokens: number
  web_search_requests: number
  file_search_requests: number
  image_tool_tokens: number
}

/**
 * The parts of the tokens, in each of totals, models and series: OpenAI's usage API name where
 * it has one (`input_cached_tokens`), a plain one otherwise. Each is a part of `input_tokens`
 * or `output_tokens`, never added to them. And what else the costs count (ExtrasParts).
 */
export interface TokenParts extends ExtrasParts {
  input_cached_tokens: number
  input_cache_write_tokens: number
  reasoning_tokens: number
}

const PARTS = {
  input_cached_tokens: 'cacheReadTokens',
  input_cache_write_tokens: 'cacheWriteTokens',
  reasoning_tokens: 'reasoningTokens',
  input_cache_write_1h_tokens: 'cacheWrite1hTokens',
  input_audio_tokens: 'inputAudioTokens',
  output_audio_tokens: 'outputAudioTokens',
  web_search_requests: 'webSearchRequests',
  file_search_requests: 'fileSearchRequests',
  image_tool_tokens: 'imageToolTokens',
} as const satisfies Record<keyof TokenParts, Counter>

export interface SeriesPoint extends TokenParts {
  timestamp: string
  requests: number
  input_tokens: number
  output_tokens: number
  cost: number
  /** Requests of the bucket whose model had no known price: a cost of 0 with these is not free. */
  unpriced_requests: number
}

export interface TopModel extends TokenParts {
  model: string
  requests: number
  tokens: number
  input_tokens: number
  output_tokens: number
  cost: number
  unpriced_requests: number
}

export interface Totals extends TokenParts {
  total_requests: number
  total_tokens: number
  input_tokens: number
  output_tokens: number
  total_cost: number
  /** Requests whose model had no known price: their cost is not in `total_cost`. */
  unpriced_requests: number
}

// each report field and the row counter it sums, in the order the report shows them
const POINT = { requests: 'requests', input_tokens: 'inputTokens', output_tokens: 'outputTokens', cost: 'cost', unpriced_requests: 'unpricedRequests', ...PARTS } as const satisfies Record<Exclude<keyof SeriesPoint, 'timestamp'>, Counter>
const MODEL = { requests: 'requests', tokens: 'totalTokens', input_tokens: 'inputTokens', output_tokens: 'outputTokens', cost: 'cost', unpriced_requests: 'unpricedRequests', ...PARTS } as const satisfies Record<Exclude<keyof TopModel, 'model'>, Counter>
const TOTALS = { total_requests: 'requests', total_tokens: 'totalTokens', input_tokens: 'inputTokens', output_tokens: 'outputTokens', total_cost: 'cost', unpriced_requests: 'unpricedRequests', ...PARTS } as const satisfies Record<keyof Totals, Counter>

function zeroRecord<F extends string>(fields: Record<F, Counter>): Record<F, number> {
  return Object.fromEntries(Object.keys(fields).map((f) => [f, 0])) as Record<F, number>
}

// Each record of zeros is copied from one made once: a spread of an object keeps its shape,
// where Object.fromEntries for each of 10,000 hourly points (the widest report) left objects
// slow to make and slower to encode, holding the event loop 100-500 ms for one report.
const POINT_ZEROS: SeriesPoint = { timestamp: '', ...zeroRecord(POINT) }
const MODEL_ZEROS = zeroRecord(MODEL)
const TOTALS_ZEROS = zeroRecord(TOTALS)

function add<F extends string>(into: Record<NoInfer<F>, number>, fields: Record<F, Counter>, r: UsageRow): void {
  for (const f in fields) into[f] += r[fields[f]]
}

const point = (b: number): SeriesPoint => ({ ...POINT_ZEROS, timestamp: new Date(b).toISOString() })

export interface UsageReport {
  from: string
  to: string
  granularity: Granularity
  model: string | null
  totals: Totals
  series: SeriesPoint[]
  top_models: TopModel[]
  /** With `breakdown=model`: the series of the first MAX_MODEL_SERIES models of `top_models`, in that order. */
  series_by_model?: { model: string; series: SeriesPoint[] }[]
}

/** Epoch ms has no leap seconds, so UTC hour and day starts are plain multiples. */
export function bucketStart(ms: number, g: Granularity): number {
  const size = BUCKET_MS[g]
  return Math.floor(ms / size) * size
}

/** Starts of every bucket touching [from, to): the first and last may be partial. */
export function bucketStarts(w: Pick<ReportWindow, 'from' | 'to' | 'granularity'>): number[] {
  const size = BUCKET_MS[w.granularity]
  const out: number[] = []
  for (let b = bucketStart(w.from, w.granularity); b < w.to; b += size) out.push(b)
  return out
}

/** Float sums drift (0.1 + 0.2); money is reported to 1e-12 USD. */
function money(x: number): number {
  return Math.round(x * 1e12) / 1e12
}

export function buildReport(w: ReportWindow, rows: UsageRow[]): UsageReport {
  const starts = bucketStarts(w)
  const index = new Map(starts.map((b, i) => [b, i]))
  const series = starts.map(point)
  const models = new Map<string, TopModel>()
  const byModel = new Map<string, SeriesPoint[]>()
  const totals: Totals = { ...TOTALS_ZEROS }

  for (const r of rows) {
    const i = index.get(bucketStart(r.at, w.granularity))
    // a row outside the window is a query bug; it must not leak into the report
    if (i === undefined) continue
    add(series[i], POINT, r)
    add(totals, TOTALS, r)
    let m = models.get(r.model)
    if (!m) models.set(r.model, (m = { model: r.model, ...MODEL_ZEROS }))
    add(m, MODEL, r)
  }

  for (const p of series) p.cost = money(p.cost)
  totals.total_cost = money(totals.total_cost)
  const top = [...models.values()]
  for (const m of top) m.cost = money(m.cost)
  top.sort((a, b) => b.cost - a.cost || b.requests - a.requests || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))

  const report: UsageReport = {
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    granularity: w.granularity,
    model: w.model ?? null,
    totals,
    series,
    top_models: top,
  }
  if (w.breakdown === 'model') {
    // the first models of top_models only: the rest of each bucket is the total less these
    const shown = top.slice(0, MAX_MODEL_SERIES)
    for (const m of shown) byModel.set(m.model, starts.map(point))
    for (const r of rows) {
      const ms = byModel.get(r.model)
      const i = index.get(bucketStart(r.at, w.granularity))
      if (!ms || i === undefined) continue
      add(ms[i]!, POINT, r)
    }
    report.series_by_model = shown.map((m) => {
      const ms = byModel.get(m.model)!
      for (const p of ms) p.cost = money(p.cost)
      return { model: m.model, series: ms }
    })
  }
  return report
}

/** Models given a series of their own with `breakdown=model`, however many the window holds. */
export const MAX_MODEL_SERIES = 20
