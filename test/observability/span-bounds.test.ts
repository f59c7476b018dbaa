// What a span with captured content may weigh, and what the processor holds: each content
// attribute at most MAX_BYTES of UTF-8 and still JSON; the queue and each export bounded in
// bytes as well as in spans. A collector that was down while prompts of 300 KB went by held
// about a GB, and each export was 34 MB, past what collectors take.
import { describe, expect, test } from 'bun:test'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace'
import { capped, MAX_BYTES } from '../../src/tracing/content.ts'
import { droppedSpans } from '../../src/tracing/dropped.ts'
import { BoundedBatchProcessor, MAX_BATCH_BYTES, MAX_QUEUE_BYTES, spanBytes } from '../../src/tracing/processor.ts'

describe('a content attribute', () => {
  test('a long prompt is cut inside its strings: valid JSON of at most MAX_BYTES, multibyte text and surrogate pairs whole', () => {
    const text = 'é'.repeat(100_000) + '😀'.repeat(50_000)
    const out = capped([{ role: 'user', parts: [{ type: 'text', content: text }] }, { role: 'assistant', parts: [{ type: 'text', content: 'short' }] }])
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_BYTES)
    const parsed = JSON.parse(out)
    expect(parsed[0].parts[0].content).toStartWith('éé')
    expect(parsed[0].parts[0].content).toEndWith('…[cut]')
    expect(parsed[0].parts[0].content).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
    expect(parsed[1].parts[0].content).toBe('short')
    // many small parts: as many messages as fit, whole, then a mark
    const many = Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', parts: [{ type: 'text', content: `m${i}` }] }))
    const some = capped(many)
    expect(Buffer.byteLength(some)).toBeLessThanOrEqual(MAX_BYTES)
    const kept = JSON.parse(some)
    expect(kept.at(-1)).toBe('…[cut]')
    expect(kept[0]).toEqual(many[0])
    // what fits is as it was
    expect(capped([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }])).toBe('[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
  })
})

const span = (content: number) => ({ attributes: { 'gen_ai.input.messages': 'x'.repeat(content) } }) as unknown as ReadableSpan

describe('the processor', () => {
  test('each export at most MAX_BATCH_BYTES; past MAX_QUEUE_BYTES a span is dropped and counted, never held', async () => {
    const batches: ReadableSpan[][] = []
    let release: (() => void) | undefined
    // the first export hangs (a collector that is down), so the queue fills
    const exporter: SpanExporter = {
      export(spans: ReadableSpan[], done: (r: ExportResult) => void) {
        batches.push(spans)
        if (batches.length === 1) release = () => done({ code: ExportResultCode.SUCCESS })
        else done({ code: ExportResultCode.SUCCESS })
      },
      shutdown: async () => {},
    }
    const p = new BoundedBatchProcessor(exporter, { maxQueue: 100_000, maxBatch: 512, delayMs: 10 })
    const big = 3 * MAX_BYTES
    const before = droppedSpans()
    const n = Math.ceil((MAX_QUEUE_BYTES + MAX_BATCH_BYTES) / spanBytes(span(big))) + 50
    for (let i = 0; i < n; i++) p.onEnd(span(big))
    expect(droppedSpans() - before).toBeGreaterThan(0)
    release!()
    await p.forceFlush()
    for (const b of batches) expect(b.reduce((sum, s) => sum + spanBytes(s), 0)).toBeLessThanOrEqual(MAX_BATCH_BYTES)
    const exported = batches.reduce((sum, b) => sum + b.length, 0)
    expect(exported + (droppedSpans() - before)).toBe(n)
    expect(exported * spanBytes(span(big))).toBeLessThanOrEqual(MAX_QUEUE_BYTES + MAX_BATCH_BYTES)
    await p.shutdown()
  })
})
