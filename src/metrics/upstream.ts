// The series of upstream calls, by provider: each call's status (200 once the upstream
// accepted it; a failure before its first byte its error status) and time to that answer,
// and the failovers away from a provider. Interactive requests only: batch items run in
// worker threads, with retries of their own.
import type { Cell, Counter, Histogram, HistogramCell, Registry } from './registry.ts'
import { LATENCY_BUCKETS } from './generations.ts'
import { statusCode, statusLabel, type LabelSet } from './labels.ts'

export class UpstreamSeries {
  private readonly calls: Counter
  private readonly byStatus: Map<number, Cell>[]
  private readonly durations: (HistogramCell | undefined)[]
  private readonly failovers: (Cell | undefined)[]
  private readonly duration: Histogram
  private readonly failed: Counter

  constructor(registry: Registry, private readonly providers: LabelSet) {
    this.calls = registry.counter('switchyard_upstream_requests', 'Upstream sends of interactive requests, by provider and HTTP status (200: accepted; a call sent again counts each send)', ['provider', 'status'])
    this.duration = registry.histogram('switchyard_upstream_duration_seconds', "Time from an upstream call to its answer's first byte (or its failure)", ['provider'], LATENCY_BUCKETS)
    this.failed = registry.counter('switchyard_failovers', 'Requests moved on to another deployment or model after a failure, by the provider that failed', ['provider'])
    this.byStatus = providers.values.map(() => new Map())
    // each configured provider's series from the start (a rate is then seen from its first call); `other` once used
    this.durations = providers.values.map((p, i) => (i === 0 ? undefined : this.duration.cell([p])))
    this.failovers = providers.values.map((p, i) => (i === 0 ? undefined : this.failed.cell([p])))
  }

  provider(id: string): number {
    return this.providers.indexOf(id)
  }

  ended(provider: number, status: number, ms: number): void {
    const code = statusCode(status)
    const m = this.byStatus[provider]!
    let cell = m.get(code)
    if (!cell) m.set(code, (cell = this.calls.cell([this.providers.values[provider]!, statusLabel(code)])))
    cell.value++
    const d = (this.durations[provider] ??= this.duration.cell([this.providers.values[provider]!]))
    this.duration.observe(d, Math.max(0, ms) / 1000)
  }

  failover(provider: number): void {
    ;(this.failovers[provider] ??= this.failed.cell([this.providers.values[provider]!])).value++
  }
}
