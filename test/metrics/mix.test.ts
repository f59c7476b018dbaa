// GET /metrics after a known mix of requests through the official SDKs: both families, the three
// surfaces, streamed and not, an upstream failure failed over and one not, a request refused for
// credit, two refused by rate limits (a key's, an address's) and a batch with a failing item.
// The counters must say exactly what was sent, and their tokens and cost what the usage report
// and the generation records say.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { fixture, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { byLabels, parseMetrics, total, type Sample } from './parse.ts'

const ADMIN = 'adm-metrics-' + crypto.randomUUID()
const ask = { messages: [{ role: 'user' as const, content: 'hi' }] }
const CHAT = fixture('openai/chat/nonstream-text.json')
const CHAT_STREAM = fixture('openai/chat/stream-text-include-usage.sse')
const RESPONSE = fixture('openai/responses/nonstream-reasoning-tokens.json')
const RESPONSE_STREAM = fixture('openai/responses/stream-text.sse')
const MESSAGE = fixture('anthropic/messages/nonstream-cache-read-and-write.json')
const MESSAGE_STREAM = fixture('anthropic/messages/stream-text.sse')
const BOOM = { status: 500, json: { error: { message: 'boom', type: 'server_error' } } }

/** An OpenAI upstream serving chat and responses, streamed or not; a body asking to fail gets a 400, one asking to be slow waits. */
const openaiReply = (r: RecordedRequest) => {
  const body = r.json()
  const text = JSON.stringify(body)
  if (text.includes('fail me')) return { status: 400, json: { error: { message: 'no', type: 'invalid_request_error' } } }
  if (text.includes('slow')) return { json: CHAT, waitMs: 300 }
  if (r.path.includes('/responses')) return body.stream ? { sse: RESPONSE_STREAM } : { json: RESPONSE }
  return body.stream ? { sse: CHAT_STREAM } : { json: CHAT }
}

let a: FakeUpstream
let b: FakeUpstream
let claude: FakeUpstream
let gw: Gateway
let claudeDown = false

beforeAll(async () => {
  ;[a, b, claude] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()])
  // a's first call fails (a failover), then it serves; b always serves; claude serves until told not to
  a.script(BOOM, openaiReply)
  b.script(openaiReply)
  claude.script((r) => (claudeDown ? BOOM : r.json().stream ? { sse: MESSAGE_STREAM } : { json: MESSAGE }))
  gw = await startGateway({
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN },
    yaml: `
server: { trusted_proxies: ['127.0.0.1'] }
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
  - { id: claude, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: openai-a, priority: 1 }, { provider: openai-b, priority: 2 }]
  - id: claude-haiku-4-5
    family: anthropic
    deployments: [{ provider: claude }]
routing: { cooldown_s: 120, failures_to_cool: 1 }
limits: { ip_rpm: 20, key_rpm: 100000, key_burst_rps: 10000 }
batches: { workers: 1 }
`,
  })
})

afterAll(async () => {
  await gw?.stop()
  await Promise.all([a?.stop(), b?.stop(), claude?.stop()])
})

const admin = (path: string, body?: unknown) =>
  fetch(gw.url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

/** Each client comes from an address of its own (through the trusted proxy), under the address limit. */
const openai = (apiKey: string, from: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0, defaultHeaders: { 'x-forwarded-for': from } })
const anthropic = (apiKey: string, from: string) => new Anthropic({ apiKey, baseURL: `${gw.url}/api/beta`, maxRetries: 0, defaultHeaders: { 'x-forwarded-for': from } })

async function newKey(body: Record<string, unknown>): Promise<string> {
  const res = await admin('/admin/v1/keys', { name: 'metrics', ...body })
  expect(res.status).toBe(201)
  return ((await res.json()) as { key: string }).key
}

async function scrape(accept?: string): Promise<{ res: Response; text: string }> {
  const res = await fetch(gw.url + '/metrics', { headers: { authorization: `Bearer ${ADMIN}`, ...(accept ? { accept } : {}) } })
  return { res, text: await res.text() }
}

/** Records are taken just after the reply's last byte: wait (in the process: scrapes count against the address limit) until the counters have them all, then scrape. */
async function settled(requests: number): Promise<Sample[]> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await Bun.sleep(20)) {
    if (total(parseMetrics(await gw.services.metrics!.scrape('prometheus')), 'switchyard_requests_total') >= requests) break
  }
  const { res, text } = await scrape()
  expect(res.status).toBe(200)
  return parseMetrics(text)
}

const errorStatus = async (p: Promise<unknown>) => {
  const e = await p.then(() => null, (e: unknown) => e)
  return (e as { status?: number } | null)?.status
}

describe('GET /metrics after a known mix', () => {
  let samples: Sample[]

  beforeAll(async () => {
    const oa = openai(gw.key, '198.51.100.1')
    // chat: one failed over from openai-a to openai-b (a rests from then on), one streamed
    await oa.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    for await (const _ of await oa.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true, stream_options: { include_usage: true } }));
    // responses: plain and streamed
    await oa.responses.create({ model: 'gpt-4o-mini', input: 'hi' })
    for await (const _ of await oa.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true }));
    // messages: plain and streamed
    const an = anthropic(gw.key, '198.51.100.2')
    await an.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, ...ask })
    for await (const _ of await an.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, ...ask, stream: true }));
    // a key of less credit than its first request's worst case: while that one runs, a second is
    // refused by the pipeline's admission; once it has spent the credit, a third at the front
    const poor = openai(await newKey({ credits: 0.00001 }), '198.51.100.3')
    const sent = b.requests.length
    const first = poor.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] })
    while (b.requests.length === sent) await Bun.sleep(5)
    expect(await errorStatus(poor.chat.completions.create({ model: 'gpt-4o-mini', ...ask }))).toBe(402)
    await first
    await gw.services.recorder.flush()
    expect(await errorStatus(poor.chat.completions.create({ model: 'gpt-4o-mini', ...ask }))).toBe(402)
    // a key of one request a minute: the second is refused at the front, never reaching the pipeline
    const slow = openai(await newKey({ rpm: 1 }), '198.51.100.4')
    await slow.chat.completions.create({ model: 'gpt-4o-mini', ...ask })
    expect(await errorStatus(slow.chat.completions.create({ model: 'gpt-4o-mini', ...ask }))).toBe(429)
    // an address past its 20 requests a minute
    const busy = openai(gw.key, '198.51.100.5')
    for (let i = 0; i < 20; i++) await busy.models.list()
    expect(await errorStatus(busy.models.list())).toBe(429)
    // a batch of three chat items, one of which its upstream refuses
    const ba = openai(gw.key, '198.51.100.6')
    const lines = ['one', 'two', 'fail me'].map((content, i) => JSON.stringify({ custom_id: `c${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } }))
    const file = await ba.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'in.jsonl'), purpose: 'batch' })
    const batch = await ba.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    for (const deadline = Date.now() + 20_000; !(await gw.services.batches.store.byId(batch.id))?.endedAt; ) {
      if (Date.now() > deadline) throw new Error('the batch did not end')
      await Bun.sleep(20)
    }
    // last, an upstream failure with nowhere to fail over to
    claudeDown = true
    expect(await errorStatus(an.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, ...ask }))).toBeGreaterThanOrEqual(500)
    samples = await settled(10)
  }, 60_000)

  test('requests by surface, model, provider, family and status: interactive ones that reached the pipeline', () => {
    expect(byLabels(samples, 'switchyard_requests_total', ['surface', 'model', 'provider', 'family', 'status'])).toEqual({
      'surface=chat,model=gpt-4o-mini,provider=openai-b,family=openai,status=200': 4,
      // refused for credit: named by the model's first deployment, as nothing was sent
      'surface=chat,model=gpt-4o-mini,provider=openai-a,family=openai,status=402': 1,
      'surface=responses,model=gpt-4o-mini,provider=openai-b,family=openai,status=200': 2,
      'surface=messages,model=claude-haiku-4-5,provider=claude,family=anthropic,status=200': 2,
      'surface=messages,model=claude-haiku-4-5,provider=claude,family=anthropic,status=502': 1,
    })
    // each recorded request has a duration; the three streams that produced output a first token
    expect(total(samples, 'switchyard_request_duration_seconds_count')).toBe(9)
    expect(byLabels(samples, 'switchyard_time_to_first_token_seconds_count', ['surface'])).toEqual({ 'surface=chat': 1, 'surface=responses': 1, 'surface=messages': 1 })
    expect(total(samples, 'switchyard_request_duration_seconds_bucket', { le: '+Inf' })).toBe(9)
  })

  test('upstream calls, the failover, the providers at rest, the refusals and the batch', () => {
    expect(byLabels(samples, 'switchyard_upstream_requests_total', ['provider', 'status'])).toEqual({
      'provider=openai-a,status=502': 1,
      'provider=openai-b,status=200': 6,
      'provider=claude,status=200': 2,
      'provider=claude,status=502': 1,
    })
    expect(total(samples, 'switchyard_upstream_duration_seconds_count')).toBe(10)
    expect(byLabels(samples, 'switchyard_failovers_total', ['provider'])).toEqual({ 'provider=openai-a': 1 })
    expect(byLabels(samples, 'switchyard_provider_cooldown', ['provider'])).toEqual({ 'provider=openai-a': 1, 'provider=claude': 1 })
    expect(total(samples, 'switchyard_provider_cooldown', { provider: 'openai-b' })).toBe(0)
    expect(byLabels(samples, 'switchyard_rate_limited_total', ['scope'])).toEqual({ 'scope=key': 1, 'scope=ip': 1 })
    expect(total(samples, 'switchyard_credits_refused_total')).toBe(2)
    expect(total(samples, 'switchyard_open_streams')).toBe(0)
    expect(byLabels(samples, 'switchyard_batch_items_total', ['status'])).toEqual({ 'status=succeeded': 2, 'status=failed': 1 })
    expect(byLabels(samples, 'switchyard_batches', ['status'])).toEqual({ 'status=completed': 1 })
    expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000)
    expect(total(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0)
    expect(samples.some((s) => s.name === 'switchyard_event_loop_lag_seconds')).toBe(true)
  })

  test('tokens and cost are those of the usage report and the generation records, batch items included', async () => {
    const report = (await (await admin('/api/v1/usage')).json()) as { totals: Record<string, number> }
    const listed = (await (await admin('/api/v1/generations?limit=200')).json()) as { data: { endpoint: string; usage: Record<string, any> }[] }
    const records = listed.data
    // nine interactive records and the batch's three items
    expect(report.totals.total_requests).toBe(12)
    expect(records.length).toBe(12)
    const sum = (f: (u: Record<string, any>) => number) => records.reduce((n, r) => n + f(r.usage), 0)
    const tokens = (type: string) => total(samples, 'switchyard_tokens_total', { type })
    expect(tokens('input') + tokens('cache_read') + tokens('cache_write')).toBe(report.totals.input_tokens!)
    expect(tokens('output')).toBe(report.totals.output_tokens!)
    expect(tokens('cache_read')).toBe(sum((u) => u.cache_read_input_tokens))
    expect(tokens('cache_write')).toBe(sum((u) => u.cache_creation_input_tokens))
    expect(tokens('reasoning')).toBe(sum((u) => u.completion_tokens_details?.reasoning_tokens ?? 0))
    // the fixtures carry every kind of token
    for (const type of ['input', 'output', 'cache_read', 'cache_write', 'reasoning']) expect(tokens(type)).toBeGreaterThan(0)
    const cost = total(samples, 'switchyard_cost_usd_total')
    expect(cost).toBeGreaterThan(0)
    expect(Math.abs(cost - report.totals.total_cost!)).toBeLessThan(1e-12)
    // by surface too: the batch's chat items count as chat
    const chatRecords = records.filter((r) => r.endpoint === 'openai.chat.completions')
    expect(total(samples, 'switchyard_tokens_total', { surface: 'chat', type: 'output' })).toBe(chatRecords.reduce((n, r) => n + r.usage.completion_tokens, 0))
  })

  test('OpenMetrics when the Accept header asks for it, and the admin token guards it', async () => {
    const om = await scrape('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5')
    expect(om.res.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8')
    expect(om.text.endsWith('# EOF\n')).toBe(true)
    expect(om.text).toContain('# TYPE switchyard_requests counter\n')
    expect(om.text).toContain('\nswitchyard_requests_total{')
    const text = await scrape()
    expect(text.res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(text.text).toContain('# TYPE switchyard_requests_total counter\n')
    expect(text.text).not.toContain('# EOF')
    // the same series in both
    expect(parseMetrics(om.text.replace('# EOF\n', '')).filter((s) => s.name.startsWith('switchyard_requests')).length).toBe(parseMetrics(text.text).filter((s) => s.name.startsWith('switchyard_requests')).length)
    expect((await fetch(gw.url + '/metrics')).status).toBe(401)
    expect((await fetch(gw.url + '/metrics', { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(401)
    // no key id, account or secret without per_key
    expect(text.text).not.toContain(gw.key)
    expect(text.text).not.toContain('key_id=')
  })
})

test('open streams: one while a stream runs, none once its client has gone', async () => {
  const up = await startFakeUpstream()
  // three events, then nothing more: the stream stays open until the client leaves
  up.script({ sse: CHAT_STREAM.split('\n\n').slice(0, 3).join('\n\n') + '\n\n', hold: true })
  const g = await startGateway({ env: upstreamEnv(up), yaml: 'metrics: { public: true }\n' })
  const open = async () => total(parseMetrics(await (await fetch(g.url + '/metrics')).text()), 'switchyard_open_streams')
  try {
    const client = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', ...ask, stream: true })
    const it = stream[Symbol.asyncIterator]()
    await it.next()
    expect(await open()).toBe(1)
    stream.controller.abort()
    for (const deadline = Date.now() + 5_000; (await open()) !== 0 && Date.now() < deadline; ) await Bun.sleep(20)
    expect(await open()).toBe(0)
  } finally {
    await g.stop()
    await up.stop()
  }
})

describe('metrics settings', () => {
  test('without an admin token the route does not exist; metrics.public serves it to anyone, per_key adds key ids and accounts', async () => {
    const closed = await startGateway()
    try {
      expect((await fetch(closed.url + '/metrics')).status).toBe(404)
    } finally {
      await closed.stop()
    }
    const open = await startGateway({ yaml: 'metrics: { public: true, per_key: true }\n' })
    try {
      const client = new OpenAI({ apiKey: open.key, baseURL: `${open.url}/api/alpha/v1`, maxRetries: 0 })
      await client.chat.completions.create({ model: 'mock-gpt', ...ask })
      const id = (await open.services.keys.authenticate(open.key))!.id
      let text = ''
      for (const deadline = Date.now() + 5_000; !text.includes('switchyard_requests_total{') && Date.now() < deadline; await Bun.sleep(20)) {
        const res = await fetch(open.url + '/metrics')
        expect(res.status).toBe(200)
        text = await res.text()
      }
      const s = parseMetrics(text)
      expect(byLabels(s, 'switchyard_requests_total', ['model', 'key_id', 'account', 'status'])).toEqual({ [`model=mock-gpt,key_id=${id},account=default,status=200`]: 1 })
      expect(total(s, 'switchyard_tokens_total', { key_id: id, type: 'output' })).toBeGreaterThan(0)
      // the key's id, never its secret
      expect(text).not.toContain(open.key)
    } finally {
      await open.stop()
    }
  })

  // a key whose account changed got a new series at an index the next new key was given too,
  // so that key's requests, tokens and cost were counted under the first key and its account
  test('per_key: a key whose account changed and a key made after it keep series of their own', async () => {
    const token = 'adm-' + crypto.randomUUID()
    const g = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: token }, yaml: 'metrics: { per_key: true }\n' })
    try {
      const call = (path: string, method: string, body: unknown) => fetch(g.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ id: string; key: string }>)
      const ask1 = (key: string) => new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 }).chat.completions.create({ model: 'mock-gpt', ...ask })
      const alice = await call('/admin/v1/keys', 'POST', { name: 'alice', account: 'tenant-a' })
      await ask1(alice.key)
      await call(`/admin/v1/keys/${alice.id}`, 'PATCH', { account: 'tenant-a2' })
      await ask1(alice.key)
      const carol = await call('/admin/v1/keys', 'POST', { name: 'carol', account: 'tenant-c' })
      for (let i = 0; i < 3; i++) await ask1(carol.key)
      // and back: the pair it had is the series it had (a second series of one label set is refused by Prometheus)
      await call(`/admin/v1/keys/${alice.id}`, 'PATCH', { account: 'tenant-a' })
      await ask1(alice.key)
      const want = { [`key_id=${alice.id},account=tenant-a,status=200`]: 2, [`key_id=${alice.id},account=tenant-a2,status=200`]: 1, [`key_id=${carol.id},account=tenant-c,status=200`]: 3 }
      let got: Record<string, number> = {}
      let lines: string[] = []
      for (const deadline = Date.now() + 5_000; JSON.stringify(got) !== JSON.stringify(want) && Date.now() < deadline; await Bun.sleep(20)) {
        const text = await (await fetch(g.url + '/metrics', { headers: { authorization: `Bearer ${token}` } })).text()
        got = byLabels(parseMetrics(text), 'switchyard_requests_total', ['key_id', 'account', 'status'])
        lines = text.split('\n').filter((l) => l.startsWith('switchyard_requests_total{'))
      }
      expect(got).toEqual(want)
      expect(new Set(lines.map((l) => l.slice(0, l.lastIndexOf(' ')))).size).toBe(lines.length)
    } finally {
      await g.stop()
    }
  })
})
