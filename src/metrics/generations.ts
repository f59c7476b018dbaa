// The series of generations: requests by status, duration and time to first token, tokens by
// type and cost, by surface, model, provider and family (and key id and account with
// `metrics.per_key`). A row holds the cells of one label combination, made on its first use
// and found again by a number computed from label indexes.
import type { Family, Usage } from '../ir/types.ts'
import type { Cell, Counter, HistogramCell, Histogram, Registry } from './registry.ts'
import { FAMILIES, statusCode, statusLabel, SURFACES, type Labels } from './labels.ts'

/** Seconds; from a quick answer to a long reasoning stream. */
export const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300]

export const TOKEN_TYPES = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const

/** The counted cells of one label combination (one key's, with per_key). */
export interface Counts {
  readonly values: readonly string[]
  /** By HTTP status. */
  readonly requests: Map<number, Cell>
  /** In TOKEN_TYPES order. */
  readonly tokens: readonly Cell[]
  readonly cost: Cell
}

export interface Row {
  readonly values: readonly string[]
  readonly duration: HistogramCell
  readonly ttft: HistogramCell
  /** Without per_key: the row's counts; with it, each key's. */
  counts?: Counts
  byKey?: Map<number, Counts>
}

/** Who a generation is charged to: its key id and account (labels only with per_key). */
export interface KeyRef {
  id: string
  account: string
}

/** Token counts as the record stores them: finite, not negative, whole. */
export function tokenCount(n: number | undefined | null): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0
}

export class GenerationSeries {
  private readonly requests: Counter
  private readonly duration: Histogram
  private readonly ttft: Histogram
  private readonly tokens: Counter
  private readonly cost: Counter
  private readonly rows = new Map<number, Row>()
  /**
   * per_key: the index of each key id with each account it has had (bounded by the keys that
   * exist and their accounts), so one pair is one series however often an account changes back.
   */
  private readonly keys = new Map<string, number>()

  constructor(registry: Registry, private readonly labels: Labels, private readonly perKey: boolean) {
    const base = ['surface', 'model', 'provider', 'family']
    const counted = perKey ? [...base, 'key_id', 'account'] : base
    this.requests = registry.counter('switchyard_requests', 'Generation requests the pipeline decoded (batch items apart), by HTTP status', [...counted, 'status'])
    this.duration = registry.histogram('switchyard_request_duration_seconds', 'Time from the request to the last byte of its reply', base, LATENCY_BUCKETS)
    this.ttft = registry.histogram('switchyard_time_to_first_token_seconds', 'Time from a streamed request to its first output token', base, LATENCY_BUCKETS)
    this.tokens = registry.counter('switchyard_tokens', 'Tokens of generation records (batch items included), by type; input is uncached input', [...counted, 'type'])
    this.cost = registry.counter('switchyard_cost_usd', 'USD cost of generation records (batch items included), as they are billed', counted)
  }

  /** The row of a label combination: `surface` an index into SURFACES. */
  row(surface: number, model: string, family: Family, provider: string | undefined): Row {
    const { models, providers } = this.labels
    const m = models.indexOf(model)
    const p = providers.indexOf(provider)
    const f = family === 'anthropic' ? 1 : 0
    const id = ((m * providers.size + p) * SURFACES.length + surface) * FAMILIES.length + f
    let row = this.rows.get(id)
    if (!row) {
      const values = [SURFACES[surface]!, models.values[m]!, providers.values[p]!, FAMILIES[f]!]
      row = { values, duration: this.duration.cell(values), ttft: this.ttft.cell(values) }
      this.rows.set(id, row)
    }
    return row
  }

  counts(row: Row, key: KeyRef): Counts {
    if (!this.perKey) return (row.counts ??= this.makeCounts(row.values))
    const pair = `${key.id}\0${key.account}`
    let index = this.keys.get(pair)
    if (index === undefined) this.keys.set(pair, (index = this.keys.size))
    const byKey = (row.byKey ??= new Map())
    let c = byKey.get(index)
    if (!c) byKey.set(index, (c = this.makeCounts([...row.values, key.id, key.account])))
    return c
  }

  private makeCounts(values: readonly string[]): Counts {
    return {
      values,
      requests: new Map(),
      tokens: TOKEN_TYPES.map((t) => this.tokens.cell([...values, t])),
      cost: this.cost.cell(values),
    }
  }

  request(c: Counts, status: number): void {
    const code = statusCode(status)
    let cell = c.requests.get(code)
    if (!cell) c.requests.set(code, (cell = this.requests.cell([...c.values, statusLabel(code)])))
    cell.value++
  }

  timing(row: Row, latencyMs: number, ttftMs: number | null): void {
    if (Number.isFinite(latencyMs)) this.duration.observe(row.duration, Math.max(0, latencyMs) / 1000)
    if (ttftMs !== null && Number.isFinite(ttftMs)) this.ttft.observe(row.ttft, Math.max(0, ttftMs) / 1000)
  }

  /** Tokens as the record stores them, and its cost when priced (null: unpriced, not $0). */
  usage(c: Counts, u: Usage, cost: number | null): void {
    const t = c.tokens
    t[0]!.value += tokenCount(u.inputTokens)
    t[1]!.value += tokenCount(u.outputTokens)
    t[2]!.value += tokenCount(u.cacheReadTokens)
    t[3]!.value += tokenCount(u.cacheWriteTokens)
    t[4]!.value += tokenCount(u.reasoningTokens)
    if (cost !== null && Number.isFinite(cost)) c.cost.value += Math.max(0, cost)
  }
}
