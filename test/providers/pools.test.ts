// Several providers per family at the adapter level, against the fake upstream over real
// sockets: a key pool used round-robin, a refused key leaving it, Azure's paths and header,
// an OpenAI-compatible server's missing usage counted, and the registry by provider id.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { encode } from 'gpt-tokenizer/encoding/o200k_base'
import { createLogger } from '../../src/http/log.ts'
import { collect } from '../../src/ir/collect.ts'
import { AnthropicAdapter } from '../../src/providers/anthropic/adapter.ts'
import { OpenAIAdapter } from '../../src/providers/openai/adapter.ts'
import { createProviders } from '../../src/providers/registry.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { claude, ctx, model, providerConfig, request, user } from './support.ts'

let up: FakeUpstream
beforeAll(async () => {
  up = await startFakeUpstream()
})
afterAll(() => up.stop())

const KEY_A = 'sk-pool-key-A-0000000000000000aaaa'
const KEY_B = 'sk-pool-key-B-0000000000000000bbbb'
const ok = { json: fixture('openai/chat/nonstream-text.json') }
const since = (n: number) => up.requests.slice(n)

describe('key pools', () => {
  test('two keys are used alternately, one per call', async () => {
    up.script(ok)
    const adapter = new OpenAIAdapter(providerConfig('openai', up.url, { id: 'openai-a', apiKeys: [KEY_A, KEY_B] }))
    const before = up.requests.length
    for (let i = 0; i < 4; i++) await adapter.generate(request(), ctx())
    expect(since(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_B}`, `Bearer ${KEY_A}`, `Bearer ${KEY_B}`])
  })

  test('the Anthropic adapter takes its x-api-key from the pool the same way', async () => {
    up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const adapter = new AnthropicAdapter(providerConfig('anthropic', up.url, { id: 'claude-a', apiKeys: [KEY_A, KEY_B] }))
    const before = up.requests.length
    for (let i = 0; i < 3; i++) await adapter.generate(request({ model: 'claude-sonnet-4-5' }), ctx(claude()))
    expect(since(before).map((r) => r.headers['x-api-key'])).toEqual([KEY_A, KEY_B, KEY_A])
  })

  test('a key answered 401 leaves the pool, logged once with its tail masked; the call goes on with the next key', async () => {
    up.script((r) => (r.headers.authorization === `Bearer ${KEY_B}` ? { status: 401, json: fixture('openai/chat/error-401-invalid-api-key.json') } : ok))
    const lines: string[] = []
    const adapter = new OpenAIAdapter(providerConfig('openai', up.url, { id: 'openai-a', apiKeys: [KEY_A, KEY_B], maxRetries: 0 }), { log: createLogger('debug', (l) => lines.push(l)) })
    const before = up.requests.length
    for (let i = 0; i < 5; i++) expect((await adapter.generate(request(), ctx())).content.length).toBeGreaterThan(0)
    // A, then B refused and A again at once, then A for good
    expect(since(before).map((r) => r.headers.authorization)).toEqual([KEY_A, KEY_B, KEY_A, KEY_A, KEY_A, KEY_A].map((k) => `Bearer ${k}`))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', provider: 'openai-a', status: 401, keys_left: 1, key: '…bbbb (34 chars)' })
    expect(lines[0]).not.toContain(KEY_B)
  })

  test('the last key stays: its 401 reaches the caller as a 502 naming the provider, and it is sent again; the log says so once a minute', async () => {
    up.script({ status: 403, json: fixture('openai/chat/error-401-invalid-api-key.json') })
    const lines: string[] = []
    const adapter = new OpenAIAdapter(providerConfig('openai', up.url, { id: 'solo', name: 'solo', apiKeys: [KEY_A] }), { log: createLogger('debug', (l) => lines.push(l)) })
    const before = up.requests.length
    for (let i = 0; i < 2; i++) {
      const err = (await adapter.generate(request(), ctx()).catch((e) => e)) as UpstreamError
      expect(err).toBeInstanceOf(UpstreamError)
      expect(err.status).toBe(502)
      expect(err.message).toContain('upstream solo rejected')
    }
    expect(since(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_A}`])
    // the operator's to fix: told, not once a call
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', provider: 'solo', status: 403, key: '…aaaa (34 chars)' })
    expect(lines[0]).not.toContain(KEY_A)
  })

  test('a provider without keys sends no credentials', async () => {
    up.script(ok)
    const adapter = new OpenAIAdapter(providerConfig('openai-compatible', up.url, { id: 'local', apiKeys: [], apiKey: undefined }))
    const before = up.requests.length
    await adapter.generate(request(), ctx())
    expect(since(before)[0]!.headers.authorization).toBeUndefined()
  })
})

describe('azure-openai', () => {
  const azure = (over = {}) => new OpenAIAdapter(providerConfig('azure-openai', up.url, { id: 'azure', apiKeys: [KEY_A], apiVersion: '2024-10-21', ...over }))
  const deployed = model({ upstreamId: 'my-gpt-4o', provider: 'azure-openai' })

  test('chat completions go to the deployment path with api-version, the key in api-key', async () => {
    up.script(ok)
    const before = up.requests.length
    await azure().generate(request(), ctx(deployed))
    await azure().passthrough['openai.chat']!.call({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, ctx(deployed), async (r) => r.text())
    for (const r of since(before)) {
      expect(r.path).toBe('/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21')
      expect(r.headers['api-key']).toBe(KEY_A)
      expect(r.headers.authorization).toBeUndefined()
    }
    expect(since(before)).toHaveLength(2)
  })

  test('the Responses API passes through only when the provider says it serves it', async () => {
    expect(azure().passthrough['openai.responses']).toBeUndefined()
    up.script({ json: { id: 'resp_1', object: 'response', status: 'completed', output: [] } })
    const before = up.requests.length
    await azure({ responses: true }).passthrough['openai.responses']!.call({ model: 'x', input: 'hi' }, ctx(deployed), async (r) => r.text())
    expect(since(before)[0]!.path).toBe('/openai/responses?api-version=2024-10-21')
    expect(since(before)[0]!.json().model).toBe('my-gpt-4o')
  })
})

describe('openai-compatible', () => {
  const local = (over = {}) => new OpenAIAdapter(providerConfig('openai-compatible', up.url + '/v1', { id: 'local', apiKeys: [], apiKey: undefined, responses: false, ...over }))
  const llama = model({ id: 'llama-3.1-8b', upstreamId: 'llama-3.1-8b', provider: 'openai-compatible' })
  const ANSWER = 'The capital of the UK is London.'
  const QUESTION = 'What is the capital of the UK?'
  const noUsage = { id: 'chatcmpl-local', object: 'chat.completion', created: 1, model: 'llama', choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }] }
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-local', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  const noUsageSse = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'The capital of the UK' }) + chunk({ content: ' is London.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'
  const counted = { prompt_tokens: encode(QUESTION).length, completion_tokens: encode(ANSWER).length, total_tokens: encode(QUESTION).length + encode(ANSWER).length, switchyard_counted: true }

  test('chat completions at its base URL; no Responses pass-through unless configured', async () => {
    expect(local().passthrough['openai.chat']).toBeDefined()
    expect(local().passthrough['openai.responses']).toBeUndefined()
    expect(local({ responses: true }).passthrough['openai.responses']).toBeDefined()
    up.script({ json: { ...noUsage, usage: { prompt_tokens: 7, completion_tokens: 8, total_tokens: 15 } } })
    const before = up.requests.length
    const r = await local().generate(request({ messages: [user(QUESTION)] }), ctx(llama))
    expect(since(before)[0]!.path).toBe('/v1/chat/completions')
    // the upstream's own usage stands as it is
    expect(r.usage).toEqual({ inputTokens: 7, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0 })
  })

  test('a JSON reply without usage: the gateway counts it and marks it counted (IR and pass-through)', async () => {
    up.script({ json: noUsage })
    const r = await local().generate(request({ messages: [user(QUESTION)] }), ctx(llama))
    expect(r.usage).toEqual({ inputTokens: counted.prompt_tokens, outputTokens: counted.completion_tokens, cacheReadTokens: 0, cacheWriteTokens: 0, counted: true })
    const body = { model: 'llama-3.1-8b', messages: [{ role: 'user', content: QUESTION }] }
    const text = await local().passthrough['openai.chat']!.call(body, ctx(llama), async (res) => res.text())
    expect(JSON.parse(text).usage).toEqual(counted)
    expect(JSON.parse(text).choices[0].message.content).toBe(ANSWER)
  })

  test('a stream without usage: a counted usage chunk goes before [DONE]; the IR stream finishes with it', async () => {
    up.script({ sse: noUsageSse })
    const body = { model: 'llama-3.1-8b', stream: true, messages: [{ role: 'user', content: QUESTION }] }
    const sse = await local().passthrough['openai.chat']!.call(body, ctx(llama), async (res) => res.text())
    const events = sse.split('\n\n').filter(Boolean)
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(JSON.parse(events.at(-2)!.slice(6))).toEqual({ id: 'chatcmpl-local', created: 1, model: 'llama', object: 'chat.completion.chunk', choices: [], usage: counted })
    // what the upstream sent comes through unchanged before it
    expect(events.slice(0, -2).map((e) => e + '\n\n').join('')).toBe(noUsageSse.replace('data: [DONE]\n\n', ''))
    const r = await collect(await local().stream(request({ stream: true, messages: [user(QUESTION)] }), ctx(llama)))
    expect(r.usage).toMatchObject({ inputTokens: counted.prompt_tokens, outputTokens: counted.completion_tokens, counted: true })
  })

  test('a stream with usage passes untouched', async () => {
    const withUsage = noUsageSse.replace('data: [DONE]', `data: ${JSON.stringify({ id: 'chatcmpl-local', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\ndata: [DONE]`)
    up.script({ sse: withUsage })
    const sse = await local().passthrough['openai.chat']!.call({ model: 'm', stream: true, messages: [] }, ctx(llama), async (res) => res.text())
    expect(sse).toBe(withUsage)
  })
})

describe('registry', () => {
  const providers = {
    'openai-a': providerConfig('openai', 'http://127.0.0.1:1', { id: 'openai-a', name: 'openai-a' }),
    local: providerConfig('openai-compatible', 'http://127.0.0.1:1', { id: 'local', name: 'local' }),
    'claude-a': providerConfig('anthropic', 'http://127.0.0.1:1', { id: 'claude-a', name: 'claude-a' }),
  }

  test('one adapter per provider id; the families\' own providers and the mock by name', () => {
    const r = createProviders({ providers })
    expect(r.adapterFor('openai-a').name).toBe('openai-a')
    expect(r.adapterFor('local').kind).toBe('openai-compatible')
    expect(r.adapterFor('claude-a')).toBe(r.anthropic!)
    expect(r.openai).toBe(r.adapterFor('openai-a') as OpenAIAdapter)
    expect(r.adapterFor('mock')).toBe(r.mock)
    expect(() => r.adapterFor('nope')).toThrow(/provider nope is not configured/)
  })

  test('providerFor sends the first deployment\'s own upstream id', async () => {
    up.script(ok)
    const r = createProviders({ providers: { local: providerConfig('openai-compatible', up.url, { id: 'local', name: 'local' }) } })
    const m = model({ id: 'llama', upstreamId: 'llama', provider: 'openai-compatible', deployments: [{ provider: 'local', upstreamId: 'meta-llama/Llama-3.1-8B', weight: 1, priority: 1 }] })
    const before = up.requests.length
    await r.providerFor(m).generate(request(), ctx(m))
    await r.providerFor(m).passthrough!['openai.chat']!.call({ model: 'llama', messages: [] }, ctx(m), async (res) => res.text())
    expect(since(before).map((q) => q.json().model)).toEqual(['meta-llama/Llama-3.1-8B', 'meta-llama/Llama-3.1-8B'])
  })
})
