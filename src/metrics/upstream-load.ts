// Upstream calls in flight on this instance, against the fetch client's limit. Past the limit,
// Bun's client holds each further call until one of those open ends (a long stream holds its
// connection for its whole length), so a queue there is made visible: gauges of calls in
// flight and of those past the limit, a counter of calls that started past it, and a warning
// at most once a minute while it happens. Interactive calls are counted from the pipeline's
// observer (from the call until its generation ends); batch items by the scheduler's places
// in use, since each holds at most one call.
import type { Cell, Registry } from './registry.ts'

const WARN_EVERY_MS = 60_000

export type Warn = (message: string, fields: Record<string, unknown>) => void

export class UpstreamLoad {
  /** Interactive calls open now. */
  private interactive = 0
  private lastWarned = -Infinity
  /** Batch items running now; the batch scheduler is built after the metrics. */
  batchItems: () => number = () => 0
  private readonly inFlightCell: Cell
  private readonly queuedCell: Cell
  private readonly queuedCalls: Cell

  constructor(
    registry: Registry,
    readonly limit: number,
    private readonly warn: Warn,
    private readonly now: () => number = Date.now,
  ) {
    this.inFlightCell = registry.gauge('switchyard_upstream_in_flight', 'Upstream calls open now on this instance (interactive, and batch items running)').cell()
    this.queuedCell = registry.gauge('switchyard_upstream_queued', "Upstream calls past the fetch client's limit now: they wait for an open one to end").cell()
    this.queuedCalls = registry.counter('switchyard_upstream_queued_calls', "Interactive upstream calls that started past the fetch client's limit and waited in it").cell()
  }

  get inFlight(): number {
    return this.interactive + this.batchItems()
  }

  /** An interactive call starts. */
  opened(): void {
    this.interactive++
    const n = this.inFlight
    if (n <= this.limit) return
    this.queuedCalls.value++
    const t = this.now()
    if (t - this.lastWarned < WARN_EVERY_MS) return
    this.lastWarned = t
    this.warn('upstream calls are queueing: more are open than the fetch client lets run at once; raise server.max_upstream_connections', {
      in_flight: n,
      limit: this.limit,
    })
  }

  /** An interactive call ended (failed, or its generation is over). */
  closed(): void {
    if (this.interactive > 0) this.interactive--
  }

  /** Scrape-time gauges. */
  collect(): void {
    const n = this.inFlight
    this.inFlightCell.value = n
    this.queuedCell.value = Math.max(0, n - this.limit)
  }
}
