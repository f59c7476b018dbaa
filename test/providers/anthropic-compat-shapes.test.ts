// Servers of the Messages wire other than Anthropic's (the Anthropic-format endpoints of other
// model vendors, proxies) send some things in other shapes: counts as strings, a ping with no
// JSON, no message_start or two of them, a call without an id or with its input as JSON text, a
// message whose stop_reason is null, content as a plain string. Each is read as Anthropic's own
// shape would be, streamed and not: before, counts were joined as text, the stream failed, calls
// could not be named in their results, and the chat and responses surfaces disagreed on the end.
import { describe, expect, test } from 'bun:test'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import type { GenerationResponse, StreamEvent } from '../../src/ir/types.ts'
import { fromAnthropicMessage } from '../../src/providers/anthropic/response.ts'
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import { readJson } from '../../src/providers/http.ts'
import { parseSse } from '../../src/providers/sse.ts'

type Obj = Record<string, unknown>
const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const start = (usage: Obj = { input_tokens: 10, output_tokens: 1 }) => ev('message_start', { message: { id: 'msg_c1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage } })
const text = (index: number, t: string) => ev('content_block_start', { index, content_block: { type: 'text', text: '' } }) + ev('content_block_delta', { index, delta: { type: 'text_delta', text: t } }) + ev('content_block_stop', { index })
const end = (stop: string | null, usage: Obj = { output_tokens: 5 }) => ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage }) + ev('message_stop', {})

async function events(sse: string): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of withBlocks(anthropicEvents(parseSse(new Response(sse).body!)))) out.push(e)
  return out
}
const streamed = async (sse: string): Promise<GenerationResponse> => collect((async function* () { yield* await events(sse) })())

describe('what other servers of the Messages wire send, read as Anthropic would send it', () => {
  test('counts sent as strings of digits are numbers', async () => {
    const r = await streamed(start({ input_tokens: '10', output_tokens: '1', cache_read_input_tokens: '0' }) + text(0, 'Hi') + end('end_turn', { output_tokens: '5' }))
    expect(r.usage).toMatchObject({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0 })
    expect(fromAnthropicMessage({ content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', usage: { input_tokens: '10', output_tokens: '5' } } as never).usage).toMatchObject({ inputTokens: 10, outputTokens: 5 })
  })

  test('a ping whatever its data, and an event with none, are skipped', async () => {
    const r = await streamed(start() + 'event: ping\ndata: ping\n\n' + text(0, 'Hi') + 'event: ping\ndata:\n\n' + 'data: null\n\n' + end('end_turn'))
    expect(r.content).toEqual([{ type: 'text', text: 'Hi' }])
    expect(r.finish.reason).toBe('stop')
  })

  test('no message_start: the reply starts at its first event; a second one is ignored', async () => {
    const evs = await events(text(0, 'Hi') + end('end_turn'))
    expect(evs[0]!.type).toBe('start')
    const twice = await events(start() + text(0, 'a') + start() + text(1, 'b') + end('end_turn'))
    expect(twice.filter((e) => e.type === 'start')).toHaveLength(1)
    expect((await collect((async function* () { yield* twice })())).content).toEqual([{ type: 'text', text: 'ab' }])
  })

  test('the reply begins at its first output: an event that says nothing, then an error, is still a failure before the reply', async () => {
    for (const before of ['data: {}\n\n', 'event: keepalive\ndata: {"type":"keepalive"}\n\n', ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })]) {
      const evs = await events(before + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n')
      expect(evs.map((e) => e.type)).toEqual(['error'])
    }
    // a message_start that comes after the reply began still says the prompt's count
    const late = await streamed('data: {}\n\n' + text(0, 'Hi') + start({ input_tokens: 377, output_tokens: 1 }) + end('end_turn'))
    expect(late.usage.inputTokens).toBe(377)
  })

  test('a delta that carries usage alone leaves the stop reason an earlier one gave; a stop sequence with a null reason is a stop', async () => {
    const r = await streamed(start() + text(0, 'Hi') + ev('message_delta', { delta: { stop_reason: 'max_tokens' } }) + ev('message_delta', { usage: { output_tokens: 9 } }) + ev('message_stop', {}))
    expect(r.finish.reason).toBe('length')
    expect(r.usage.outputTokens).toBe(9)
    const seq = await streamed(start() + text(0, 'Hi') + ev('message_delta', { delta: { stop_reason: null, stop_sequence: 'END' } }) + ev('message_stop', {}))
    expect(seq.finish).toMatchObject({ reason: 'stop', stopSequence: 'END' })
  })

  test('a negative or fractional count is none', () => {
    expect(fromAnthropicMessage({ content: [], stop_reason: 'end_turn', usage: { input_tokens: -1000000, output_tokens: 2.5 } } as never).usage).toMatchObject({ inputTokens: 0, outputTokens: 0 })
  })

  test('a call without an id is given one of its own; an input sent as JSON text is the arguments', async () => {
    const call = (index: number, input: unknown, id?: string) => ev('content_block_start', { index, content_block: { type: 'tool_use', ...(id ? { id } : {}), name: 'get_weather', input } }) + ev('content_block_stop', { index })
    const r = await streamed(start() + call(0, '{"location":"Paris"}') + call(1, { location: 'Tokyo' }) + call(2, '', 'toolu_x') + end('tool_use'))
    const calls = r.content.filter((p) => p.type === 'tool-call') as { id: string; arguments: string }[]
    expect(calls.map((c) => c.arguments)).toEqual(['{"location":"Paris"}', '{"location":"Tokyo"}', '{}'])
    expect(calls[0]!.id).not.toBe('')
    expect(new Set(calls.map((c) => c.id)).size).toBe(3)
    expect(calls[2]!.id).toBe('toolu_x')
    const plain = fromAnthropicMessage({ id: 'msg_j', content: [{ type: 'tool_use', name: 'f', input: '{"a":1}' }, { type: 'tool_use', name: 'f', input: {} }], stop_reason: 'tool_use' } as never)
    expect(plain.content.map((p) => (p.type === 'tool-call' ? [p.id, p.arguments] : p))).toEqual([['toolu_j_0', '{"a":1}'], ['toolu_j_1', '{}']])
    // replies without a message id: their calls' ids differ from one reply to the next (a
    // conversation holding both sends them back to Claude, which refuses ids that repeat)
    const noId = () => (fromAnthropicMessage({ content: [{ type: 'tool_use', name: 'f', input: {} }], stop_reason: 'tool_use' } as never).content[0] as { id: string }).id
    expect(noId()).not.toBe(noId())
    const streamedId = async () => ((await streamed(text(0, '') + call(0, {}) + end('tool_use'))).content.find((p) => p.type === 'tool-call') as { id: string }).id
    expect(await streamedId()).not.toBe(await streamedId())
  })

  test('an error event whose error is its message alone keeps the message', async () => {
    const evs = await events(start() + text(0, 'Hi') + 'event: error\ndata: {"type":"error","error":"Rate limit exceeded, retry in 20s"}\n\n')
    const err = evs.at(-1) as Extract<StreamEvent, { type: 'error' }>
    expect(err.type).toBe('error')
    expect(err.error.message).toContain('Rate limit exceeded, retry in 20s')
  })

  test('a whole message whose stop_reason is null ended as its content says', async () => {
    expect((await streamed(start() + text(0, 'Hi') + end(null))).finish.reason).toBe('stop')
    const call = ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } }) + ev('content_block_stop', { index: 0 })
    expect((await streamed(start() + call + end(null))).finish.reason).toBe('tool_calls')
  })

  test('content as a plain string is its text; null blocks are skipped; a body that is no object is an invalid reply', async () => {
    expect(fromAnthropicMessage({ content: 'Hi', stop_reason: 'end_turn' } as never).content).toEqual([{ type: 'text', text: 'Hi' }])
    expect(fromAnthropicMessage({ content: [null, { type: 'text', text: 'Hi' }] } as never).content).toEqual([{ type: 'text', text: 'Hi' }])
    for (const body of ['null', '[1]', '7']) {
      const err = (await readJson(new Response(body), 'ds').catch((e: unknown) => e)) as Error
      expect(err).toMatchObject({ status: 502, type: 'invalid_body' })
      expect(err.message).toContain('not a JSON object')
    }
  })
})
