// A prompt too long for the model the client named: the upstream's 400 says so, and a fallback
// with a larger context window may still serve it (as OpenRouter's fallbacks and LiteLLM's
// context-window fallbacks do). Nothing of a window as small is tried after it (the model's other
// deployments, a fallback of the same window): each would answer the same 400. The deployment
// that said it is not at fault and does not rest. Through the official SDKs, each wire's own way
// of saying it: OpenAI's `context_length_exceeded` (a Responses stream says it in band, after
// its opening events), Anthropic's "prompt is too long".
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const TEXT = fixture('openai/chat/nonstream-text.json')
const STREAM = fixture('openai/chat/stream-text-include-usage.sse')
const RESPONSES_STREAM = fixture('openai/responses/stream-text.sse')
const TOO_LONG = { status: 400, json: fixture('openai/chat/error-400-prompt-too-long.handwritten.json') }
const TOO_LONG_IN_BAND = { sse: fixture('openai/responses/stream-error-prompt-too-long.handwritten.sse') }
const CLAUDE_TOO_LONG = { status: 400, json: fixture('anthropic/messages/error-400-prompt-too-long.handwritten.json') }
const ask = { messages: [{ role: 'user' as const, content: 'hi' }] }

// gpt-4o (128k) on a, then b; its fallbacks gpt-4o-mini (128k too) and gpt-4.1 (1M), on a.
// claude-opus-4-5 (200k) falls back on claude-haiku-4-5 (200k), then gpt-4.1.
const [a, b, claude] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()])
const gw: Gateway = await startGateway({
  yaml: `
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
  - { id: claude-a, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0 }
models:
  - id: gpt-4o
    family: openai
    deployments: [{ provider: openai-a, priority: 1 }, { provider: openai-b, priority: 2 }]
    fallbacks: [gpt-4o-mini, gpt-4.1]
  - id: claude-opus-4-5
    family: anthropic
    fallbacks: [claude-haiku-4-5, gpt-4.1]
routing: { cooldown_s: 60, failures_to_cool: 1 }
compat: { cross_family: translate }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`,
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([a, b, claude].map((u) => u.stop()))
})
afterEach(() => {
  for (const u of [a, b, claude]) u.requests.length = 0
})

const openai = () => new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
const models = (u: FakeUpstream) => u.requests.map((r) => r.json().model)
/** Only gpt-4.1's window holds the prompt: every smaller model says it is too long. */
const onlyLargest = (reply: (r: RecordedRequest) => object) => (r: RecordedRequest) => (r.json().model === 'gpt-4.1' ? reply(r) : r.path.endsWith('/responses') && r.json().stream ? TOO_LONG_IN_BAND : TOO_LONG)

async function record(id: string) {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { generation: Record<string, any> }).generation
}

describe('a prompt past the named model’s context window', () => {
  test('goes to the first fallback of a larger window, skipping the deployments and fallbacks of one as small; the deployment does not rest', async () => {
    a.script(onlyLargest(() => ({ json: TEXT })))
    b.script(TOO_LONG)
    const res = await openai().chat.completions.create({ model: 'gpt-4o', ...ask }).withResponse()
    expect(res.response.status).toBe(200)
    expect(res.data.choices[0]!.message.content!.length).toBeGreaterThan(0)
    expect(models(a)).toEqual(['gpt-4o', 'gpt-4.1'])
    expect(b.requests.length).toBe(0)
    const rec = await record(res.data.id)
    expect(rec.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])).toEqual([['openai-a', 400], ['openai-a', 200]])

    // the deployment that found the prompt too long still serves the next request
    a.script({ json: TEXT })
    await openai().chat.completions.create({ model: 'gpt-4o', ...ask })
    expect(models(a)).toEqual(['gpt-4o', 'gpt-4.1', 'gpt-4o'])
  })

  test('streamed: the fallback streams the reply', async () => {
    a.script(onlyLargest(() => ({ sse: STREAM })))
    b.script(TOO_LONG)
    const stream = await openai().chat.completions.create({ model: 'gpt-4o', ...ask, stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text.length).toBeGreaterThan(0)
    expect(models(a)).toEqual(['gpt-4o', 'gpt-4.1'])
    expect(b.requests.length).toBe(0)
  })

  test('a Responses stream that says it in band, after its opening events, goes to the larger fallback too', async () => {
    a.script(onlyLargest(() => ({ sse: RESPONSES_STREAM })))
    b.script(TOO_LONG_IN_BAND)
    const stream = await openai().responses.create({ model: 'gpt-4o', input: 'hi', stream: true, store: false })
    let text = ''
    let completed = false
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta
      if (ev.type === 'response.completed') completed = true
    }
    expect(completed).toBe(true)
    expect(text.length).toBeGreaterThan(0)
    expect(models(a)).toEqual(['gpt-4o', 'gpt-4.1'])
    expect(b.requests.length).toBe(0)
  })

  test('with no larger window to go to, the client gets the upstream’s 400 as it said it, in band or not, and nothing rests', async () => {
    a.script(TOO_LONG)
    b.script(TOO_LONG)
    const err = await openai()
      .chat.completions.create({ model: 'gpt-4o-mini', ...ask })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.message).toContain('maximum context length is 128000 tokens')
    expect(err.headers.get('x-request-id')).toBeTruthy()

    // a Responses stream's in-band refusal is the client's 400 too, never the upstream's 5xx
    a.script(TOO_LONG_IN_BAND)
    b.script(TOO_LONG_IN_BAND)
    const streamed = await openai()
      .responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true, store: false })
      .catch((e) => e)
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError)
    expect(streamed.message).toContain('exceeds the context window')
    expect(models(a)).toEqual(['gpt-4o-mini', 'gpt-4o-mini'])

    // gpt-4o's every model says so: each window tried once, its second deployment never
    a.script(TOO_LONG_IN_BAND)
    const all = await openai()
      .responses.create({ model: 'gpt-4o', input: 'hi', stream: true, store: false })
      .catch((e) => e)
    expect(all).toBeInstanceOf(OpenAI.BadRequestError)
    expect(models(a)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o', 'gpt-4.1'])
    expect(b.requests.length).toBe(0)
  })

  test('Claude’s “prompt is too long” goes to a larger fallback of the other family, translated', async () => {
    claude.script(CLAUDE_TOO_LONG)
    a.script(onlyLargest(() => ({ json: TEXT })))
    const client = new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0 })
    const msg = await client.messages.create({ model: 'claude-opus-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] })
    expect(msg.content[0]!.type).toBe('text')
    // claude-haiku-4-5 has the same 200k window: not tried
    expect(models(claude)).toEqual(['claude-opus-4-5'])
    expect(models(a)).toEqual(['gpt-4.1'])
    expect(a.requests[0]!.path).toBe('/v1/chat/completions')
  })
})
