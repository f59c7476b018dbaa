// The trace export worker (exporter.ts): encodes the request thread's span batches (protobuf or
// JSON) and sends them to the collector, at a lower CPU priority than the request thread.
import { ExportResultCode } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import { lowerThreadPriority } from '../lib/priority.ts'
import { otlpExporter, SCOPE, tracingResource, type FromExportWorker, type ToExportWorker } from './exporter.ts'
import { fromWire, type WireSpan } from './wire.ts'

declare const self: Worker

lowerThreadPriority()
let exporter: SpanExporter | undefined
let resource: Resource | undefined
const post = (m: FromExportWorker) => self.postMessage(m)

self.onmessage = (e: MessageEvent<ToExportWorker>) => {
  const m = e.data
  switch (m.type) {
    case 'init':
      exporter = otlpExporter(m.settings)
      resource = tracingResource(m.settings)
      return
    case 'export':
      return exporter!.export(
        (JSON.parse(m.spans) as WireSpan[]).map((w) => fromWire(w, resource!, SCOPE)),
        (r) => post({ type: 'done', id: m.id, ok: r.code === ExportResultCode.SUCCESS, error: r.error?.message }),
      )
    case 'stop':
      return void (exporter?.shutdown() ?? Promise.resolve()).catch(() => {}).finally(() => post({ type: 'stopped' }))
  }
}
