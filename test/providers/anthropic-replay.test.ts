// Every recorded Anthropic messages response, replayed through the fake upstream and the
// adapter: the IR must carry the text, thinking, tool calls, finish reason and usage the
// provider produced; in-band errors must stay errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { collect } from '../../src/ir/collect.ts'
import type { GenerationResponse, StreamEvent } from '../../src/ir/types.ts'
import { AnthropicAdapter } from '../../src/providers/anthropic/adapter.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { claude, ctx, drain, providerConfig, request, TEST_KEY, textOf } from './support.ts'

let up: FakeUpstream
let adapter: AnthropicAdapter
beforeAll(async () => {
  up = await startFakeUpstream()
  adapter = new AnthropicAdapter(providerConfig('anthropic', up.url, { maxRetries: 0 }))
})
afterAll(() => up.stop())

const toolCalls = (r: GenerationResponse) =>
  r.content.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.id, name: p.name, arguments: p.arguments }] : []))

async function streamFixture(path: string): Promise<{ events: StreamEvent[]; folded: GenerationResponse }> {
  up.script({ sse: fixture(`anthropic/messages/${path}`) })
  const events = await drain(await adapter.stream(request({ stream: true }), ctx(claude())))
  const folded = await collect((async function* () { yield* events })())
  return { events, folded }
}

describe('anthropic non-stream recordings', () => {
  const generate = async (file: string) => {
    up.script({ json: fixture(`anthropic/messages/${file}`) })
    return adapter.generate(request(), ctx(claude()))
  }

  test('nonstream-text.json', async () => {
    const r = await generate('nonstream-text.json')
    expect(r.id).toBe('msg_01Fg1JVgvCYUHWsxrj9GkpEv')
    expect(r.model).toBe('claude-3-opus-20240229')
    expect(r.content).toEqual([{ type: 'text', text: 'The capital of France is Paris.' }])
    expect(r.finish).toEqual({ reason: 'stop', raw: 'end_turn' })
    // the recording's `service_tier`, kept as said for the record
    expect(r.usage).toEqual({ inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, served: { serviceTier: 'standard' } })
  })

  test('nonstream-text-max-tokens.json → length', async () => {
    const r = await generate('nonstream-text-max-tokens.json')
    expect(textOf(r.content)).toBe('When Nietzsche famously declared "God is dead" in his')
    expect(r.finish).toEqual({ reason: 'length', raw: 'max_tokens' })
    expect(r.usage).toEqual({ inputTokens: 22, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 })
  })

  test('nonstream-cache-read-and-write.json: cache buckets apart from input', async () => {
    const r = await generate('nonstream-cache-read-and-write.json')
    // the recording's `inference_geo` (a model that has no choice of region), kept as said for the record
    expect(r.usage).toEqual({ inputTokens: 3, outputTokens: 33, cacheReadTokens: 1111, cacheWriteTokens: 418, served: { inferenceGeo: 'not_available', serviceTier: 'standard' } })
  })

  test('nonstream-thinking.json: thinking with signature, then text', async () => {
    const r = await generate('nonstream-thinking.json')
    const [thinking, text] = r.content
    expect(thinking).toMatchObject({
      type: 'reasoning',
      text: 'This is a straightforward question about pedestrian safety. I should provide clear, practical advice about crossing the street safely.',
    })
    expect(thinking.type === 'reasoning' && thinking.signature?.startsWith('Eq8CCkYICxgCKkDdadQOXMzNBqjrNVAKWsgUfg49')).toBe(true)
    expect(text.type === 'text' && text.text.startsWith("Here's how to cross the street safely:")).toBe(true)
    expect(r.usage).toMatchObject({ inputTokens: 43, outputTokens: 321 })
  })

  test('nonstream-tool-use-sdk.json: tool_use input as JSON arguments', async () => {
    const r = await generate('nonstream-tool-use-sdk.json')
    expect(toolCalls(r)).toEqual([{ id: 'toolu_018oomXF9jsqQiLqv1VatVRr', name: 'add', arguments: '{"a":1,"b":2}' }])
    expect(r.finish).toEqual({ reason: 'tool_calls', raw: 'tool_use' })
    expect(r.usage).toMatchObject({ inputTokens: 599, outputTokens: 68 })
  })
})

describe('anthropic stream recordings', () => {
  test('stream-text.sse: max_tokens, usage overwritten not added', async () => {
    const { events, folded } = await streamFixture('stream-text.sse')
    expect(events[0]).toMatchObject({ type: 'start', id: 'msg_01PgicqXb8hKdXEPHm3LLTGF', model: 'claude-3-opus-20240229' })
    expect(textOf(folded.content)).toBe('The phrase "I think, therefore I am" (originally in Latin as')
    expect(folded.finish.reason).toBe('length')
    // message_start said output 1, message_delta says 15 cumulative: 15, not 16.
    expect(folded.usage).toEqual({ inputTokens: 27, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 })
  })

  test('stream-text-vercel.sse: end_turn', async () => {
    const { folded } = await streamFixture('stream-text-vercel.sse')
    expect(textOf(folded.content)).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?")
    expect(folded.finish).toEqual({ reason: 'stop', raw: 'end_turn' })
    expect(folded.usage).toEqual({ inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0, served: { inferenceGeo: 'not_available', serviceTier: 'standard' } })
  })

  test('stream-cache-read.sse / stream-cache-write.sse: cache buckets', async () => {
    const read = (await streamFixture('stream-cache-read.sse')).folded
    expect(read.usage).toEqual({ inputTokens: 11, outputTokens: 100, cacheReadTokens: 1031, cacheWriteTokens: 0, served: { serviceTier: 'standard' } })
    expect(textOf(read.content).length).toBe(496)
    const write = (await streamFixture('stream-cache-write.sse')).folded
    expect(write.usage).toEqual({ inputTokens: 18, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 1031, served: { serviceTier: 'standard' } })
    expect(textOf(write.content).endsWith('- Minimize dependencies')).toBe(true)
  })

  test('stream-thinking.sse: thinking deltas + signature fold into one signed reasoning part', async () => {
    const { events, folded } = await streamFixture('stream-thinking.sse')
    expect(events.filter((e) => e.type === 'reasoning-signature').length).toBe(1)
    const [reasoning, text] = folded.content
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      text: 'This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents.',
    })
    const sig = reasoning.type === 'reasoning' ? reasoning.signature! : ''
    expect(sig.length).toBe(504)
    expect(sig.startsWith('EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+V')).toBe(true)
    expect(sig.endsWith('gb7wwzDvP/UhjfQYAQ==')).toBe(true)
    expect(text.type === 'text' && text.text.length).toBe(1021)
    expect(folded.finish.reason).toBe('stop')
    expect(folded.usage).toEqual({ inputTokens: 43, outputTokens: 282, cacheReadTokens: 0, cacheWriteTokens: 0, served: { inferenceGeo: 'not_available', serviceTier: 'standard' } })
  })

  test('stream-tool-use.sse: text block then tool_use block (index 1 → tool 0)', async () => {
    const { events, folded } = await streamFixture('stream-tool-use.sse')
    expect(textOf(folded.content)).toBe("I'll check the current weather in Paris for you.")
    expect(toolCalls(folded)).toEqual([{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' }])
    expect(events.find((e) => e.type === 'tool-input-start')).toMatchObject({ index: 0 })
    expect(events.filter((e) => e.type === 'tool-input-end').length).toBe(1)
    expect(folded.finish).toEqual({ reason: 'tool_calls', raw: 'tool_use' })
    expect(folded.usage).toMatchObject({ inputTokens: 377, outputTokens: 65 })
  })

  test('stream-tool-use-with-request.sse: many small input_json_delta fragments', async () => {
    const { folded } = await streamFixture('stream-tool-use-with-request.sse')
    expect(textOf(folded.content).startsWith('<thinking>\nThe get_weather tool is relevant')).toBe(true)
    expect(toolCalls(folded)).toEqual([{ id: 'toolu_01DYJo37oETVsCdLTTcCWcdq', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' }])
    expect(folded.usage).toEqual({ inputTokens: 599, outputTokens: 135, cacheReadTokens: 0, cacheWriteTokens: 0 })
  })

  test('stream-tool-use-vercel.sse: starts with tool_use, empty first delta, ping between deltas', async () => {
    const { folded } = await streamFixture('stream-tool-use-vercel.sse')
    expect(folded.content).toEqual([
      { type: 'tool-call', id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'json', arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}' },
    ])
    expect(folded.usage).toMatchObject({ inputTokens: 849, outputTokens: 47 })
  })

  test('stream-error-midstream-fragment.sse: text, then an IR error event, no finish', async () => {
    const { events } = await (async () => {
      up.script({ sse: fixture('anthropic/messages/stream-error-midstream-fragment.sse') })
      return { events: await drain(await adapter.stream(request({ stream: true }), ctx(claude()))) }
    })()
    expect(events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text).join('')).toBe('d with a replacement character (')
    expect(events.at(-1)).toEqual({ type: 'error', error: { status: 502, message: 'Internal server error', type: 'api_error', retryAfter: undefined } })
    expect(events.some((e) => e.type === 'finish')).toBe(false)
    await expect(collect((async function* () { yield* events })())).rejects.toBeInstanceOf(UpstreamError)
  })

  test('stream-error-overloaded-event.sse as the first event: stream() rejects with a retryable 503', async () => {
    up.script({ sse: fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const err = await adapter.stream(request({ stream: true }), ctx(claude())).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(503)
    expect(err.type).toBe('overloaded_error')
    expect(err.message).toBe('Overloaded')
    expect(err.retryable).toBe(true)
  })

  test('overloaded_error after message_start and text: an error event, never a fake end_turn', async () => {
    const text = fixture('anthropic/messages/stream-text.sse')
    const head = text.split('event: content_block_stop')[0]
    up.script({ sse: head + fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const events = await drain(await adapter.stream(request({ stream: true }), ctx(claude())))
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { status: 503, type: 'overloaded_error' } })
    expect(events.some((e) => e.type === 'finish')).toBe(false)
  })

  test("overloaded_error right after the message's opening (its start, an empty block, a ping): stream() rejects, as for a first event", async () => {
    // message_start says the message began, not that the upstream will serve it
    const opening = fixture('anthropic/messages/stream-text.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n'
    up.script({ sse: opening + fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const err = await adapter.stream(request({ stream: true }), ctx(claude())).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(503)
    expect(err.retryable).toBe(true)
  })

  test('a cut right after the opening: the reply begins (the upstream took the request), then its error', async () => {
    up.script({ sse: fixture('anthropic/messages/stream-text.sse'), dropAfterEvents: 2 })
    const events = await drain(await adapter.stream(request({ stream: true }), ctx(claude())))
    expect(events.map((e) => e.type)).toEqual(['start', 'usage', 'error'])
    expect(events[0]).toMatchObject({ type: 'start', id: 'msg_01PgicqXb8hKdXEPHm3LLTGF', usage: { inputTokens: 27 } })
  })

  test('with retries, an overloaded first event is retried and the second answer streams', async () => {
    const retrying = new AnthropicAdapter(providerConfig('anthropic', up.url, { maxRetries: 1 }))
    up.script({ sse: fixture('anthropic/messages/stream-error-overloaded-event.sse') }, { sse: fixture('anthropic/messages/stream-text-vercel.sse') })
    const before = up.requests.length
    const r = await collect(await retrying.stream(request({ stream: true }), ctx(claude())))
    expect(up.requests.length - before).toBe(2)
    expect(r.finish.reason).toBe('stop')
  })
})

describe('anthropic error recordings', () => {
  const cases: [string, number, number, RegExp, string][] = [
    ['error-400-invalid-request.json', 400, 400, /messages.0: Input does not match the expected shape./, 'invalid_request_error'],
    ['error-400-unsupported-effort.json', 400, 400, /does not support effort level 'xhigh'/, 'invalid_request_error'],
    ['error-404-not-found.json', 404, 400, /model: claude-sonet-4-5/, 'not_found_error'],
    ['error-401-authentication.json', 401, 502, /rejected the gateway's credentials/, 'authentication_error'],
  ]
  for (const [file, upstream, status, message, type] of cases) {
    test(`${file}: upstream ${upstream} → ${status}`, async () => {
      up.script({ status: upstream, json: fixture(`anthropic/messages/${file}`) })
      const err = await adapter.generate(request(), ctx(claude())).catch((e) => e)
      expect(err).toBeInstanceOf(UpstreamError)
      expect(err.status).toBe(status)
      expect(err.message).toMatch(message)
      expect(err.type).toBe(type)
      expect(err.message).not.toContain(TEST_KEY)
    })
  }

  test('529 overloaded over HTTP → 503 with Retry-After carried', async () => {
    up.script({ status: 529, headers: { 'retry-after': '30' }, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } })
    const err = await adapter.generate(request(), ctx(claude())).catch((e) => e)
    expect(err.status).toBe(503)
    expect(err.retryAfter).toBe('30')
  })
})

describe('anthropic wire request headers', () => {
  test('x-api-key, anthropic-version, path, upstream model id', async () => {
    up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await adapter.generate(request({ betas: ['prompt-caching-2024-07-31'] }), ctx(claude({ upstreamId: 'claude-sonnet-4-5-20250929' })))
    const sent = up.requests.at(-1)!
    expect(sent.path).toBe('/v1/messages')
    expect(sent.headers['x-api-key']).toBe(TEST_KEY)
    expect(sent.headers['anthropic-version']).toBe('2023-06-01')
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31')
    expect(sent.headers.authorization).toBeUndefined()
    expect(sent.json().model).toBe('claude-sonnet-4-5-20250929')
  })

  test('the messages pass-through: body as is, model replaced, client betas kept, client auth never forwarded', async () => {
    up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const body = { model: 'alias', max_tokens: 10, stream: true, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }] }] }
    // only the betas reach the upstream from the client: its auth headers never enter the call context
    const res = await adapter.passthrough['anthropic.messages']!.call(body, { ...ctx(claude()), betas: ['interleaved-thinking-2025-05-14'] }, async (r) => r)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(fixture('anthropic/messages/stream-text.sse'))
    const sent = up.requests.at(-1)!
    expect(sent.json()).toEqual({ ...body, model: 'claude-sonnet-4-5' })
    expect(sent.headers['x-api-key']).toBe(TEST_KEY)
    expect(sent.headers.authorization).toBeUndefined()
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,files-api-2025-04-14')
  })
})
