// Several deployments of one model, end to end through the official SDK: load shared by
// weight, a failing deployment left for its rest and tried again after it, fallbacks when a
// model's every deployment is down, and never a switch once the client has a byte.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const TEXT = fixture('openai/chat/nonstream-text.json')
const STREAM = fixture('openai/chat/stream-text-include-usage.sse')
const CLAUDE_TEXT = fixture('anthropic/messages/nonstream-text.json')
const ask = { messages: [{ role: 'user' as const, content: 'hi' }] }

let a: FakeUpstream
let b: FakeUpstream
let claude: FakeUpstream
beforeAll(async () => {
  ;[a, b, claude] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()])
})
afterAll(async () => {
  await Promise.all([a.stop(), b.stop(), claude.stop()])
})

let gw: Gateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
  for (const u of [a, b, claude]) u.requests.length = 0
})

/** A gateway whose gpt-4o-mini has deployments on a and b, and gpt-4o-mini's fallback on claude. */
async function gateway(opts: { weights?: [number, number]; priorities?: [number, number]; fallbacks?: boolean; cooldownS?: number; failures?: number; timeoutMs?: number } = {}) {
  const [wa, wb] = opts.weights ?? [1, 1]
  const [pa, pb] = opts.priorities ?? [1, 1]
  const yaml = `
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0${opts.timeoutMs ? `, timeout_ms: ${opts.timeoutMs}` : ''} }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
  - { id: claude-a, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments:
      - { provider: openai-a, weight: ${wa}, priority: ${pa} }
      - { provider: openai-b, weight: ${wb}, priority: ${pb}, upstream_id: gpt-4o-mini-2024-07-18 }
${opts.fallbacks ? '    fallbacks: [claude-haiku-4-5]' : ''}
routing: { cooldown_s: ${opts.cooldownS ?? 30}, failures_to_cool: ${opts.failures ?? 1} }
compat: { cross_family: translate }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`
  gw = await startGateway({ yaml })
  return { gw, client: new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 }) }
}

/** A gateway whose gpt-4o-mini tries a (with `retries` of its own) before b, within a deadline of 0.5 s. */
async function deadlineGateway(retries: number) {
  const yaml = `
providers:
  - { id: first, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: ${retries} }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: first, priority: 1 }, { provider: openai-b, priority: 2 }]
routing: { deadline_s: 0.5 }
`
  gw = await startGateway({ yaml })
  return new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
}

async function record(gw: Gateway, id: string) {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { generation: Record<string, any> }).generation
}

describe('several deployments of one model', () => {
  test('weights 3:1 send about three quarters of the requests to the heavier deployment', async () => {
    a.script({ json: TEXT })
    b.script({ json: TEXT })
    const { client } = await gateway({ weights: [3, 1] })
    for (let i = 0; i < 400; i += 20) await Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create({ model: 'gpt-4o-mini', ...ask })))
    const share = a.requests.length / 400
    expect(a.requests.length + b.requests.length).toBe(400)
    expect(share).toBeGreaterThanOrEqual(0.65)
    expect(share).toBeLessThanOrEqual(0.85)
    // each deployment is sent the model id it knows the model by
    expect(a.requests[0]!.json().model).toBe('gpt-4o-mini')
    expect(b.requests[0]!.json().model).toBe('gpt-4o-mini-2024-07-18')
  }, 60_000)

  test('every priority-1 deployment is tried before a priority-2 one', async () => {
    a.script({ json: TEXT })
    b.script({ json: TEXT })
    const { client } = await gateway({ priorities: [2, 1] })
    for (let i = 0; i < 10; i++) await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    expect(b.requests.length).toBe(10)
    expect(a.requests.length).toBe(0)
  })

  test('a deployment that answers 500 is failed over (JSON and stream), rests, and gets one probe after its rest', async () => {
    a.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    b.script((r) => (r.json().stream ? { sse: STREAM } : { json: TEXT }))
    const { gw, client } = await gateway({ priorities: [1, 2], cooldownS: 1 })
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).withResponse()
    expect(res.response.status).toBe(200)
    expect(res.response.headers.get('x-switchyard-provider')).toBe('openai-b')
    const rec = await record(gw, res.data.id)
    expect(rec.provider).toBe('openai-b')
    expect(rec.deployment).toBe('gpt-4o-mini-2024-07-18')
    expect(rec.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])).toEqual([['openai-a', 502], ['openai-b', 200]])

    // resting: the failed deployment gets nothing, streams included
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text.length).toBeGreaterThan(0)
    for (let i = 0; i < 5; i++) await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    expect(a.requests.length).toBe(1)

    // after the rest one probe goes; it succeeds now, so the deployment takes traffic again
    a.script({ json: TEXT })
    await Bun.sleep(1100)
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    expect(a.requests.length).toBe(4)
  })

  test('a connection refused and a timeout before the first byte are failed over too', async () => {
    const down = await startFakeUpstream()
    const url = down.url
    await down.stop()
    b.script({ json: TEXT })
    const yaml = `
providers:
  - { id: gone, kind: openai, base_url: ${url}/v1, api_key: sk-x, max_retries: 0 }
  - { id: slow, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0, timeout_ms: 200 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: gone, priority: 1 }, { provider: slow, priority: 2 }, { provider: openai-b, priority: 3 }]
`
    a.script({ json: TEXT, waitMs: 1000 })
    gw = await startGateway({ yaml })
    const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    const rec = await record(gw, r.id)
    expect(rec.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])).toEqual([['gone', 502], ['slow', 504], ['openai-b', 200]])
  })

  test("every deployment down: the model's fallback serves, and its model is the record's", async () => {
    a.script({ status: 503, json: { error: { message: 'overloaded' } } })
    b.script({ status: 503, json: { error: { message: 'overloaded' } } })
    claude.script({ json: CLAUDE_TEXT })
    const { gw, client } = await gateway({ fallbacks: true })
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).withResponse()
    expect(res.response.status).toBe(200)
    expect(res.response.headers.get('x-switchyard-provider')).toBe('claude-a')
    expect(claude.requests[0]!.path).toBe('/v1/messages')
    const rec = await record(gw, res.data.id)
    expect(rec.model).toBe('claude-haiku-4-5')
    expect(rec.attempts.map((x: { provider: string }) => x.provider)).toEqual(expect.arrayContaining(['openai-a', 'openai-b', 'claude-a']))
  })

  test("a deployment whose only key the upstream refuses (401) is failed over and rests, though retry_on has no 401; the request's own 4xx is not", async () => {
    const refused = fixture('openai/chat/error-401-invalid-api-key.json')
    a.script({ status: 401, json: refused })
    b.script({ json: TEXT })
    const { gw, client } = await gateway({ priorities: [1, 2], failures: 2 })
    for (let i = 0; i < 4; i++) {
      const res = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).withResponse()
      expect(res.response.headers.get('x-switchyard-provider')).toBe('openai-b')
    }
    // two refusals in a row, then it rests
    expect(a.requests.length).toBe(2)
    const list = await fetch(`${gw.url}/api/v1/generations?limit=1`, { headers: { authorization: `Bearer ${gw.key}` } }).then((r) => r.json() as Promise<{ data: Record<string, any>[] }>)
    expect(list.data[0]!.attempts.map((x: { provider: string; status: number }) => x.provider)).toEqual(['openai-b'])
    // a request the upstream refuses as a request (400) is no deployment's fault: no other call
    await gw.stop()
    a.requests.length = 0
    b.requests.length = 0
    a.script({ status: 400, json: fixture('openai/chat/error-400-unsupported-value.json') })
    const again = await gateway({ priorities: [1, 2] })
    const err = await again.client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).catch((e) => e)
    expect(err.status).toBe(400)
    expect(b.requests.length).toBe(0)
  })

  test("every deployment's key refused: the client gets the 502 naming the credentials, each deployment tried once", async () => {
    a.script({ status: 401, json: fixture('openai/chat/error-401-invalid-api-key.json') })
    b.script({ status: 401, json: fixture('openai/chat/error-401-invalid-api-key.json') })
    const { client } = await gateway({ priorities: [1, 2] })
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).catch((e) => e)
    expect(err.status).toBe(502)
    expect(String(err.message)).toContain("rejected the gateway's credentials")
    expect(a.requests.length + b.requests.length).toBe(2)
  })

  test('without fallbacks the client gets the last upstream status, and one record', async () => {
    a.script({ status: 503, json: { error: { message: 'overloaded' } } })
    b.script({ status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'slow down' } } })
    const { gw, client } = await gateway({ priorities: [1, 2] })
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).catch((e) => e)
    expect(err.status).toBe(429)
    const list = await fetch(`${gw.url}/api/v1/generations?limit=10`, { headers: { authorization: `Bearer ${gw.key}` } }).then((r) => r.json() as Promise<{ data: Record<string, any>[] }>)
    expect(list.data.length).toBe(1)
    expect(list.data[0]!.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])).toEqual([['openai-a', 503], ['openai-b', 429]])
  })

  test('a responses reply relayed as it came names in its record the call that served, after the one that failed', async () => {
    a.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    b.script({ json: fixture('openai/responses/nonstream-text.json') })
    const { gw, client } = await gateway({ priorities: [1, 2] })
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', store: false })
    expect(b.requests[0]!.path).toBe('/v1/responses')
    const rec = await record(gw, r.id)
    expect(rec.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])).toEqual([['openai-a', 502], ['openai-b', 200]])
  })

  test('a responses request failed over from a pass-through upstream to one it must be translated for', async () => {
    a.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    b.script({ json: TEXT })
    const yaml = `
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0 }
  - { id: local, kind: openai-compatible, base_url: ${b.url}/v1 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: openai-a, priority: 1 }, { provider: local, priority: 2 }]
`
    gw = await startGateway({ yaml })
    const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', store: false })
    expect(r.status).toBe('completed')
    expect(r.output_text.length).toBeGreaterThan(0)
    expect(a.requests[0]!.path).toBe('/v1/responses')
    expect(b.requests[0]!.path).toBe('/v1/chat/completions')
    expect(b.requests[0]!.json().messages).toEqual([{ role: 'user', content: 'hi' }])
  })

  test("the request's deadline bounds reaching an upstream, failovers included, but never a reply that has begun", async () => {
    a.script({ json: TEXT, waitMs: 3000 })
    b.script({ json: TEXT })
    const client = await deadlineGateway(0)
    const t0 = performance.now()
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).catch((e) => e)
    expect(err.status).toBe(504)
    expect(performance.now() - t0).toBeLessThan(2500)
    expect(b.requests.length).toBe(0)

    // a stream still waiting for its first byte at the deadline ends the same way
    const t1 = performance.now()
    const streamErr = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true }).catch((e) => e)
    expect(streamErr.status).toBe(504)
    expect(performance.now() - t1).toBeLessThan(2500)
    expect(b.requests.length).toBe(0)

    // a stream that lasts longer than the deadline, once begun, is relayed to its end
    a.script({ sse: STREAM, delayMs: 80 })
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true })
    const started = performance.now()
    let finish: string | null | undefined
    for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish
    expect(performance.now() - started).toBeGreaterThan(500)
    expect(finish).toBe('stop')
  })

  test("a provider's own retries stop at the request's deadline, and no other deployment is tried after it", async () => {
    a.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    b.script({ json: TEXT })
    const client = await deadlineGateway(10)
    const t0 = performance.now()
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).catch((e) => e)
    expect(err.status).toBe(504)
    expect(err.message).toContain('deadline')
    expect(performance.now() - t0).toBeLessThan(2500)
    // retried with backoff until the deadline (a few times: ten would take seconds), then given up
    expect(a.requests.length).toBeGreaterThan(1)
    expect(a.requests.length).toBeLessThan(11)
    expect(b.requests.length).toBe(0)
  })

  test('an upstream that says when to come back (429 with Retry-After) is left for the next deployment at once, not waited for by its own retries', async () => {
    a.script({ status: 429, headers: { 'retry-after': '2' }, json: { error: { message: 'slow down', type: 'rate_limit_error' } } })
    b.script({ json: TEXT })
    gw = await startGateway({ yaml: `
providers:
  - { id: first, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 2 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: first, priority: 1 }, { provider: openai-b, priority: 2 }]
` })
    const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
    const t0 = performance.now()
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask }).withResponse()
    expect(res.response.headers.get('x-switchyard-provider')).toBe('openai-b')
    expect(performance.now() - t0).toBeLessThan(1_500)
    expect(a.requests.length).toBe(1)
  })

  test('a stream that fails after its first byte ends in band; it is never switched to another deployment', async () => {
    a.script({ sse: STREAM, dropAfterEvents: 2 })
    b.script({ sse: STREAM })
    const { client } = await gateway({ priorities: [1, 2] })
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true })
    const failed = await (async () => {
      for await (const _ of stream) {
        // read on
      }
    })().then(() => null, (e) => e)
    expect(failed).not.toBeNull()
    expect(b.requests.length).toBe(0)
  })
})
