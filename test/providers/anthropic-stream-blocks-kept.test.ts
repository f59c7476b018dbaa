// What the stream reader keeps per content block is bounded, as the block order's entries are
// (block-order.ts): a server that starts and stops blocks without end, each at an index of its
// own, or starts them and never stops them, made the reader keep one block for each index for
// the whole stream (up to the 1 GiB a stream may send: millions of them).
import { expect, test } from 'bun:test'
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import type { SseMessage } from '../../src/providers/sse.ts'

const msg = (type: string, data: Record<string, unknown>): SseMessage => ({ event: type, data: JSON.stringify({ type, ...data }) })
const start = msg('message_start', { message: { id: 'msg_blocks', model: 'claude-sonnet-4-5', usage: { input_tokens: 5, output_tokens: 1 } } })

function heap(): number {
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

test('blocks started and stopped, each at an index of its own: the reader keeps none of them once stopped', async () => {
  const held = await measure((i) => [msg('content_block_start', { index: i, content_block: { type: 'text', text: '' } }), msg('content_block_stop', { index: i })])
  expect(held).toBeLessThan(8 * 1024 * 1024)
})

test('blocks started and never stopped, each at an index of its own: a bounded number is kept', async () => {
  const held = await measure((i) => [msg('content_block_start', { index: i, content_block: { type: 'tool_use', id: `toolu_${i}`, name: 'f', input: {} } })])
  expect(held).toBeLessThan(8 * 1024 * 1024)
})

/** Heap held by the reader across 300,000 blocks, the stream still open (no message_stop yet). */
async function measure(shape: (i: number) => SseMessage[]): Promise<number> {
  const FIRST = 10_000
  const MORE = 300_000
  let resume!: () => void
  let pausedAt!: () => void
  let waiting = new Promise<void>((r) => (pausedAt = r))
  async function* wire(): AsyncGenerator<SseMessage> {
    yield start
    for (let i = 0; i < FIRST + MORE; i++) {
      if (i === FIRST || i === FIRST + MORE - 1) {
        const go = new Promise<void>((r) => (resume = r))
        pausedAt()
        await go
      }
      yield* shape(i)
    }
    yield msg('message_stop', {})
  }
  const reading = (async () => {
    for await (const _ of anthropicEvents(wire())) {
      // events are let go as they come, as a client's stream would
    }
  })()
  await waiting
  const before = heap()
  waiting = new Promise<void>((r) => (pausedAt = r))
  resume()
  await waiting
  const after = heap()
  resume()
  await reading
  return after - before
}
