// Ended spans wait here and go to the exporter in batches, one export at a time, off the
// request's path. The queue is bounded: past it a span is dropped and counted, never held, so a
// collector that is down or slow costs memory up to the bound and a counter, nothing more.
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

export class BoundedBatchProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private exporting: Promise<void> | undefined
  /** Spans of the export on its way. */
  private inFlight = 0
  private healthy = true
  private closed = false

  constructor(private readonly exporter: SpanExporter, private readonly opts: BoundedOptions) {}

  onStart(_span: Span, _parent: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || this.queue.length >= this.opts.maxQueue) {
      countDropped(1)
      return
    }
    this.queue.push(span)
    if (this.queue.length >= this.opts.maxBatch) this.kick()
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
    const batch = this.queue.splice(0, this.opts.maxBatch)
    this.exporting = this.send(batch).then(() => {
      this.exporting = undefined
      if (this.queue.length >= this.opts.maxBatch) this.kick()
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
    this.inFlight = 0
    await this.exporter.shutdown().catch(() => {})
  }
}
