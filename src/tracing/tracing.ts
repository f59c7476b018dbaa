// Traces of this thread (the request thread, or a batch worker: each exports its own), when
// OTEL_EXPORTER_OTLP_ENDPOINT (or the traces one) is set: OpenTelemetry's SDK makes the spans,
// its OTLP/HTTP exporter sends them (protobuf or JSON; from a worker of its own for the request
// thread: exporter.ts), a bounded queue (processor.ts) sits between. No provider is registered globally: the spans are the gateway's own, passed their
// parent explicitly, so two gateways in one process (tests) never share a tracer.
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Context, type Span } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, RandomIdGenerator, SamplingDecision, TraceIdRatioBasedSampler, TracerProvider, type IdGenerator, type Sampler } from '@opentelemetry/sdk-trace'
import { isMainThread } from 'node:worker_threads'
import type { Catalog } from '../config/catalog.ts'
import type { ProviderConfig } from '../config/providers.ts'
import type { TracingSettings } from '../config/tracing.ts'
import { maskUrl } from '../config/mask-url.ts'
import type { Logger } from '../http/log.ts'
import type { RequestContext } from '../pipeline/context.ts'
import type { GenerationObserver } from '../pipeline/observe.ts'
import { batchIds, type EndedBatch, batchAttributes } from './batch.ts'
import { createExporter, SCOPE, tracingResource } from './exporter.ts'
import { tracingObserver } from './observer.ts'
import { BoundedBatchProcessor } from './processor.ts'

export interface Tracing {
  observer: GenerationObserver
  /** A batch ended: its span, which its items' spans are under (batch.ts). */
  batchEnded(b: EndedBatch): void
  /** Exports what is queued (for at most a moment), then stops. */
  close(): Promise<void>
}

export interface TracingDeps {
  catalog: Pick<Catalog, 'cost'>
  providers: Record<string, ProviderConfig>
  log: Logger
}

function samplerOf(s: TracingSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(s.ratio)
  switch (s.sampler) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio()
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() })
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/** Random ids, except the one span whose ids are given (a batch's, derived from its id). */
class Ids implements IdGenerator {
  private readonly random = new RandomIdGenerator()
  given?: { traceId: string; spanId: string }
  generateTraceId = () => this.given?.traceId ?? this.random.generateTraceId()
  generateSpanId = () => this.given?.spanId ?? this.random.generateSpanId()
}

export function startTracing(settings: TracingSettings, deps: TracingDeps): Tracing | undefined {
  if (!settings.url) return undefined
  const { log } = deps
  const exporter = createExporter(settings, isMainThread, (error) => log.warn('traces: the export worker could not start; spans are encoded on this thread', { error }))
  const processor = new BoundedBatchProcessor(exporter, {
    maxQueue: settings.maxQueue,
    maxBatch: settings.maxBatch,
    delayMs: settings.delayMs,
    onHealth: (ok, error) =>
      ok
        ? log.info('traces: exporting again', { url: maskUrl(settings.url!) })
        : log.warn('traces: export failed; spans are dropped (and counted) until the collector answers', { url: maskUrl(settings.url!), error }),
  })
  const sampler = samplerOf(settings)
  const ids = new Ids()
  const provider = new TracerProvider({
    resource: tracingResource(settings),
    sampler,
    idGenerator: ids,
    spanProcessors: [processor],
  })
  const tracer = provider.getTracer(SCOPE.name, SCOPE.version)
  const propagator = new W3CTraceContextPropagator()

  /** A batch's context, as its items' spans see it: its derived ids, sampled as its own span is. */
  const batches = new Map<string, Context>()
  const batchContext = (batchId: string): Context => {
    let c = batches.get(batchId)
    if (!c) {
      const { traceId, spanId } = batchIds(batchId)
      const sampled = sampler.shouldSample(ROOT_CONTEXT, traceId, 'batch', SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED
      c = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true })
      if (batches.size >= 256) batches.clear()
      batches.set(batchId, c)
    }
    return c
  }

  const parentOf = (rc: RequestContext): Context => {
    if (rc.batchId) return batchContext(rc.batchId)
    if (!rc.traceparent) return ROOT_CONTEXT
    return propagator.extract(ROOT_CONTEXT, { traceparent: rc.traceparent, tracestate: rc.tracestate }, defaultTextMapGetter)
  }
  const headersOf = (span: Span): Record<string, string> => {
    const headers: Record<string, string> = {}
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter)
    return headers
  }

  return {
    observer: tracingObserver({ tracer, catalog: deps.catalog, providers: deps.providers, captureContent: settings.captureContent, parentOf, headersOf }),
    batchEnded(b) {
      ids.given = batchIds(b.id)
      try {
        tracer.startSpan(`batch ${b.endpoint}`, { kind: SpanKind.INTERNAL, startTime: b.createdAt, attributes: batchAttributes(b) }, ROOT_CONTEXT).end()
      } finally {
        ids.given = undefined
      }
    },
    close: () => processor.shutdown(),
  }
}
