// Traces to an OTLP/HTTP collector (a receiver in the test, decoding protobuf and JSON): one span
// per request and one per upstream call under it, in the GenAI conventions; a client's
// traceparent continued, and the upstream seeing the call's own; content only when asked for;
// a collector that is down costs the client nothing; batch items under their batch's span.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { droppedSpans } from '../../src/tracing/dropped.ts'
import { batchIds } from '../../src/tracing/batch.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { startBatchRig } from '../batches/helpers.ts'

const TEXT = fixture('openai/chat/nonstream-text.json')
const CHAT_SSE = fixture('openai/chat/stream-text-include-usage.sse')
const CLAUDE_SSE = fixture('anthropic/messages/stream-text.sse')
const NO_LIMITS = 'limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }'
const INCOMING = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }

let a: FakeUpstream
let b: FakeUpstream
let claude: FakeUpstream
let otlp: OtlpReceiver
beforeAll(async () => {
  ;[a, b, claude, otlp] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream(), startOtlpReceiver()])
})
afterAll(async () => {
  await Promise.all([a.stop(), b.stop(), claude.stop(), otlp.stop()])
})

let gw: Gateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
  for (const u of [a, b, claude]) u.requests.length = 0
  otlp.spans.length = 0
  otlp.exports.length = 0
})

const YAML = (extra = '') => `
providers:
  - { id: openai-a, kind: openai, base_url: ${a.url}/v1, api_key: sk-a, max_retries: 0 }
  - { id: openai-b, kind: openai, base_url: ${b.url}/v1, api_key: sk-b, max_retries: 0 }
  - { id: claude-a, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments:
      - { provider: openai-a, priority: 1 }
      - { provider: openai-b, priority: 2, upstream_id: gpt-4o-mini-2024-07-18 }
routing: { failures_to_cool: 5 }
${NO_LIMITS}
${extra}
`

async function gateway(env: Record<string, string> = {}, extra = '') {
  gw = await startGateway({
    yaml: YAML(extra),
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_SERVICE_NAME: 'gw-under-test', ...env },
  })
  return gw
}

const chat = (g: Gateway, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'name a holiday, secret-prompt-words' }], max_tokens: 400, temperature: 0.25 }

const byKind = (spans: ReceivedSpan[], kind: number) => spans.filter((s) => s.kind === kind)
/** The request's span and its calls, once the request span has arrived with `calls` calls under it. */
async function requestSpans(calls = 1): Promise<{ server: ReceivedSpan; clients: ReceivedSpan[] }> {
  const spans = await otlp.waitFor((s) => byKind(s, SPAN_KIND.server).length === 1 && byKind(s, SPAN_KIND.client).length === calls)
  const server = byKind(spans, SPAN_KIND.server)[0]!
  return { server, clients: byKind(spans, SPAN_KIND.client).sort((x, y) => Number(x.startNs - y.startNs)) }
}

describe('spans over OTLP/HTTP protobuf (the default)', () => {
  test('a chat request: a server span in the GenAI conventions, a client span under it, the upstream sent that span as its traceparent', async () => {
    a.script({ json: TEXT })
    const g = await gateway({ OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=tok%20en' })
    const res = await chat(g, ask)
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    const reply = (await res.json()) as any
    const { server, clients } = await requestSpans()
    const [client] = clients

    expect(otlp.exports[0]!.contentType).toBe('application/x-protobuf')
    expect(otlp.exports[0]!.headers.get('x-collector-token')).toBe('tok en')
    expect(server.resource['service.name']).toBe('gw-under-test')
    expect(server.scope).toBe('switchyard')
    expect(server.name).toBe('chat gpt-4o-mini')
    expect(server.parentSpanId).toBe('')
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 400,
      'gen_ai.request.temperature': 0.25,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': reply.id,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': reply.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': reply.usage.completion_tokens,
      'http.response.status_code': 200,
      'switchyard.surface': 'chat',
      'switchyard.stream': false,
      'switchyard.request.id': requestId,
      'switchyard.account': 'default',
      'switchyard.provider': 'openai-a',
      'switchyard.attempts': 1,
    })
    expect(server.attributes['switchyard.key.id']).toStartWith('key_')
    expect(server.attributes['switchyard.cost_usd']).toBeGreaterThan(0)
    expect(server.status.code).toBe(0)

    // the record the trace names is the one the gateway stored
    const gen = String(server.attributes['switchyard.generation.id'])
    const rec = await fetch(`${g.url}/api/v1/generations?id=${gen}`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(((await rec.json()) as any).generation).toMatchObject({ gateway_id: gen, id: reply.id })

    expect(client!.traceId).toBe(server.traceId)
    expect(client!.parentSpanId).toBe(server.spanId)
    expect(client!.name).toBe('chat gpt-4o-mini')
    expect(client!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.id': reply.id,
      'gen_ai.usage.output_tokens': reply.usage.completion_tokens,
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'switchyard.provider': 'openai-a',
    })
    expect(a.requests[0]!.headers.traceparent).toBe(`00-${server.traceId}-${client!.spanId}-01`)
  })

  test("a client's traceparent and tracestate are continued: same trace, the client's span as parent, its state carried upstream", async () => {
    a.script({ sse: CHAT_SSE })
    const g = await gateway()
    const res = await chat(g, { ...ask, stream: true }, { traceparent: `00-${INCOMING.traceId}-${INCOMING.spanId}-01`, tracestate: 'vendor=abc' })
    expect(res.status).toBe(200)
    await res.text()
    const { server, clients } = await requestSpans()
    expect(server.traceId).toBe(INCOMING.traceId)
    expect(server.parentSpanId).toBe(INCOMING.spanId)
    expect(server.traceState).toBe('vendor=abc')
    expect(server.attributes['switchyard.stream']).toBe(true)
    expect(server.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
    expect(clients[0]!.parentSpanId).toBe(server.spanId)
    // the served call spans the whole stream, so it ends no earlier than its last byte was read
    expect(clients[0]!.endNs).toBeGreaterThan(clients[0]!.startNs)
    const sent = a.requests[0]!.headers
    expect(sent.traceparent).toBe(`00-${INCOMING.traceId}-${clients[0]!.spanId}-01`)
    expect(sent.tracestate).toBe('vendor=abc')
  })

  test('a failover: one client span per call, the failed one an error with its status, the request span says two attempts', async () => {
    a.script({ status: 503, json: { error: { message: 'busy', type: 'server_error' } } })
    b.script({ json: TEXT })
    const g = await gateway()
    expect((await chat(g, ask)).status).toBe(200)
    const { server, clients } = await requestSpans(2)
    expect(clients.map((c) => c.attributes['switchyard.provider'])).toEqual(['openai-a', 'openai-b'])
    expect(clients.map((c) => c.parentSpanId)).toEqual([server.spanId, server.spanId])
    expect(clients[0]!.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' })
    expect(clients[0]!.status.code).toBe(2)
    expect(clients[1]!.attributes).toMatchObject({ 'http.response.status_code': 200, 'gen_ai.request.model': 'gpt-4o-mini-2024-07-18' })
    expect(clients[1]!.status.code).toBe(0)
    expect(server.attributes).toMatchObject({ 'switchyard.attempts': 2, 'switchyard.provider': 'openai-b', 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18' })
    // each upstream saw its own call's span
    expect(a.requests[0]!.headers.traceparent).toContain(clients[0]!.spanId)
    expect(b.requests[0]!.headers.traceparent).toContain(clients[1]!.spanId)
  })

  // a hit's call went to no upstream: a trace that showed it as the provider's answer (in no
  // time) made the provider look faster than it was
  test('a response-cache hit: its request span and its call say switchyard.cached; the miss before does not', async () => {
    a.script({ json: TEXT })
    const g = await gateway()
    const cached = { 'x-switchyard-cache': '60' }
    expect((await chat(g, ask, cached)).headers.get('x-switchyard-cache')).toBe('miss')
    const miss = await requestSpans(1)
    expect(miss.server.attributes['switchyard.cached']).toBeUndefined()
    expect(miss.clients[0]!.attributes['switchyard.cached']).toBeUndefined()
    otlp.spans.length = 0
    for (const end = Date.now() + 10_000; (await g.services.cache!.stats()).entries < 1 && Date.now() < end; ) await Bun.sleep(10)
    expect((await chat(g, ask, cached)).headers.get('x-switchyard-cache')).toBe('hit')
    const hit = await requestSpans(1)
    expect(hit.server.attributes['switchyard.cached']).toBe(true)
    expect(hit.clients[0]!.attributes['switchyard.cached']).toBe(true)
    expect(a.requests.length).toBe(1)
  })

  test('a request that fails upstream: the request span is an error with the status the client got', async () => {
    a.script({ status: 500, json: { error: { message: 'down', type: 'server_error' } } })
    b.script({ status: 500, json: { error: { message: 'down too', type: 'server_error' } } })
    const g = await gateway()
    const res = await chat(g, ask)
    expect(res.status).toBeGreaterThanOrEqual(500)
    const { server, clients } = await requestSpans(2)
    expect(server.attributes['http.response.status_code']).toBe(res.status)
    expect(server.attributes['error.type']).toBe(String(res.status))
    expect(server.status.code).toBe(2)
    // each call's span says what its upstream answered (500), not what the client got (502)
    for (const c of clients) expect(c.attributes['http.response.status_code']).toBe(500)
  })

  test('a call that got no answer at all (a refused connection): no response status on its span, the failure\'s kind as error.type', async () => {
    const g = await gateway({}, '')
    g.services.config.providers['openai-a']!.baseUrl = 'http://127.0.0.1:9/v1'
    b.script({ json: TEXT })
    expect((await chat(g, ask)).status).toBe(200)
    const { clients } = await requestSpans(2)
    expect(clients[0]!.attributes['http.response.status_code']).toBeUndefined()
    expect(clients[0]!.attributes['error.type']).toBe('connection_error')
    expect(clients[1]!.attributes['http.response.status_code']).toBe(200)
  })

  test('a request refused at admission (its credit held by one in progress): its span ends there, with the status and no call under it', async () => {
    a.script({ json: TEXT, waitMs: 300 })
    const g = await gateway()
    const small = await g.services.keys.create({ name: 'small', credits: 0.0001 })
    const send = () => fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${small.key}`, 'content-type': 'application/json' }, body: JSON.stringify(ask) })
    const first = send()
    await Bun.sleep(100)
    const res = await send()
    expect(res.status).toBe(402)
    expect((await first).status).toBe(200)
    const spans = await otlp.waitFor((s) => byKind(s, SPAN_KIND.server).length === 2)
    const refused = spans.find((s) => s.attributes['http.response.status_code'] === 402)!
    expect(refused.attributes).toMatchObject({ 'error.type': '402', 'switchyard.key.id': small.record.id })
    expect(spans.filter((s) => s.parentSpanId === refused.spanId)).toHaveLength(0)
    expect(a.requests).toHaveLength(1)
  })

  test('the sampler: always_off exports nothing, and the upstream still gets a traceparent (not sampled)', async () => {
    a.script({ json: TEXT })
    const g = await gateway({ OTEL_TRACES_SAMPLER: 'always_off' })
    for (let i = 0; i < 3; i++) expect((await chat(g, ask)).status).toBe(200)
    await Bun.sleep(200)
    expect(otlp.spans).toHaveLength(0)
    expect(a.requests[0]!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/)
  })

  test('parentbased (the default) follows a client that did not sample; traceidratio 1 samples every root', async () => {
    a.script({ json: TEXT })
    let g = await gateway()
    expect((await chat(g, ask, { traceparent: `00-${INCOMING.traceId}-${INCOMING.spanId}-00` })).status).toBe(200)
    await Bun.sleep(200)
    expect(otlp.spans).toHaveLength(0)
    expect(a.requests[0]!.headers.traceparent).toStartWith(`00-${INCOMING.traceId}-`)
    await gw!.stop()
    g = gw = await gateway({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' })
    expect((await chat(g, ask)).status).toBe(200)
    await requestSpans()
  })
})

describe('spans over OTLP/HTTP JSON', () => {
  test('a streamed messages request to an Anthropic provider, exported as JSON', async () => {
    claude.script({ sse: CLAUDE_SSE })
    const g = await gateway({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
    const res = await fetch(`${g.url}/api/beta/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': g.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    await res.text()
    const { server, clients } = await requestSpans()
    expect(otlp.exports[0]!.contentType).toContain('application/json')
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-haiku-4-5',
      'gen_ai.request.max_tokens': 100,
      'switchyard.surface': 'messages',
      'switchyard.provider': 'claude-a',
    })
    expect(server.attributes['gen_ai.response.finish_reasons']).toEqual(['max_tokens'])
    expect(server.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0)
    expect(clients[0]!.parentSpanId).toBe(server.spanId)
    expect(clients[0]!.attributes['gen_ai.provider.name']).toBe('anthropic')
    expect(claude.requests[0]!.headers.traceparent).toBe(`00-${server.traceId}-${clients[0]!.spanId}-01`)
  })
})

describe('content', () => {
  const CONTENT_KEYS = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions']

  test('prompts and completions are never exported by default', async () => {
    a.script({ json: TEXT })
    const g = await gateway({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
    expect((await chat(g, ask)).status).toBe(200)
    const { server, clients } = await requestSpans()
    for (const s of [server, ...clients]) for (const k of CONTENT_KEYS) expect(s.attributes[k]).toBeUndefined()
    expect(JSON.stringify(otlp.spans.map((s) => s.attributes))).not.toContain('secret-prompt-words')
    expect(JSON.stringify(otlp.spans.map((s) => s.attributes))).not.toContain('Galaxy Day')
  })

  test('with tracing.capture_content: true, the request span carries them as GenAI message lists', async () => {
    a.script({ json: TEXT })
    const g = await gateway({}, 'tracing: { capture_content: true }')
    expect((await chat(g, { ...ask, messages: [{ role: 'system', content: 'be brief' }, ...ask.messages] })).status).toBe(200)
    const { server } = await requestSpans()
    expect(JSON.parse(String(server.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', content: 'name a holiday, secret-prompt-words' }] },
    ])
    const output = JSON.parse(String(server.attributes['gen_ai.output.messages']))
    expect(output).toHaveLength(1)
    expect(output[0]).toMatchObject({ role: 'assistant', finish_reason: 'stop' })
    expect(output[0].parts[0].type).toBe('text')
    expect(output[0].parts[0].content).toContain('Galaxy Day')
  })

  test('a streamed messages request with capture_content: the system instructions and the streamed text', async () => {
    claude.script({ sse: CLAUDE_SSE })
    const g = await gateway({}, 'tracing: { capture_content: true }')
    const res = await fetch(`${g.url}/api/beta/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': g.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 100, stream: true, system: 'you are terse', messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }] }),
    })
    expect(res.status).toBe(200)
    await res.text()
    const { server } = await requestSpans()
    expect(JSON.parse(String(server.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'you are terse' }])
    expect(JSON.parse(String(server.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'hello there' }] }])
    const [out] = JSON.parse(String(server.attributes['gen_ai.output.messages']))
    expect(out.finish_reason).toBe('max_tokens')
    // what the stream relayed, its text deltas together
    expect(String(out.parts[0].content)).toStartWith('The phrase "I')
  })
})

describe('a collector that is down', () => {
  test('requests are answered as usual; the spans that could not go are dropped and counted', async () => {
    a.script({ json: TEXT })
    const before = droppedSpans()
    const g = await gateway({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_MAX_QUEUE_SIZE: '8', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4', OTEL_EXPORTER_OTLP_TIMEOUT: '500' })
    const t0 = performance.now()
    const statuses = await Promise.all(Array.from({ length: 40 }, () => chat(g, ask).then((r) => r.status)))
    const ms = performance.now() - t0
    expect(statuses.every((s) => s === 200)).toBe(true)
    // 80 spans into a queue of 8: most are dropped at once (each ends with its record, just after its reply)
    for (let i = 0; i < 100 && droppedSpans() - before < 60; i++) await Bun.sleep(10)
    expect(droppedSpans() - before).toBeGreaterThanOrEqual(60)
    expect(ms).toBeLessThan(5000)
    // and a monitoring stack sees it: the count is a series of GET /metrics
    const g2 = gw!
    g2.services.config.metrics.public = true
    // (exports still timing out drop more meanwhile: the scrape's figure lies between two reads)
    const low = droppedSpans()
    const text = await fetch(`${g2.url}/metrics`).then((r) => r.text())
    const high = droppedSpans()
    const line = text.split('\n').find((l) => l.startsWith('switchyard_spans_dropped_total '))
    const scraped = Number(line?.split(' ')[1])
    expect(scraped).toBeGreaterThanOrEqual(low)
    expect(scraped).toBeLessThanOrEqual(high)
    await gw!.stop()
    gw = undefined
    // at shutdown what was still queued is counted too: every span is accounted for
    expect(droppedSpans() - before).toBe(80)
  }, 20_000)
})

describe('batches', () => {
  test("a batch's items are spans under the batch's span, whose ids come from the batch id", async () => {
    const rig = await startBatchRig({ upstream: false, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20', SWITCHYARD_BATCH_WORKERS: '2' } })
    try {
      const requests = [1, 2, 3].map((i) => ({ custom_id: `c${i}`, model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ${i}` }] }))
      const res = await rig.call('POST', '/api/v1/batches', { requests })
      const id = ((await res.json()) as any).id
      await rig.ended(id)
      const { traceId, spanId } = batchIds(id)
      // the batch's span, and each item's with its call to the (mock) provider
      const spans = await otlp.waitFor((s) => s.filter((x) => x.traceId === traceId).length === 7)
      const inTrace = spans.filter((s) => s.traceId === traceId)
      const batch = inTrace.find((s) => s.spanId === spanId)!
      expect(batch.name).toBe('batch /v1/chat/completions')
      expect(batch.parentSpanId).toBe('')
      expect(batch.attributes).toMatchObject({ 'switchyard.batch.id': id, 'switchyard.batch.status': 'completed', 'switchyard.batch.total': 3, 'switchyard.batch.succeeded': 3 })
      const items = inTrace.filter((s) => s.kind === SPAN_KIND.internal && s.spanId !== spanId)
      expect(items).toHaveLength(3)
      for (const item of items) {
        expect(item.parentSpanId).toBe(spanId)
        expect(item.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mock-gpt', 'switchyard.batch.id': id, 'switchyard.provider': 'mock' })
        // each item's call to the (mock) provider is under it
        const calls = inTrace.filter((s) => s.kind === SPAN_KIND.client && s.parentSpanId === item.spanId)
        expect(calls).toHaveLength(1)
      }
    } finally {
      await rig.stop()
    }
  }, 30_000)
})
