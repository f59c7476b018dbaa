// Run in a process of its own by test/providers/anthropic-stream-blocks-kept.test.ts: the heap the
// Claude stream reader holds across 300,000 blocks, the stream still open. In the test runner's
// process other files' servers and timers allocate meanwhile, and a heap measure there is theirs
// as much as the reader's. Prints `{"stopped": bytes, "open": bytes}`.
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import type { SseMessage } from '../../src/providers/sse.ts'

const msg = (type: string, data: Record<string, unknown>): SseMessage => ({ event: type, data: JSON.stringify({ type, ...data }) })
const start = msg('message_start', { message: { id: 'msg_blocks', model: 'claude-sonnet-4-5', usage: { input_tokens: 5, output_tokens: 1 } } })

function heap(): number {
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

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

const stopped = await measure((i) => [msg('content_block_start', { index: i, content_block: { type: 'text', text: '' } }), msg('content_block_stop', { index: i })])
const open = await measure((i) => [msg('content_block_start', { index: i, content_block: { type: 'tool_use', id: `toolu_${i}`, name: 'f', input: {} } })])
console.log(JSON.stringify({ stopped, open }))
