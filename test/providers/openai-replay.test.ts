// Every recorded OpenAI chat response, replayed through the fake upstream and the adapter:
// the IR must carry the text, tool calls, finish reason and usage the provider produced.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { collect } from '../../src/ir/collect.ts'
import type { GenerationResponse, StreamEvent } from '../../src/ir/types.ts'
import { OpenAIAdapter } from '../../src/providers/openai/adapter.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { ctx, drain, providerConfig, request, TEST_KEY, textOf } from './support.ts'

let up: FakeUpstream
let adapter: OpenAIAdapter
beforeAll(async () => {
  up = await startFakeUpstream()
  adapter = new OpenAIAdapter(providerConfig('openai', up.url, { maxRetries: 0 }))
})
afterAll(() => up.stop())

const toolCalls = (r: GenerationResponse) =>
  r.content.filter((p) => p.type === 'tool-call').map((p) => (p.type === 'tool-call' ? { id: p.id, name: p.name, arguments: p.arguments } : null))

async function streamFixture(path: string): Promise<{ events: StreamEvent[]; folded: GenerationResponse }> {
  up.script({ sse: fixture(path) })
  const events = await drain(await adapter.stream(request({ stream: true }), ctx()))
  const folded = await collect((async function* () { yield* events })())
  return { events, folded }
}

describe('openai chat non-stream recordings', () => {
  test('nonstream-text.json: text, stop, usage 16/363', async () => {
    up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const r = await adapter.generate(request(), ctx())
    expect(r.id).toBe('chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU')
    expect(r.model).toBe('gpt-4.1-nano-2025-04-14')
    expect(r.created).toBe(1770933883)
    const text = textOf(r.content)
    expect(text.startsWith('**Holiday Name:** Galaxy Day')).toBe(true)
    expect(text.endsWith('inspiring individuals to look up and dream beyond our world.')).toBe(true)
    expect(text.length).toBe(1842)
    expect(r.finish).toEqual({ reason: 'stop', raw: 'stop' })
    // the recording's `service_tier`, kept as said for the record
    expect(r.usage).toEqual({ inputTokens: 16, outputTokens: 363, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, served: { serviceTier: 'default' } })
  })

  test('nonstream-tool-calls.json: content null, one tool call with {} arguments', async () => {
    up.script({ json: fixture('openai/chat/nonstream-tool-calls.json') })
    const r = await adapter.generate(request(), ctx())
    expect(r.content).toEqual([{ type: 'tool-call', id: 'call_iXFttys57ap0o16JSlC8yhYo', name: 'get_user_country', arguments: '{}' }])
    expect(r.finish.reason).toBe('tool_calls')
    expect(r.usage).toMatchObject({ inputTokens: 68, outputTokens: 12 })
  })

  test('nonstream-tool-calls-sdk.json: arguments kept byte for byte', async () => {
    up.script({ json: fixture('openai/chat/nonstream-tool-calls-sdk.json') })
    const r = await adapter.generate(request(), ctx())
    expect(toolCalls(r)).toEqual([{ id: 'call_aRMb91k5YxGdI7wtfEFZWGea', name: 'add', arguments: '{"a": 1, "b": 2}' }])
    expect(r.finish.reason).toBe('tool_calls')
    expect(r.usage).toMatchObject({ inputTokens: 85, outputTokens: 32 })
  })

  test('nonstream-reasoning-tokens.json: reasoning tokens carried', async () => {
    up.script({ json: fixture('openai/chat/nonstream-reasoning-tokens.json') })
    const r = await adapter.generate(request(), ctx())
    expect(textOf(r.content)).toBe('Hello there! How can I help you today?')
    expect(r.usage).toEqual({ inputTokens: 7, outputTokens: 87, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 64, served: { serviceTier: 'default' } })
  })
})

describe('openai chat stream recordings', () => {
  test('stream-text-include-usage.sse', async () => {
    const { events, folded } = await streamFixture('openai/chat/stream-text-include-usage.sse')
    expect(events[0]).toEqual({ type: 'start', id: 'chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc', model: 'gpt-4o-mini-2024-07-18', created: 1782955818 })
    expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(3)
    expect(textOf(folded.content)).toBe('The capital of the UK is London.')
    expect(folded.finish.reason).toBe('stop')
    expect(folded.usage).toMatchObject({ inputTokens: 78, outputTokens: 9, cacheReadTokens: 0 })
    expect(events.at(-1)!.type).toBe('finish')
  })

  test('stream-text-vercel.sse: 300 deltas folded; framing-equal to its .chunks.jsonl original', async () => {
    const { folded } = await streamFixture('openai/chat/stream-text-vercel.sse')
    const text = textOf(folded.content)
    expect(text.startsWith('**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually')).toBe(true)
    expect(text.endsWith('ed human experiences and mutual respect.')).toBe(true)
    expect(text.length).toBe(1724)
    expect(folded.usage).toMatchObject({ inputTokens: 16, outputTokens: 300 })
    // The original chunk file, framed by us as plain `data:` lines, folds to the same response.
    const jsonl = fixture('openai/chat/stream-text-vercel.chunks.jsonl').trim().split('\n')
    up.script({ sse: jsonl.map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n' })
    const again = await collect(await adapter.stream(request({ stream: true }), ctx()))
    expect(again).toEqual(folded)
  })

  test('stream-cached-tokens-length.sse: length, cached tokens → disjoint buckets', async () => {
    const { folded } = await streamFixture('openai/chat/stream-cached-tokens-length.sse')
    expect(folded.finish).toEqual({ reason: 'length', raw: 'length' })
    expect(folded.usage).toEqual({ inputTokens: 140, cacheReadTokens: 1280, cacheWriteTokens: 0, outputTokens: 100, reasoningTokens: 0, served: { serviceTier: 'default' } })
    expect(textOf(folded.content).endsWith('entities might')).toBe(true)
  })

  test('stream-parallel-tool-calls.sse: two calls keyed by index, arguments streamed', async () => {
    const { events, folded } = await streamFixture('openai/chat/stream-parallel-tool-calls.sse')
    expect(toolCalls(folded)).toEqual([
      { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' },
      { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
    ])
    expect(events.filter((e) => e.type === 'tool-input-start').map((e) => (e as { index: number }).index)).toEqual([0, 1])
    expect(events.filter((e) => e.type === 'tool-input-delta' && e.index === 1).length).toBeGreaterThan(3)
    expect(events.filter((e) => e.type === 'tool-input-end').length).toBe(2)
    expect(textOf(folded.content)).toBe('')
    expect(folded.finish.reason).toBe('tool_calls')
    expect(folded.usage).toMatchObject({ inputTokens: 149, outputTokens: 60 })
  })

  test('stream-tool-call-single.sse', async () => {
    const { folded } = await streamFixture('openai/chat/stream-tool-call-single.sse')
    expect(toolCalls(folded)).toEqual([{ id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', arguments: '{"country":"UK"}' }])
    expect(folded.finish.reason).toBe('tool_calls')
    expect(folded.usage).toMatchObject({ inputTokens: 53, outputTokens: 15 })
  })

  test('stream-tool-call-after-tool-results.sse: role and tool call in the first delta', async () => {
    const { folded } = await streamFixture('openai/chat/stream-tool-call-after-tool-results.sse')
    expect(toolCalls(folded)).toEqual([{ id: 'call_Vz0Sie91Ap56nH0ThKGrZXT7', name: 'get_weather', arguments: '{"city":"Mexico City"}' }])
    expect(folded.usage).toMatchObject({ inputTokens: 423, outputTokens: 15 })
  })

  test('text with tool_calls: [] is text; empty argument strings tolerated (pitfalls 3)', async () => {
    const c = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'x', model: 'm', created: 1, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    up.script({
      sse:
        c({ role: 'assistant', content: 'Hi', tool_calls: [] }) +
        c({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'noargs', arguments: '' } }] }) +
        c({ tool_calls: [{ index: 0, function: { arguments: '' } }] }) +
        c({}, 'tool_calls') +
        'data: [DONE]\n\n',
    })
    const r = await collect(await adapter.stream(request({ stream: true }), ctx()))
    expect(r.content).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'tool-call', id: 'call_1', name: 'noargs', arguments: '{}' },
    ])
  })

  test('a stream that stops before finish_reason ends with an error event, not a finish', async () => {
    const text = fixture('openai/chat/stream-text-include-usage.sse')
    up.script({ sse: text, dropAfterEvents: 3 })
    const events = await drain(await adapter.stream(request({ stream: true }), ctx()))
    expect(events.filter((e) => e.type === 'text-delta').length).toBe(2)
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { status: 502 } })
    expect(events.some((e) => e.type === 'finish')).toBe(false)
  })
})

describe('openai chat error recordings', () => {
  const cases: [string, number, number, RegExp][] = [
    ['error-400-unsupported-parameter.json', 400, 400, /Unsupported parameter: 'max_tokens'/],
    ['error-400-unsupported-value.json', 400, 400, /does not support 'system'/],
    ['error-404-model-not-found.json', 404, 400, /gpt-5.2-proo/],
    ['error-401-invalid-api-key.json', 401, 502, /rejected the gateway's credentials/],
  ]
  for (const [file, upstream, status, message] of cases) {
    test(`${file}: upstream ${upstream} → ${status}`, async () => {
      up.script({ status: upstream, json: fixture(`openai/chat/${file}`) })
      const err = await adapter.generate(request(), ctx()).catch((e) => e)
      expect(err).toBeInstanceOf(UpstreamError)
      expect(err.status).toBe(status)
      expect(err.message).toMatch(message)
      expect(err.message).not.toContain(TEST_KEY)
      expect(err.message).not.toContain('not-a-r')
    })
  }

  test('a stream request answered with an error status rejects before any event', async () => {
    up.script({ status: 400, json: fixture('openai/chat/error-400-unsupported-value.json') })
    const err = await adapter.stream(request({ stream: true }), ctx()).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(400)
    expect(err.type).toBe('unsupported_value')
  })
})

describe('openai wire request', () => {
  test('headers and body: bearer key, upstream model id, include_usage forced when streaming', async () => {
    up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse') })
    await drain(await adapter.stream(request({ stream: true, includeUsage: false, maxTokens: 50 }), ctx()))
    const sent = up.requests.at(-1)!
    expect(sent.path).toBe('/chat/completions')
    expect(sent.headers.authorization).toBe(`Bearer ${TEST_KEY}`)
    expect(sent.json()).toEqual({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
      max_completion_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    })
  })

  test('the chat pass-through posts the body as is with the upstream model id and returns the raw response', async () => {
    up.script({ json: fixture('openai/chat/nonstream-tool-calls-sdk.json') })
    const body = { model: 'my-alias', messages: [{ role: 'user', content: 'hi' }], n: 1, seed: 7 }
    const res = await adapter.passthrough['openai.chat']!.call(body, ctx(), async (r) => r)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { id: string }).id).toBe('chatcmpl-C47Kq8W5o5oyHrSsFxAXNqpkaq9Jf')
    expect(up.requests.at(-1)!.json()).toEqual({ ...body, model: 'gpt-4o' })
  })

  test('the chat pass-through maps upstream errors like every other call', async () => {
    up.script({ status: 404, json: fixture('openai/chat/error-404-model-not-found.json') })
    const err = await adapter.passthrough['openai.chat']!.call({ model: 'x', messages: [] }, ctx(), async (r) => r).catch((e: unknown) => e as UpstreamError)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(400)
  })
})
