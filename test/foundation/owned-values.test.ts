// Value sets the provider owns and grows (thinking display modes, effort levels, service tiers)
// are not frozen in the gateway: Claude Code's stream-json mode sends thinking.display
// "updates", which the gateway once refused on every session. On the surface's own family the
// value goes upstream as it is and the upstream's answer comes back; the mock takes it too.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let mock: Gateway
let g: Gateway
let up: FakeUpstream
beforeAll(async () => {
  mock = await startGateway()
  up = await startFakeUpstream()
  g = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await mock.stop()
  await g.stop()
  await up.stop()
})

const post = (gw: Gateway, path: string, body: unknown) =>
  fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

const CLAUDE_CODE = { model: 'claude-opus-5-5', max_tokens: 128_000, stream: true, thinking: { type: 'adaptive', display: 'updates' }, messages: [{ role: 'user', content: 'hi' }] }

test('thinking.display "updates" streams on the mock', async () => {
  const anthropic = new Anthropic({ apiKey: mock.key, baseURL: `${mock.url}/api/beta`, maxRetries: 0 })
  const stream = await anthropic.beta.messages.create(CLAUDE_CODE as never)
  let last = ''
  for await (const ev of stream as unknown as AsyncIterable<{ type: string }>) last = ev.type
  expect(last).toBe('message_stop')
})

test('thinking.display "updates" goes to a Claude upstream as it is', async () => {
  up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
  const r = await post(g, '/api/beta/v1/messages?beta=true', CLAUDE_CODE)
  expect(r.status).toBe(200)
  await r.text()
  expect(up.requests.at(-1)!.json().thinking).toEqual({ type: 'adaptive', display: 'updates' })
})

test("a value the upstream refuses comes back with the upstream's own 400", async () => {
  up.script({ status: 400, json: fixtureJson('openai/chat/error-400-unsupported-value.json') })
  const r = await post(g, '/api/alpha/v1/chat/completions', { model: 'gpt-5', reasoning_effort: 'ludicrous', service_tier: 'turbo', messages: [{ role: 'user', content: 'hi' }] })
  const sent = up.requests.at(-1)!.json()
  expect(sent.reasoning_effort).toBe('ludicrous')
  expect(sent.service_tier).toBe('turbo')
  expect(r.status).toBe(400)
  expect(JSON.stringify(await r.json())).toContain(fixtureJson('openai/chat/error-400-unsupported-value.json').error.message.slice(0, 40))
})

test('translated to the other family, an unknown value is a 400 naming field and value, before any upstream call', async () => {
  const before = up.requests.length
  const r = await post(g, '/api/beta/v1/messages', { ...CLAUDE_CODE, model: 'gpt-5', stream: false })
  expect(r.status).toBe(400)
  expect(JSON.stringify(await r.json())).toContain(String.raw`thinking.display: \"updates\"`)
  expect(up.requests.length).toBe(before)
})
