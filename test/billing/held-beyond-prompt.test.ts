// A funded key's hold covers what a request may be billed for beyond its prompt and output cap:
// the searches a server tool runs upstream and the text they bring back, an answer in audio, and
// a fallback model dearer than the one asked for. Held at the prompt and cap alone, a burst on a
// nearly spent key was admitted many times over (each request costing 6 to 80 times its hold).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { burstAs, heldOnceTold, postAs } from '../helpers/burst.ts'
import { messagesBeyond, responsesBeyond, searchesEachReply, TOKENS_A_FETCH, TOKENS_A_SEARCH, USES_UNBOUNDED } from '../../src/billing/server-tools.ts'

let up: FakeUpstream
let g: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  g = await startGateway({
    logLevel: 'silent',
    yaml: `
providers:
  - { id: anth, kind: anthropic, base_url: ${up.url}, api_key: sk-up-a, max_retries: 0 }
  - { id: oai, kind: openai, base_url: ${up.url}, api_key: sk-up, max_retries: 0 }
models:
  - { id: claude-haiku-4-5, family: anthropic, fallbacks: [claude-opus-4-1] }
routing: { failures_to_cool: 1000 }
`,
    env: { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' },
  })
})
afterAll(async () => {
  await g?.stop()
  await up?.stop()
})

const post = (key: string, path: string, body: unknown) => postAs(g, key, path, body)

/** 20 requests at once on a key with `credits`: how many were served, and what the key spent; every hold ended with its request (a fallback's first one released). */
async function burst(credits: number, path: string, body: unknown) {
  const { key, record } = await g.services.keys.create({ name: 'near its credit', credits })
  const r = await burstAs(g, { key, id: record.id }, path, body)
  expect(await heldOnceTold(g, record.id)).toBe(0)
  return r
}

describe('held beyond the prompt and the output cap', () => {
  test("Claude's web search: its searches and what they bring back are held, so one request is served past the credit, not a dozen", async () => {
    up.script((req) => {
      const body = req.json()
      const usage = { input_tokens: 6039, output_tokens: body.max_tokens, server_tool_use: { web_search_requests: 5 } }
      if (body.stream) {
        const sse = fixture('anthropic/messages/stream-web-search.handwritten.sse').replace('"server_tool_use":{"web_search_requests":1}', '"server_tool_use":{"web_search_requests":5}')
        return { waitMs: 200, sse }
      }
      return { waitMs: 200, json: { id: 'msg_ws', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage } }
    })
    for (const stream of [false, true]) {
      const r = await burst(0.01, '/api/beta/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, stream, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }], messages: [{ role: 'user', content: 'Weather in Paris?' }] })
      expect(r).toMatchObject({ served: 1, refused: 19 })
      expect(r.spent).toBeGreaterThan(0.05)
    }
  })

  test("Claude's server tools run in a loop of model calls, each up to max_tokens: the hold covers every call's output, so a burst is not served three times its credit", async () => {
    // five searches, six calls of 4,000 tokens each: output past max_tokens, as Anthropic's usage sums the calls
    up.script((req) => {
      const body = req.json()
      const usage = { input_tokens: 6039, output_tokens: 6 * body.max_tokens, server_tool_use: { web_search_requests: 5 } }
      return { waitMs: 200, json: { id: 'msg_loop', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage } }
    })
    const r = await burst(0.5, '/api/beta/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 4000, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }], messages: [{ role: 'user', content: 'Weather in Paris?' }] })
    // each costs $0.428 (24,000 tokens out, 6,039 in, five searches): one fits in $0.50, a second does not
    expect(r).toMatchObject({ served: 1, refused: 19 })
    expect(r.spent).toBeCloseTo(6039 * 3e-6 + 24_000 * 15e-6 + 5 * 0.01, 6)
  })

  test('the Responses web search, bounded by max_tool_calls when set', async () => {
    up.script((req) => {
      const body = req.json()
      const base = fixtureJson('openai/responses/nonstream-text.json')
      const calls = Array.from({ length: 5 }, (_, i) => ({ type: 'web_search_call', id: `ws_${i}`, status: 'completed', action: { type: 'search', query: `q${i}` } }))
      return { waitMs: 200, json: { ...base, id: `resp_${crypto.randomUUID().replaceAll('-', '')}`, store: false, output: [...calls, ...base.output], usage: { input_tokens: 40_000, input_tokens_details: { cached_tokens: 0 }, output_tokens: body.max_output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 } } }
    })
    const r = await burst(0.01, '/api/alpha/v1/responses', { model: 'gpt-4o-mini', max_output_tokens: 100, store: false, tools: [{ type: 'web_search' }], input: 'News from Paris?' })
    expect(r).toMatchObject({ served: 1, refused: 19 })
    // web_search_options goes upstream as the same tool, and is held as it
    const o = await burst(0.01, '/api/alpha/v1/responses', { model: 'gpt-4o-mini', max_output_tokens: 100, store: false, web_search_options: {}, input: 'News from Paris?' })
    expect(o).toMatchObject({ served: 1, refused: 19 })
  })

  test("the Responses file search: each call is billed (OpenAI's $2.50 a thousand), and held", async () => {
    up.script((req) => {
      const body = req.json()
      const base = fixtureJson('openai/responses/nonstream-text.json')
      const calls = Array.from({ length: 5 }, (_, i) => ({ type: 'file_search_call', id: `fs_${i}`, status: 'completed', queries: [`q${i}`], results: null }))
      return { waitMs: 200, json: { ...base, id: `resp_${crypto.randomUUID().replaceAll('-', '')}`, model: 'gpt-4o-mini-2024-07-18', store: false, output: [...calls, ...base.output], usage: { input_tokens: 500, input_tokens_details: { cached_tokens: 0 }, output_tokens: body.max_output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 } } }
    })
    const ask = { model: 'gpt-4o-mini', max_output_tokens: 100, store: false, tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], input: 'What does the contract say?' }
    const r = await post(g.key, '/api/alpha/v1/responses', ask)
    expect(r.status).toBe(200)
    const id = ((await r.json()) as { id: string }).id
    await g.services.recorder.flush()
    const rec = await (await fetch(`${g.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${g.key}` } })).json()
    // gpt-4o-mini: $0.15 and $0.60 a million tokens in and out, a file search $0.0025
    expect(rec.generation.cost).toBeCloseTo(500 * 0.15e-6 + 100 * 0.6e-6 + 5 * 0.0025, 9)
    expect(await burst(0.005, '/api/alpha/v1/responses', ask)).toMatchObject({ served: 1, refused: 19 })
  })

  test("a search model's reply is billed the search it always runs, which its usage never says, and held with it", async () => {
    up.script((req) => {
      const body = req.json()
      const usage = { prompt_tokens: 20, completion_tokens: 100, total_tokens: 120 }
      if (body.stream) {
        const chunk = (o: object) => `data: ${JSON.stringify({ id: 'chatcmpl-search', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-search-preview-2025-03-11', ...o })}\n\n`
        return { waitMs: 200, sse: chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Sunny.' }, finish_reason: null }] }) + chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + chunk({ choices: [], usage }) + 'data: [DONE]\n\n' }
      }
      return { waitMs: 200, json: { id: 'chatcmpl-search', object: 'chat.completion', created: 1, model: 'gpt-4o-mini-search-preview-2025-03-11',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny.', annotations: [] }, finish_reason: 'stop' }], usage } }
    })
    const ask = { model: 'gpt-4o-mini-search-preview', web_search_options: {}, max_completion_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }] }
    for (const stream of [false, true]) {
      const r = await post(g.key, '/api/alpha/v1/chat/completions', { ...ask, stream })
      expect(r.status).toBe(200)
      const text = await r.text()
      expect(text).toContain('Sunny.')
    }
    await g.services.recorder.flush()
    const list = await (await fetch(`${g.url}/api/v1/generations?model=gpt-4o-mini-search-preview&limit=2`, { headers: { authorization: `Bearer ${g.key}` } })).json()
    expect(list.data).toHaveLength(2)
    // gpt-4o-mini-search-preview: gpt-4o-mini's $0.15 and $0.60 a million tokens, a search $0.01
    for (const rec of list.data) expect(rec.cost).toBeCloseTo(20 * 0.15e-6 + 100 * 0.6e-6 + 0.01, 9)
    expect(await burst(0.005, '/api/alpha/v1/chat/completions', ask)).toMatchObject({ served: 1, refused: 19 })
  })

  test("a search model takes no n above 1, as OpenAI refuses it: its one search a request is what is held and recorded", async () => {
    up.script(() => ({ json: { id: 'chatcmpl-search', object: 'chat.completion', created: 1, model: 'gpt-4o-mini-search-preview-2025-03-11',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny.', annotations: [] }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 100, total_tokens: 120 } } }))
    const client = new OpenAI({ baseURL: `${g.url}/api/alpha/v1`, apiKey: g.key, maxRetries: 0 })
    const sent = up.requests.length
    const ask = { model: 'gpt-4o-mini-search-preview', max_completion_tokens: 100, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] }
    const e = await client.chat.completions.create({ ...ask, n: 3 }).then(() => null, (e: unknown) => e)
    expect(e).toBeInstanceOf(OpenAI.BadRequestError)
    expect((e as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('n: gpt-4o-mini-search-preview')
    expect(up.requests.length).toBe(sent)
    // a batch line asking it is refused as the batch is checked
    const batch = await post(g.key, '/api/v1/batches', { endpoint: '/v1/chat/completions', requests: [{ custom_id: 'a', ...ask }, { custom_id: 'b', ...ask, n: 2 }] })
    expect(batch.status).toBe(400)
    expect(await batch.text()).toContain('n: gpt-4o-mini-search-preview')
    // another model's n is sent as it came
    up.script((req) => ({ json: { ...fixtureJson('openai/chat/nonstream-text.json'), model: req.json().model } }))
    const other = await client.chat.completions.create({ ...ask, model: 'gpt-4o-mini', n: 3 })
    expect(other.choices.length).toBeGreaterThan(0)
    expect(up.requests.at(-1)!.json().n).toBe(3)
  })

  test("a prompt written to Claude's hour-long cache costs twice input: held at that, so a burst is served once, not twice", async () => {
    const text = '7 '.repeat(20_000)
    up.script(() => ({ waitMs: 200, json: { ...fixtureJson('anthropic/messages/nonstream-text.json'), usage: { input_tokens: 0, output_tokens: 10, cache_read_input_tokens: 0,
      cache_creation_input_tokens: 40_000, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 40_000 } } } }))
    const ask = { model: 'claude-haiku-4-5', max_tokens: 10, system: [{ type: 'text', text, cache_control: { type: 'ephemeral', ttl: '1h' } }], messages: [{ role: 'user', content: 'Hi' }] }
    // claude-haiku-4-5: $1 a million input tokens, $2 an hour's writes, $5 output; the first reply
    // costs $0.08005, more than the credit, and its hold is what keeps the second out
    const r = await burst(0.05, '/api/beta/v1/messages', ask)
    expect(r).toMatchObject({ served: 1, refused: 19 })
    expect(r.spent).toBeCloseTo(40_000 * 2e-6 + 10 * 5e-6, 9)
  })

  test('an answer in audio, held at the audio output rate', async () => {
    up.script((req) => {
      const cap = req.json().max_completion_tokens
      return { waitMs: 200, json: { id: 'chatcmpl-audio', object: 'chat.completion', created: 1, model: 'gpt-audio-2025-08-28',
        choices: [{ index: 0, message: { role: 'assistant', content: null, audio: { id: 'audio_1', data: 'UklGRg==', expires_at: 2e9, transcript: 'Hi' } }, finish_reason: 'length' }],
        usage: { prompt_tokens: 20, completion_tokens: cap, total_tokens: cap + 20, completion_tokens_details: { audio_tokens: cap - 50 } } } }
    })
    const r = await burst(0.05, '/api/alpha/v1/chat/completions', { model: 'gpt-audio', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, max_completion_tokens: 2000, messages: [{ role: 'user', content: 'A story' }] })
    expect(r).toMatchObject({ served: 1, refused: 19 })
  })

  test('a fallback model dearer than the one asked for is held anew at its own price', async () => {
    up.script((req) => {
      const body = req.json()
      if (body.model === 'claude-haiku-4-5') return { status: 503, json: { type: 'error', error: { type: 'overloaded_error', message: 'down' } } }
      return { waitMs: 200, json: { id: 'msg_fb', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 10, output_tokens: body.max_tokens } } }
    })
    const r = await burst(0.02, '/api/beta/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] })
    // the rest are refused at the front door (402), or, admitted at the cheap model's price, not
    // held for the dear one and ended with the primary's failure (503)
    expect(r.served).toBe(1)
    expect(r.refused + r.failed).toBe(19)
  })
})

describe('a fallback the key cannot be held for', () => {
  test("is not called: the request ends with the failure before it, and the fallback's probe is given back", async () => {
    let onPrimary = async () => {}
    const seen: string[] = []
    up.script(async (req) => {
      const body = req.json()
      seen.push(body.model)
      if (body.model === 'claude-haiku-4-5') {
        await onPrimary()
        return { status: 503, json: { type: 'error', error: { type: 'overloaded_error', message: 'primary down' } } }
      }
      return { json: { id: 'msg_fb', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 2 } } }
    })
    const ask = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }
    // the fallback's deployment rested; its rest is over, so the next request that reaches it probes it
    const fallback = g.services.health.snapshot().map((d) => d.key).find((k) => k.includes('opus'))!
    g.services.health.failed(fallback, { retryAfterMs: 30 })
    await Bun.sleep(60)
    expect(g.services.health.state(fallback).kind).toBe('half-open')
    const { key, record } = await g.services.keys.create({ name: 'spent meanwhile', credits: 0.05 })
    // while the primary fails, the key's credit is taken down to nothing (an operator's change)
    onPrimary = async () => {
      onPrimary = async () => {}
      await g.services.keys.update(record.id, { credits: 0 })
    }
    seen.length = 0
    const r = await post(key, '/api/beta/v1/messages', ask)
    expect(r.status).toBe(503)
    expect(await r.text()).toContain('primary down')
    expect(seen).toEqual(['claude-haiku-4-5'])
    expect(g.services.health.state(fallback).kind).not.toBe('probing')
    expect(await heldOnceTold(g, record.id)).toBe(0)
    // a key that can pay still reaches the fallback
    const other = await post(g.key, '/api/beta/v1/messages', ask)
    expect(other.status).toBe(200)
    await other.text()
  })
})

describe('what a request may add, read from its tools', () => {
  test('uses by max_uses or max_tool_calls, a bound where none is set; a fetch by its max_content_tokens', () => {
    expect(messagesBeyond([{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }])).toEqual({ webSearches: 3, inputTokens: 3 * TOKENS_A_SEARCH, audioOutput: false, calls: 4 })
    // tools Anthropic runs itself add calls to its loop; the client's own add none
    expect(messagesBeyond([{ type: 'code_execution_20250825', name: 'code_execution' }])).toEqual({ webSearches: 0, inputTokens: 0, audioOutput: false, calls: 1 + USES_UNBOUNDED })
    expect(messagesBeyond([{ type: 'bash_20250124', name: 'bash' }, { name: 'get_weather', input_schema: { type: 'object' } }])).toBeUndefined()
    expect(messagesBeyond([{ type: 'web_search_20260209', name: 'web_search' }])!.webSearches).toBe(USES_UNBOUNDED)
    expect(messagesBeyond([{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2, max_content_tokens: 5000 }])).toEqual({ webSearches: 0, inputTokens: 10_000, audioOutput: false, calls: 3 })
    expect(messagesBeyond([{ type: 'web_fetch_20250910', name: 'web_fetch' }])!.inputTokens).toBe(USES_UNBOUNDED * TOKENS_A_FETCH)
    expect(messagesBeyond([{ name: 'f', input_schema: { type: 'object' } }])).toBeUndefined()
    expect(responsesBeyond([{ type: 'web_search_preview' }], 2)!.webSearches).toBe(2)
    expect(responsesBeyond([{ type: 'function', name: 'f' }], undefined)).toBeUndefined()
    expect(responsesBeyond([{ type: 'file_search', vector_store_ids: ['vs_1'] }], undefined)).toEqual({ webSearches: 0, fileSearches: USES_UNBOUNDED, inputTokens: USES_UNBOUNDED * TOKENS_A_SEARCH, audioOutput: false })
  })

  test("a search model's every reply, by the id sent upstream or the one asked for; no other model's", () => {
    const m = (id: string, family = 'openai', upstreamId = id) => searchesEachReply({ id, family, upstreamId })
    expect([m('gpt-4o-search-preview'), m('gpt-4o-mini-search-preview-2025-03-11'), m('gpt-5-search-api'), m('web', 'openai', 'gpt-5-search-api-2025-10-14')]).toEqual([1, 1, 1, 1])
    expect([m('gpt-4o-mini'), m('gpt-4o-search'), m('my-search-preview-x', 'anthropic'), m('gpt-5-search-apiary')]).toEqual([0, 0, 0, 0])
  })
})
