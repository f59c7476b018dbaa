// Claude Code and Codex send their own default models (claude-opus-5-5 with max_tokens 128000,
// gpt-5.5) when the user names none. Both are known to the gateway only from the price library,
// which has context windows but no output caps: the gateway must not invent one (it once
// copied 16,384 from another model and refused every Claude Code session). The upstream, or
// the mock, decides; GET /models says the cap is not known.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

describe('on the mock (no upstream configured)', () => {
  let g: Gateway
  beforeAll(async () => {
    g = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000' } })
  })
  afterAll(() => g.stop())

  test("Claude Code's default request streams: claude-opus-5-5, max_tokens 128000, ?beta=true", async () => {
    const anthropic = new Anthropic({ apiKey: g.key, baseURL: `${g.url}/api/beta`, maxRetries: 0 })
    const stream = await anthropic.beta.messages.create({ model: 'claude-opus-5-5', max_tokens: 128_000, stream: true, messages: [{ role: 'user', content: 'hi' }] })
    const types: string[] = []
    for await (const ev of stream) types.push(ev.type)
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
  })

  test("Codex's default model answers on the responses surface", async () => {
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const r = await openai.responses.create({ model: 'gpt-5.5', input: 'hi', max_output_tokens: 128_000 })
    expect(r.status).toBe('completed')
  })

  test('GET /models says which caps the gateway knows and which it leaves to the upstream', async () => {
    const get = async (path: string) => (await fetch(g.url + path, { headers: { authorization: `Bearer ${g.key}` } })).json() as Promise<any>
    const opus = await get('/api/beta/v1/models/claude-opus-5-5')
    expect(opus.max_input_tokens).toBe(1_000_000)
    expect(opus.max_tokens).toBeNull()
    const known = await get('/api/alpha/v1/models/claude-sonnet-4-5')
    expect(known.context_window).toBe(200_000)
    expect(known.max_output_tokens).toBe(64_000)
    expect((await get('/api/alpha/v1/models/gpt-5.5')).max_output_tokens).toBeNull()
  })

  // OpenAI lists a snapshot as a model of its own and retrieves it under its dated id
  test('a dated OpenAI id is retrieved under that id, with its model\'s window and cap', async () => {
    const get = async (path: string) => (await fetch(g.url + path, { headers: { authorization: `Bearer ${g.key}` } })).json() as Promise<any>
    for (const root of ['/api/v1', '/api/alpha/v1']) {
      expect(await get(`${root}/models/gpt-4o-2024-08-06`)).toMatchObject({ id: 'gpt-4o-2024-08-06', object: 'model', owned_by: 'openai', context_window: 128_000, max_output_tokens: 16_384 })
      expect((await get(`${root}/models/gpt-4o`)).id).toBe('gpt-4o')
    }
  })

  test("a model newer than the price library (Codex 0.169's default, gpt-6.1-sol) is served by its family's provider, unpriced, and never listed", async () => {
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const listed = (await openai.models.list()).data.length
    const r = await openai.responses.create({ model: 'gpt-6.1-sol', input: 'mock: text fresh' })
    expect(r.status).toBe('completed')
    expect(r.model).toBe('gpt-6.1-sol')
    const anthropic = new Anthropic({ apiKey: g.key, baseURL: `${g.url}/api/beta`, maxRetries: 0 })
    const m = await anthropic.messages.create({ model: 'claude-nova-9', max_tokens: 20_000, messages: [{ role: 'user', content: 'mock: text fresh' }] })
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'fresh' })
    // what it is not known: shown as null, not invented
    const one = (await (await fetch(`${g.url}/api/alpha/v1/models/gpt-6.1-sol`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as any
    expect(one).toMatchObject({ id: 'gpt-6.1-sol', context_window: null, max_output_tokens: null })
    // a client naming a hundred made-up ids does not grow the list
    for (let i = 0; i < 100; i++) await openai.chat.completions.create({ model: `gpt-made-up-${i}`, messages: [{ role: 'user', content: 'hi' }] })
    expect((await openai.models.list()).data.length).toBe(listed)
    // on the mock nothing is spent: a key with credits may use it too
    const { key: funded } = await g.services.keys.create({ name: 'funded', credits: 1 })
    expect((await new OpenAI({ apiKey: funded, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 }).responses.create({ model: 'gpt-6.1-sol', input: 'hi' })).status).toBe('completed')
    // unpriced: recorded without a cost, never as $0
    await g.services.recorder.flush()
    const res = await fetch(`${g.url}/api/v1/generations?id=${r.id}`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(res.status).toBe(200)
    const rec = (await res.json()) as any
    const gen = rec.generation
    expect(gen.model).toBe('gpt-6.1-sol')
    expect(gen.cost).toBeNull()
    expect(gen.unpriced).toBe(true)
    // an id that is not of a family's naming is still unknown
    const bad = await fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'llama-9', messages: [{ role: 'user', content: 'hi' }] }) })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: string }).error).toContain('unknown model')
    const odd = await fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5 <script>', messages: [{ role: 'user', content: 'hi' }] }) })
    expect(odd.status).toBe(400)
  })

  test('an unknown model id of 10 KB is not echoed whole', async () => {
    const r = await fetch(`${g.url}/api/v1/models/${'m'.repeat(10_000)}`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(r.status).toBe(404)
    const text = await r.text()
    expect(text.length).toBeLessThan(500)
    expect(text).toContain('not found')
  })

  test('a model id with a percent sign in it is a 404 naming it, on every surface; one sent as %2F is read once', async () => {
    for (const path of ['/api/v1/models/100%25', '/api/alpha/v1/models/%25', '/api/beta/v1/models/%25zz', '/api/v1/models/a%252Fb']) {
      const r = await fetch(`${g.url}${path}`, { headers: { authorization: `Bearer ${g.key}` } })
      expect(r.status).toBe(404)
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect(((await r.json()) as { error: string }).error).toContain('not found')
    }
    const r = await fetch(`${g.url}/api/v1/models/a%252Fb`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(((await r.json()) as { error: string }).error).toContain('a%2Fb')
    const known = await fetch(`${g.url}/api/v1/models/gpt-4o%2Dmini`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(((await known.json()) as { id: string }).id).toBe('gpt-4o-mini')
  })
})

describe('on a fake upstream', () => {
  let g: Gateway
  let up: FakeUpstream
  beforeAll(async () => {
    up = await startFakeUpstream()
    g = await startGateway({ env: upstreamEnv(up) })
  })
  afterAll(async () => {
    await g.stop()
    await up.stop()
  })

  test('claude-opus-5-5 with max_tokens 128000 goes upstream as asked', async () => {
    up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const anthropic = new Anthropic({ apiKey: g.key, baseURL: `${g.url}/api/beta`, maxRetries: 0 })
    const stream = await anthropic.beta.messages.create({ model: 'claude-opus-5-5', max_tokens: 128_000, stream: true, messages: [{ role: 'user', content: 'hi' }] })
    for await (const _ of stream);
    const sent = up.requests.at(-1)!.json()
    expect(sent.model).toBe('claude-opus-5-5')
    expect(sent.max_tokens).toBe(128_000)
  })

  test('gpt-5.5 with a cap the gateway does not know goes upstream as asked', async () => {
    up.script({ json: fixtureJson('openai/responses/nonstream-text.json') })
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    await openai.responses.create({ model: 'gpt-5.5', input: 'hi', max_output_tokens: 200_000 })
    const sent = up.requests.at(-1)!.json()
    expect(sent.model).toBe('gpt-5.5')
    expect(sent.max_output_tokens).toBe(200_000)
  })

  test('an unlisted model goes upstream as asked; a key with credits is refused it (no price to charge), before any upstream call', async () => {
    up.script({ json: fixtureJson('openai/responses/nonstream-text.json') })
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    await openai.responses.create({ model: 'gpt-6.1-sol', input: 'hi' })
    expect(up.requests.at(-1)!.json().model).toBe('gpt-6.1-sol')
    const before = up.requests.length
    const { key } = await g.services.keys.create({ name: 'funded', credits: 5 })
    const funded = new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const err = await funded.responses.create({ model: 'gpt-6.1-sol', input: 'hi' }).then(() => null, (e) => e)
    expect(err?.status).toBe(400)
    expect(String(err?.error?.error ?? err?.message)).toContain('gpt-6.1-sol has no known price')
    expect(up.requests.length).toBe(before)
  })

  test('a model of unknown cap asked through chat for Claude gets a max_tokens every current Claude model takes', async () => {
    up.script({ json: fixtureJson('anthropic/messages/nonstream-text.json') })
    const res = await fetch(`${g.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json', 'x-switchyard-cross-family': 'translate' },
      body: JSON.stringify({ model: 'claude-opus-5-5', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    expect(up.requests.at(-1)!.json().max_tokens).toBe(32_000)
  })
})
