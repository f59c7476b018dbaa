// Ended spans wait here and go to the exporter in batches, one export at a time, off the
// request's path. The queue is bounded, in spans and in bytes (spans that carry prompts are
// large): past it a span is dropped and counted, never held, so a collector that is down or slow
// costs memory up to the bound and a counter, nothing more. A batch is bounded the same way, so
// that an export stays one a collector takes (theirs refuse bodies past 20 MiB or so).
// (The SDK's BatchSpanProcessor also bounds and drops, but keeps its count to itself.)
import type { Context } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace'
import { countDropped } from './dropped.ts'

export interface BoundedOptions {
  maxQueue: number
  maxBatch: number
  delayMs: number
  /** Told when exports start failing and when they work again (each once per change). */
  onHealth?: (ok: boolean, error?: string) => void
}

/** Bytes of spans queued, and of one export, at most (a span's own fields, without its attributes, counted as SPAN_BYTES). */
export const MAX_QUEUE_BYTES = 64 * 1024 * 1024
export const MAX_BATCH_BYTES = 8 * 1024 * 1024
const SPAN_BYTES = 512

/** About what a span weighs in an export: its long strings (captured content) in UTF-8. */
export function spanBytes(span: ReadableSpan): number {
  let n = SPAN_BYTES
  for (const k in span.attributes) {
    const v = span.attributes[k]
    n += k.length + (typeof v === 'string' ? (v.length > 1024 ? Buffer.byteLength(v) : v.length) : 16)
  }
  return n
}

export class BoundedBatchProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = []
  /** Each queued span's weight, in the queue's order, and their sum. */
  private weights: number[] = []
  private queuedBytes = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private exporting: Promise<void> | undefined
  /** Spans of the export on its way. */
  private inFlight = 0
  private healthy = true
  private closed = false

  constructor(private readonly exporter: SpanExporter, private readonly opts: BoundedOptions) {}

  onStart(_span: Span, _parent: Context): void {}

  onEnd(span: ReadableSpan): void {
    const bytes = spanBytes(span)
    if (this.closed || this.queue.length >= this.opts.maxQueue || this.queuedBytes + bytes > MAX_QUEUE_BYTES) {
      countDropped(1)
      return
    }
    this.queue.push(span)
    this.weights.push(bytes)
    this.queuedBytes += bytes
    if (this.queue.length >= this.opts.maxBatch || this.queuedBytes >= MAX_BATCH_BYTES) this.kick()
    else if (this.timer === undefined && this.exporting === undefined) this.schedule()
  }

  private schedule() {
    this.timer = setTimeout(() => this.kick(), this.opts.delayMs)
    this.timer.unref?.()
  }

  /** One batch out now, unless one is on its way (its end starts the next). */
  private kick(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.exporting || this.queue.length === 0) return
    // as many as the batch holds, in count and in bytes (one at least)
    let n = 0
    let bytes = 0
    while (n < this.queue.length && n < this.opts.maxBatch && (n === 0 || bytes + this.weights[n]! <= MAX_BATCH_BYTES)) bytes += this.weights[n++]!
    const batch = this.queue.splice(0, n)
    this.weights.splice(0, n)
    this.queuedBytes -= bytes
    this.exporting = this.send(batch).then(() => {
      this.exporting = undefined
      if (this.queue.length >= this.opts.maxBatch || this.queuedBytes >= MAX_BATCH_BYTES) this.kick()
      else if (this.queue.length > 0 && !this.closed) this.schedule()
    })
  }

  private send(batch: ReadableSpan[]): Promise<void> {
    this.inFlight = batch.length
    return new Promise<void>((resolve) => {
      const done = (r: ExportResult) => {
        const ok = r.code === ExportResultCode.SUCCESS
        if (!ok) countDropped(this.inFlight)
        this.inFlight = 0
        if (ok !== this.healthy) {
          this.healthy = ok
          this.opts.onHealth?.(ok, r.error?.message)
        }
        resolve()
      }
      try {
        this.exporter.export(batch, done)
      } catch (e) {
        done({ code: ExportResultCode.FAILED, error: e as Error })
      }
    })
  }

  /** Everything queued, exported (or failed and counted). */
  async forceFlush(): Promise<void> {
    for (;;) {
      if (this.exporting) await this.exporting
      else if (this.queue.length > 0) this.kick()
      else return
    }
  }

  /** Flushes for at most `withinMs`; what has not gone by then (an export on its way included) is counted as dropped. */
  async shutdown(withinMs = 2000): Promise<void> {
    this.closed = true
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([this.forceFlush(), new Promise<void>((r) => (timer = setTimeout(r, withinMs)))])
    clearTimeout(timer)
    countDropped(this.queue.length + this.inFlight)
    this.queue = []
    this.weights = []
    this.queuedBytes = 0
    this.inFlight = 0
    await this.exporter.shutdown().catch(() => {})
  }
}
