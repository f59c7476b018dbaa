import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ApiKey } from '../../src/http/context.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { genInput } from './input.ts'

let g: Gateway
let me: ApiKey
let other: { key: string; record: ApiKey }

beforeAll(async () => {
  g = await startGateway({ env: { SWITCHYARD_DISCOUNT: '0.2' } })
  me = (await g.services.keys.authenticate(g.key))!
  other = await g.services.keys.create({ name: 'other' })
})
afterAll(() => g.stop())

const get = (path: string, key = g.key, init: RequestInit = {}) =>
  fetch(g.url + path, { ...init, headers: { authorization: `Bearer ${key}` } })

describe('GET /api/v1/generations', () => {
  test('200 with the full record, found right after recording', async () => {
    const createdAt = Date.UTC(2026, 10, 1, 12, 0, 0, 750)
    const input = genInput(g.services.catalog, me, {
      stream: true,
      createdAt,
      usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 300, reasoningTokens: 64 },
      finishReason: 'tool_calls',
      latencyMs: 812.4,
      ttftMs: 95.6,
    })
    g.services.recorder.record(input)
    const r = await get(`/api/v1/generations?id=${input.id}`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toStartWith('application/json')
    const body = await r.json()
    expect(body).toEqual({
      success: true,
      generation: {
        id: input.id,
        gateway_id: expect.stringMatching(/^gen-[0-9a-f]{32}$/),
        endpoint: 'openai.chat.completions',
        stream: true,
        model: 'gpt-4o',
        created_at: Math.floor(createdAt / 1000),
        apiKeyId: me.id,
        usage: {
          prompt_tokens: 3300,
          completion_tokens: 500,
          total_tokens: 3800,
          cache_creation_input_tokens: 300,
          cache_read_input_tokens: 2000,
          completion_tokens_details: { reasoning_tokens: 64 },
        },
        finish_reason: 'tool_calls',
        // gpt-4o list prices ($2.50 in, $1.25 cached, $10 out per M) × (1 − 0.2)
        cost: expect.closeTo(((1000 * 2.5 + 2000 * 1.25 + 300 * 2.5 + 500 * 10) / 1e6) * 0.8, 12),
        unpriced: false,
        // how it was served: this usage says nothing of it
        service_tier: null,
        speed: null,
        inference_geo: null,
        latency_ms: 812,
        time_to_first_token_ms: 96,
        // the provider that served (here the mock: no upstream is configured), and no upstream calls recorded
        provider: 'mock',
        attempts: [],
      },
    })
  })

  test('responses status, failure message and unpriced flag are shown when present', async () => {
    const input = genInput(g.services.catalog, me, {
      model: 'mock-not-priced',
      endpoint: 'openai.responses',
      status: 'requires_action',
      finishReason: null,
      error: 'upstream overloaded',
      ttftMs: null,
    })
    g.services.recorder.record(input)
    const { generation } = await (await get(`/api/v1/generations?id=${input.id}`)).json()
    expect(generation.endpoint).toBe('openai.responses')
    expect(generation.status).toBe('requires_action')
    expect(generation.error).toBe('upstream overloaded')
    expect(generation.cost).toBeNull()
    expect(generation.unpriced).toBe(true)
    expect(generation.finish_reason).toBeNull()
    expect(generation.time_to_first_token_ms).toBeNull()
    expect(generation.usage.completion_tokens_details).toBeUndefined()
  })

  test('chat records carry no status field', async () => {
    const input = genInput(g.services.catalog, me)
    g.services.recorder.record(input)
    const { generation } = await (await get(`/api/v1/generations?id=${input.id}`)).json()
    expect('status' in generation).toBe(false)
    expect('error' in generation).toBe(false)
  })

  test("another key's generation is 404, exactly like an unknown id", async () => {
    const theirs = genInput(g.services.catalog, other.record)
    g.services.recorder.record(theirs)
    const r = await get(`/api/v1/generations?id=${theirs.id}`)
    expect(r.status).toBe(404)
    expect(Object.keys(await r.json())).toEqual(['error'])
    // the owner can read it
    expect((await get(`/api/v1/generations?id=${theirs.id}`, other.key)).status).toBe(200)
    const unknown = await get('/api/v1/generations?id=chatcmpl-does-not-exist')
    expect(unknown.status).toBe(404)
    expect((await unknown.json()).error).toContain('chatcmpl-does-not-exist')
  })

  test('an empty id is a 400 naming id; without id it is the listing, where an unknown parameter is a 400 naming it', async () => {
    const r = await get('/api/v1/generations?id=')
    expect(r.status).toBe(400)
    expect((await r.json()).error).toStartWith('id:')
    const other = await get('/api/v1/generations?other=1')
    expect(other.status).toBe(400)
    expect((await other.json()).error).toStartWith('other: unknown query parameter')
    const list = await get('/api/v1/generations')
    expect(list.status).toBe(200)
    expect((await list.json()).object).toBe('list')
  })

  test('without a key: 401', async () => {
    const r = await fetch(`${g.url}/api/v1/generations?id=x`)
    expect(r.status).toBe(401)
  })
})

describe('GET /api/v1/generation', () => {
  test('307 to /api/v1/generations with the query kept', async () => {
    const r = await get('/api/v1/generation?id=abc%2F1&x=y', g.key, { redirect: 'manual' })
    expect(r.status).toBe(307)
    expect(r.headers.get('location')).toBe('/api/v1/generations?id=abc%2F1&x=y')
  })

  test('a client following the redirect gets the record', async () => {
    const input = genInput(g.services.catalog, me)
    g.services.recorder.record(input)
    const r = await get(`/api/v1/generation?id=${input.id}`)
    expect(r.status).toBe(200)
    expect(r.redirected).toBe(true)
    expect((await r.json()).generation.id).toBe(input.id)
  })
})
