// The SSE reader (framing edge cases) and the stream fold.
import { describe, expect, test } from 'bun:test'
import { collect } from '../../src/ir/collect.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { parseSse } from '../../src/providers/sse.ts'
import { UpstreamError } from '../../src/providers/types.ts'

function body(pieces: string[]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  const enc = new TextEncoder()
  let i = 0
  let cancelled = false
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < pieces.length) c.enqueue(enc.encode(pieces[i++]))
      else c.close()
    },
    cancel() {
      cancelled = true
    },
  })
  return { stream, cancelled: () => cancelled }
}

async function all(pieces: string[]) {
  const out = []
  for await (const m of parseSse(body(pieces).stream)) out.push(m)
  return out
}

describe('parseSse', () => {
  test('split chunks, CRLF, comments, multi-line data, event names', async () => {
    expect(await all(['event: mess', 'age_start\r\ndata: {"a":', '1}\r\n\r\n: ping\n\n', 'data: line1\ndata: line2\n\n'])).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { data: 'line1\nline2' },
    ])
  })

  test('a multi-byte character split across chunks survives', async () => {
    const bytes = new TextEncoder().encode('data: café ☕\n\n')
    const s = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 10))
        c.enqueue(bytes.slice(10))
        c.close()
      },
    })
    const out = []
    for await (const m of parseSse(s)) out.push(m)
    expect(out).toEqual([{ data: 'café ☕' }])
  })

  test('an unterminated last event is still delivered', async () => {
    expect(await all(['data: one\n\nevent: message_stop\ndata: {"type":"message_stop"}'])).toEqual([
      { data: 'one' },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ])
  })

  test('a stream past its bound, or an event that never ends, is refused with a 502 that says which, and the body is cancelled', async () => {
    const limits = { stream: 1000, event: 300 }
    const read = async (pieces: string[]) => {
      const b = body(pieces)
      const got: unknown[] = []
      const err = await (async () => {
        for await (const m of parseSse(b.stream, undefined, limits)) got.push(m)
      })().catch((e) => e)
      return { got, err, cancelled: b.cancelled() }
    }
    // ended events add up past the stream's bound: those before it are delivered
    const many = await read(Array.from({ length: 20 }, (_, i) => `data: ${i} ${'x'.repeat(90)}\n\n`))
    expect(many.got.length).toBe(10)
    expect(many.err).toBeInstanceOf(UpstreamError)
    expect(many.err.status).toBe(502)
    expect(many.err.message).toBe('upstream sent a stream of more than 1000 bytes')
    expect(many.cancelled).toBe(true)
    // one event that goes on and on, in reads of its own
    const endless = await read(['data: 1\n\n', ...Array.from({ length: 5 }, () => 'data: ' + 'y'.repeat(100) + '\n')])
    expect(endless.got).toEqual([{ data: '1' }])
    expect(endless.err.message).toBe('upstream sent an SSE event of more than 300 bytes')
    // within both, nothing changes
    expect((await read(['data: a\n\n', 'data: b\n\n'])).got).toEqual([{ data: 'a' }, { data: 'b' }])
  })

  test('stopping early cancels the body', async () => {
    const b = body(['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n'])
    for await (const m of parseSse(b.stream)) if (m.data === '1') break
    expect(b.cancelled()).toBe(true)
  })
})

const from = (events: StreamEvent[]) => collect((async function* () { yield* events })())
const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }

describe('collect', () => {
  test('parts in order: reasoning closed by its signature, redacted, text, interleaved tool calls', async () => {
    const r = await from([
      { type: 'start', id: 'x', model: 'm', created: 5 },
      { type: 'reasoning-delta', text: 'think ' },
      { type: 'reasoning-delta', text: 'hard' },
      { type: 'reasoning-signature', signature: 'SIG' },
      { type: 'reasoning-redacted', data: 'RED' },
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'tool-input-start', index: 0, id: 't0', name: 'f' },
      { type: 'tool-input-start', index: 1, id: 't1', name: 'g' },
      { type: 'tool-input-delta', index: 1, delta: '{"y"' },
      { type: 'tool-input-delta', index: 0, delta: '{"x":1}' },
      { type: 'tool-input-delta', index: 1, delta: ':2}' },
      { type: 'tool-input-end', index: 0 },
      { type: 'tool-input-end', index: 1 },
      { type: 'usage', usage: { ...usage, outputTokens: 1 } },
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ])
    expect(r).toEqual({
      id: 'x',
      model: 'm',
      created: 5,
      content: [
        { type: 'reasoning', text: 'think hard', signature: 'SIG' },
        { type: 'reasoning', text: '', redacted: 'RED' },
        { type: 'text', text: 'ab' },
        { type: 'tool-call', id: 't0', name: 'f', arguments: '{"x":1}' },
        { type: 'tool-call', id: 't1', name: 'g', arguments: '{"y":2}' },
      ],
      finish: { reason: 'tool_calls' },
      usage,
    })
  })

  test('an error event throws it; a stream without finish is a 502', async () => {
    const err = await from([{ type: 'text-delta', text: 'a' }, { type: 'error', error: { status: 503, message: 'Overloaded', type: 'overloaded_error' } }]).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.info).toMatchObject({ status: 503, message: 'Overloaded', type: 'overloaded_error' })
    const cut = await from([{ type: 'text-delta', text: 'a' }]).catch((e) => e)
    expect(cut.status).toBe(502)
  })
})
