// The metrics' watch on each generation (pipeline/observe.ts): its upstream calls as they end, a
// failover when a call follows one that failed, and at its record the request, its timings,
// tokens and cost, priced as the recorder prices the record, so the counters add up to what the
// usage report says. A refusal (402, 507) counts as a request with no record. Calls are counted
// as they end, not from the record's list: a record made while its call returns (a responses
// reply the tap completes) is watched before that call is added to it.
import type { CatalogModel } from '../config/catalog.ts'
import { MOCK_ID } from '../config/providers.ts'
import type { Surface } from '../config/models.ts'
import { costsNothing, type GenerationInput } from '../generations/types.ts'
import type { Usage } from '../ir/types.ts'
import type { AttemptWatch, GenerationObserver, GenerationStart, GenerationWatch, UpstreamCall } from '../pipeline/observe.ts'
import type { GenerationSeries } from './generations.ts'
import type { Cell } from './registry.ts'
import type { UpstreamLoad } from './upstream-load.ts'
import type { UpstreamSeries } from './upstream.ts'

export type Price = (model: CatalogModel, usage: Usage, at: Date) => number | null

const SURFACE_INDEX: Record<Surface, number> = { chat: 0, responses: 1, messages: 2 }

export class MetricsObserver implements GenerationObserver {
  constructor(
    readonly generations: GenerationSeries,
    readonly upstream: UpstreamSeries,
    private readonly price: Price,
    readonly creditsRefused: Cell,
    readonly load: UpstreamLoad,
  ) {}

  begin(start: GenerationStart): GenerationWatch {
    return new Watch(this, start)
  }

  /** The record's price as the recorder takes it (a cache hit costs nothing); null when unpriced (or the price failed). */
  costOf(record: GenerationInput): number | null {
    if (costsNothing(record)) return 0
    try {
      return this.price(record.model, record.usage, new Date(record.createdAt))
    } catch {
      return null
    }
  }
}

class Watch implements GenerationWatch {
  /** The provider index of the last call while it stands failed; -1 when none failed. */
  failed = -1
  /** A call of this generation counts as open in the upstream load. */
  open = false

  constructor(
    readonly o: MetricsObserver,
    private readonly start: GenerationStart,
  ) {}

  attempt(call: UpstreamCall): AttemptWatch {
    const upstream = this.o.upstream
    if (this.failed >= 0) upstream.failover(this.failed)
    this.failed = -1
    // the mock answers in the gateway: no connection is held
    if (call.provider !== MOCK_ID && !this.open) {
      this.open = true
      this.o.load.opened()
    }
    return new Attempt(this, upstream.provider(call.provider))
  }

  /** The generation's call holds no connection any more. */
  release(): void {
    if (!this.open) return
    this.open = false
    this.o.load.closed()
  }

  end(record: GenerationInput): void {
    this.release()
    const g = this.o.generations
    const m = record.model
    const row = g.row(SURFACE_INDEX[this.start.surface], m.id, m.family, record.provider ?? m.deployments[0]?.provider)
    const counts = g.counts(row, record.apiKey)
    g.request(counts, record.httpStatus ?? 200)
    g.timing(row, record.latencyMs, record.stream ? record.ttftMs : null)
    g.usage(counts, record.usage, this.o.costOf(record))
  }

  refused(status: number): void {
    this.release()
    const g = this.o.generations
    const m = this.start.model
    const row = g.row(SURFACE_INDEX[this.start.surface], m.id, m.family, m.deployments[0]?.provider)
    g.request(g.counts(row, this.start.rc.apiKey), status)
    if (status === 402) this.o.creditsRefused.value++
  }
}

class Attempt implements AttemptWatch {
  private t0 = performance.now()

  constructor(
    private readonly watch: Watch,
    private readonly provider: number,
  ) {}

  /** A failed send is an upstream call of its own, by its status; the next one's time starts now. */
  resent(status: number, _error: string, ms: number): void {
    this.watch.o.upstream.ended(this.provider, status, ms)
    this.t0 = performance.now()
  }

  end(status: number, error?: string, upstream?: { cached?: boolean }): void {
    // an answer from the response cache is no upstream call: not counted or timed as one, and
    // it holds no connection
    if (upstream?.cached) return this.watch.release()
    this.watch.o.upstream.ended(this.provider, status, performance.now() - this.t0)
    if (error !== undefined) this.watch.failed = this.provider
    if (status !== 200 || error !== undefined) this.watch.release()
  }
}
