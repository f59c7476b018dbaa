// An ended span as plain data, to cross to the export worker (export-worker.ts), and back into
// the shape the OTLP serializers read. Only what the gateway's spans use crosses: no events
// or links (it records neither); the resource and scope are the worker's own, set once.
import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api'
import { TraceState } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan } from '@opentelemetry/sdk-trace'

export interface WireSpan {
  name: string
  kind: SpanKind
  context: Omit<SpanContext, 'traceState'>
  /** The trace state as its header text (an object would not keep its methods across). */
  traceState?: string
  parent?: SpanContext
  start: HrTime
  end: HrTime
  duration: HrTime
  status: SpanStatus
  attributes: Attributes
  droppedAttributes: number
}

export function toWire(s: ReadableSpan): WireSpan {
  const c = s.spanContext()
  const p = s.parentSpanContext
  return {
    name: s.name,
    kind: s.kind,
    context: { traceId: c.traceId, spanId: c.spanId, traceFlags: c.traceFlags },
    traceState: c.traceState?.serialize(),
    parent: p && { traceId: p.traceId, spanId: p.spanId, traceFlags: p.traceFlags, isRemote: p.isRemote },
    start: s.startTime,
    end: s.endTime,
    duration: s.duration,
    status: s.status,
    attributes: s.attributes,
    droppedAttributes: s.droppedAttributesCount,
  }
}

export function fromWire(w: WireSpan, resource: Resource, scope: { name: string; version?: string }): ReadableSpan {
  const context: SpanContext = { ...w.context, traceState: w.traceState === undefined ? undefined : new TraceState(w.traceState) }
  return {
    name: w.name,
    kind: w.kind,
    spanContext: () => context,
    parentSpanContext: w.parent,
    startTime: w.start,
    endTime: w.end,
    duration: w.duration,
    status: w.status,
    attributes: w.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: w.droppedAttributes,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  }
}
