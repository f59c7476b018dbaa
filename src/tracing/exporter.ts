// Where spans are serialized and sent: OpenTelemetry's OTLP/HTTP exporter (protobuf or JSON).
// On the request thread it runs in a worker of its own (export-worker.ts), so encoding a batch
// (several ms for 512 spans) never holds the loop that answers requests; the spans cross as
// plain data (wire.ts). A batch worker thread, already off the request path, exports itself,
// and so does the request thread when the worker cannot start.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import pkg from '../../package.json' with { type: 'json' }
import type { TracingSettings } from '../config/tracing.ts'
import { startWorker } from '../lib/worker-url.ts'
import { toWire } from './wire.ts'

export const SCOPE = { name: 'switchyard', version: pkg.version }

export function tracingResource(s: TracingSettings): Resource {
  return resourceFromAttributes({ ...s.resource, [ATTR_SERVICE_NAME]: s.serviceName, [ATTR_SERVICE_VERSION]: pkg.version })
}

/** The exporter itself, on this thread. */
export function otlpExporter(s: TracingSettings): SpanExporter {
  const options = { url: s.url!, headers: s.headers, timeoutMillis: s.timeoutMs }
  return s.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options)
}

export type ToExportWorker = { type: 'init'; settings: TracingSettings } | { type: 'export'; id: number; spans: string } | { type: 'stop' }
export type FromExportWorker = { type: 'done'; id: number; ok: boolean; error?: string } | { type: 'stopped' }

/** Hands each batch to the export worker and reports what it answered. */
class WorkerExporter implements SpanExporter {
  private next = 1
  private readonly waiting = new Map<number, (r: ExportResult) => void>()
  private stopped?: () => void

  constructor(private readonly worker: Worker) {
    worker.onmessage = (e: MessageEvent<FromExportWorker>) => {
      const m = e.data
      if (m.type === 'stopped') return this.stopped?.()
      this.waiting.get(m.id)?.({ code: m.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED, error: m.error === undefined ? undefined : new Error(m.error) })
      this.waiting.delete(m.id)
    }
    // a worker that dies fails what it held (counted as dropped), and every batch after it
    worker.onerror = () => this.failAll('the trace export worker stopped')
    ;(worker as unknown as { unref(): void }).unref()
  }

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    const id = this.next++
    this.waiting.set(id, done)
    this.worker.postMessage({ type: 'export', id, spans: JSON.stringify(spans.map(toWire)) } satisfies ToExportWorker)
  }

  private failAll(error: string) {
    for (const done of this.waiting.values()) done({ code: ExportResultCode.FAILED, error: new Error(error) })
    this.waiting.clear()
  }

  async shutdown(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([new Promise<void>((r) => ((this.stopped = r), this.worker.postMessage({ type: 'stop' } satisfies ToExportWorker))), new Promise<void>((r) => (timer = setTimeout(r, 2000)))])
    clearTimeout(timer)
    this.failAll('shut down')
    this.worker.terminate()
  }

  forceFlush = async () => {}
}

/** `offThread`: in a worker of its own (the request thread); otherwise, or when one cannot start, here. */
export function createExporter(s: TracingSettings, offThread: boolean, onFallback: (error: string) => void): SpanExporter {
  if (!offThread) return otlpExporter(s)
  try {
    const worker = startWorker(import.meta.url, 'tracing/export-worker.ts')
    worker.postMessage({ type: 'init', settings: s } satisfies ToExportWorker)
    return new WorkerExporter(worker)
  } catch (e) {
    onFallback(String(e))
    return otlpExporter(s)
  }
}
