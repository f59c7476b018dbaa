// A response-cache hit on /metrics: a request like any other, but no upstream call. The upstream
// series (its sends, their time to the first byte) are what an upstream error rate and latency
// are read from: hits counted there made an upstream look busier and faster than it was.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { parseMetrics, total } from './parse.ts'

const TEXT = fixture('openai/chat/nonstream-text.json')
const STREAM = fixture('openai/chat/stream-text-include-usage.sse')

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((r) => (r.json().stream ? { sse: STREAM } : { json: TEXT }))
  gw = await startGateway({
    yaml: `
providers:
  - { id: openai, kind: openai, base_url: ${up.url}/v1, api_key: sk-o, max_retries: 0 }
metrics: { public: true }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`,
  })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

test('a cache hit counts as a request, never as an upstream call or its latency', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
  const cached = { headers: { 'x-switchyard-cache': '60' } }
  const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] }
  const stored = async () => {
    const stats = gw.services.cache ? await gw.services.cache.stats() : { entries: -1 }
    return stats.entries
  }
  for (const stream of [false, true]) {
    const before = await stored()
    const first = await client.chat.completions.create({ ...ask, stream }, cached).withResponse()
    if (stream) for await (const _ of first.data as AsyncIterable<unknown>);
    expect(first.response.headers.get('x-switchyard-cache')).toBe('miss')
    for (const end = Date.now() + 10_000; (await stored()) <= before && Date.now() < end; ) await Bun.sleep(10)
    for (let i = 0; i < 3; i++) {
      const hit = await client.chat.completions.create({ ...ask, stream }, cached).withResponse()
      if (stream) for await (const _ of hit.data as AsyncIterable<unknown>);
      expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit')
    }
  }
  expect(up.requests.length).toBe(2)
  const samples = parseMetrics(await (await fetch(`${gw.url}/metrics`)).text())
  expect(total(samples, 'switchyard_requests_total', { provider: 'openai', status: '200' })).toBe(8)
  expect(total(samples, 'switchyard_upstream_requests_total', { provider: 'openai' })).toBe(2)
  expect(total(samples, 'switchyard_upstream_duration_seconds_count', { provider: 'openai' })).toBe(2)
  expect(total(samples, 'switchyard_upstream_in_flight')).toBe(0)
})
