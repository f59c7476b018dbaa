// Everything the request thread counts for GET /metrics, in one registry: generations and
// their upstream calls (through the pipeline's observer), refusals at the front, open streams,
// batches, deployments at rest and the process. Built on the request thread only: a batch
// worker's items are counted where the main thread learns their end.
import type { Catalog } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import type { Sql } from '../db/sql.ts'
import { openStreams } from '../pipeline/sse.ts'
import { bodyBudgetRefusals, bodyBytesHeld } from '../http/body-budget.ts'
import { fetchLimitInForce } from '../runtime/start-env.ts'
import { droppedSpans } from '../tracing/dropped.ts'
import { deploymentKey, type DeploymentHealth } from '../routing/health.ts'
import { BatchSeries } from './batches.ts'
import { render, type Format } from './exposition.ts'
import { GenerationSeries } from './generations.ts'
import { gatewayLabels, OTHER, type Labels } from './labels.ts'
import { MetricsObserver } from './observer.ts'
import { ProcessSeries } from './process.ts'
import { Registry, type Cell, type Gauge } from './registry.ts'
import { UpstreamLoad, type Warn } from './upstream-load.ts'
import { UpstreamSeries } from './upstream.ts'

export interface MetricsDeps {
  config: Pick<Config, 'providers' | 'metrics'>
  catalog: Catalog
  health: DeploymentHealth
  sql: Sql
  /** The fetch client's limit on calls at once (runtime/start-env.ts); this process's when absent. */
  fetchLimit?: number
  /** Where the queueing warning goes; nowhere when absent. */
  warn?: Warn
  /** Requests served from what was taken ahead in Redis (cluster/ahead.ts); absent without Redis. */
  takenAhead?: () => { slots: number; holds: number }
}

export class GatewayMetrics {
  readonly registry = new Registry()
  readonly observer: MetricsObserver
  readonly batches: BatchSeries
  readonly load: UpstreamLoad
  private readonly labels: Labels
  private readonly limited: Record<'key' | 'ip', Cell>
  private readonly refused: Cell
  private readonly streams: Cell
  private readonly spansDropped: Cell
  private readonly bodiesShed: Cell
  private readonly bodyBytes: Cell
  private readonly cooldown: Gauge
  private readonly ahead?: Record<'slot' | 'hold', Cell>
  private readonly process: ProcessSeries

  constructor(private readonly deps: MetricsDeps) {
    const { catalog, config } = deps
    const r = this.registry
    this.labels = gatewayLabels(catalog, Object.keys(config.providers))
    const generations = new GenerationSeries(r, this.labels, config.metrics.perKey)
    const upstream = new UpstreamSeries(r, this.labels.providers)
    this.cooldown = r.gauge('switchyard_provider_cooldown', 'Whether a deployment of the provider rests after failures (1) or not (0)', ['provider'])
    const limited = r.counter('switchyard_rate_limited', 'Requests refused by a rate limit, by the limit that refused (key or ip)', ['scope'])
    this.limited = { key: limited.cell(['key']), ip: limited.cell(['ip']) }
    const refused = (this.refused = r.counter('switchyard_credits_refused', 'Requests refused for lack of credit (402): a key spent at the front, or its requests in progress holding the rest').cell())
    this.streams = r.gauge('switchyard_open_streams', 'Streamed replies open now').cell()
    if (deps.takenAhead) {
      const ahead = r.counter('switchyard_redis_taken_ahead', 'Requests whose rate-limit slot (slot) or credit hold (hold) was taken in Redis ahead of them, so they waited for no round trip', ['kind'])
      this.ahead = { slot: ahead.cell(['slot']), hold: ahead.cell(['hold']) }
    }
    this.bodiesShed = r.counter('switchyard_body_budget_refused', 'Large request bodies refused unread (503) because the bodies being read and parsed already filled limits.body_budget_bytes').cell()
    this.bodyBytes = r.gauge('switchyard_body_bytes_reading', 'Bytes of JSON request bodies being read or parsed now (bounded by limits.body_budget_bytes)').cell()
    this.spansDropped = r.counter('switchyard_spans_dropped', 'Trace spans never exported from the request thread: the queue was full, the collector failed, or they were unsent at shutdown').cell()
    this.batches = new BatchSeries(r, generations, (id) => catalog.resolve(id)?.family)
    this.process = new ProcessSeries(r)
    this.load = new UpstreamLoad(r, deps.fetchLimit ?? fetchLimitInForce(), deps.warn ?? (() => {}))
    this.observer = new MetricsObserver(generations, upstream, (m, u, at) => catalog.cost(m, u, at), refused, this.load)
  }

  rateLimited(scope: 'key' | 'ip'): void {
    this.limited[scope].value++
  }

  /** A key refused at the front for its spend (the pipeline's own refusals come through the observer). */
  creditsRefused(): void {
    this.refused.value++
  }

  /** The registry as text, its scrape-time series read now. */
  async scrape(format: Format): Promise<string> {
    this.streams.value = openStreams()
    this.spansDropped.value = droppedSpans()
    this.bodiesShed.value = bodyBudgetRefusals()
    this.bodyBytes.value = bodyBytesHeld()
    if (this.ahead) {
      const used = this.deps.takenAhead!()
      this.ahead.slot.value = used.slots
      this.ahead.hold.value = used.holds
    }
    this.collectCooldowns()
    this.load.collect()
    this.process.collect()
    await this.batches.collect(this.deps.sql)
    return render(this.registry.families, format)
  }

  /** Each provider: 1 while any of its deployments rests. */
  private collectCooldowns(): void {
    const deployments = this.deps.catalog.list().flatMap((m) => m.deployments)
    const resting = new Set<string>()
    const keys = [...new Set(deployments.map(deploymentKey))]
    for (const d of this.deps.health.snapshot(keys)) if (d.state === 'cooling') resting.add(d.key.slice(0, d.key.indexOf('/')))
    this.cooldown.reset()
    for (const p of this.labels.providers.values) if (p !== OTHER) this.cooldown.set([p], resting.has(p) ? 1 : 0)
  }

  close(): void {
    this.process.close()
  }
}
