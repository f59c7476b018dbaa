// Batches in the metrics. Items run in worker threads; the main thread counts them where it
// learns their end (the scheduler), and the tokens and cost of the records a results writer
// stored come back with that news, so the token and cost counters include batch work as the
// usage report does. Batches by status are read at scrape time with one grouped query:
// the database's view, the same from every instance sharing it (aggregate with max, not sum).
import { names } from '../db/columns.ts'
import { batches } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import type { GenerationRow } from '../generations/row.ts'
import type { Family } from '../ir/types.ts'
import type { GenerationSeries } from './generations.ts'
import { surfaceOfEndpoint } from './labels.ts'
import type { Cell, Gauge, Registry } from './registry.ts'

/** A stored batch record as the metrics count it: labels, tokens and cost as stored. */
export interface RecordTotals {
  model: string
  provider: string
  endpoint: string
  keyId: string
  account: string
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  reasoning: number | null
  cost: number | null
}

/** What a results writer sends back of the records it stored. */
export function recordTotals(rows: readonly GenerationRow[]): RecordTotals[] {
  return rows.map((r) => ({
    model: r.model,
    provider: r.provider,
    endpoint: r.endpoint,
    keyId: r.apiKeyId,
    account: r.account,
    // the stored prompt count is uncached input plus cache reads and writes
    input: r.promptTokens - r.cacheReadInputTokens - r.cacheCreationInputTokens,
    output: r.completionTokens,
    cacheRead: r.cacheReadInputTokens,
    cacheWrite: r.cacheCreationInputTokens,
    reasoning: r.reasoningTokens,
    cost: r.cost,
  }))
}

const STATUSES = batches.status.enumValues
const b = names(batches)
const BY_STATUS = `SELECT ${b.status} AS status, count(*) AS n FROM ${b.$table} GROUP BY ${b.status}`

export type ItemStatus = 'succeeded' | 'failed'

export class BatchSeries {
  private readonly items: Record<ItemStatus, Cell>
  private readonly byStatus: Gauge

  constructor(
    registry: Registry,
    private readonly generations: GenerationSeries,
    private readonly familyOf: (model: string) => Family | undefined,
  ) {
    const items = registry.counter('switchyard_batch_items', 'Batch items ended on this instance, by result', ['status'])
    this.items = { succeeded: items.cell(['succeeded']), failed: items.cell(['failed']) }
    this.byStatus = registry.gauge('switchyard_batches', 'Batches in the database by status (every instance sharing it reports the same)', ['status'])
  }

  item(status: ItemStatus, n = 1): void {
    this.items[status].value += n
  }

  records(list: readonly RecordTotals[]): void {
    const g = this.generations
    for (const r of list) {
      const surface = surfaceOfEndpoint(r.endpoint)
      const family = this.familyOf(r.model) ?? (surface === 2 ? 'anthropic' : 'openai')
      const counts = g.counts(g.row(surface, r.model, family, r.provider), { id: r.keyId, account: r.account })
      const usage = { inputTokens: r.input, outputTokens: r.output, cacheReadTokens: r.cacheRead, cacheWriteTokens: r.cacheWrite, reasoningTokens: r.reasoning ?? undefined }
      g.usage(counts, usage, r.cost)
    }
  }

  /** Batches by status, from the database; none when it cannot answer (no stale figures). */
  async collect(sql: Sql): Promise<void> {
    let rows: { status: string; n: number | string }[] = []
    try {
      rows = await sql.all(BY_STATUS)
    } catch {
      this.byStatus.reset()
      return
    }
    const counts = new Map(rows.map((r) => [r.status, Number(r.n)]))
    this.byStatus.reset()
    for (const s of STATUSES) this.byStatus.set([s], counts.get(s) ?? 0)
  }
}
