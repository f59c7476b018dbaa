// The hold on a Claude prompt follows its cache breakpoints wherever they are sent from: a
// breakpoint in a stored thread's history is sent again with every turn that continues it (and
// Anthropic writes at it), and a model reached as a fallback is held anew at the price of the
// same breakpoints. Either held at input alone, a key near its credit would overshoot it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { burstAs, postAs } from '../helpers/burst.ts'

let up: FakeUpstream
let g: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  // Anthropic bills what the request it was sent asks for (4,000 prompt tokens, under the
  // gateway's bound of their bytes); the OpenAI deployment is down, so its model falls back
  up.script((req) => {
    if (req.path.includes('chat/completions')) return { status: 503, json: { error: { message: 'down', type: 'server_error' } } }
    const sent = JSON.stringify(req.json())
    const writes = sent.includes('"ttl":"1h"') ? '1h' : sent.includes('"cache_control"') ? '5m' : 'none'
    const prompt = 4_000
    const usage = writes === 'none' ? { input_tokens: prompt, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
      : { input_tokens: 0, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: prompt,
          cache_creation: { ephemeral_5m_input_tokens: writes === '5m' ? prompt : 0, ephemeral_1h_input_tokens: writes === '1h' ? prompt : 0 } }
    return { waitMs: 200, json: { ...fixtureJson('anthropic/messages/nonstream-text.json'), id: `msg_${crypto.randomUUID()}`, usage } }
  })
  g = await startGateway({
    logLevel: 'silent',
    yaml: `
providers:
  - { id: anth, kind: anthropic, base_url: ${up.url}, api_key: sk-up-a, max_retries: 0 }
  - { id: oai, kind: openai, base_url: ${up.url}, api_key: sk-up-o, max_retries: 0 }
models:
  - { id: claude-haiku-4-5, family: anthropic }
  - { id: gpt-4.1-nano, family: openai, fallbacks: [claude-haiku-4-5] }
routing: { failures_to_cool: 1000 }
compat:
  cross_family: translate
`,
    env: { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' },
  })
})
afterAll(async () => {
  await g?.stop()
  await up?.stop()
})

const post = (key: string, path: string, body: unknown) => postAs(g, key, path, body)
const burst = (key: string, keyId: string, path: string, body: unknown) => burstAs(g, { key, id: keyId }, path, body)

// claude-haiku-4-5: $1 a million input tokens, $1.25 five minutes' writes, $2 an hour's, $5 output
const text = '7 '.repeat(2_000)
const REPLY = 16 * 5e-6

test("a breakpoint in a stored thread's history: every turn that continues it is held at the write", async () => {
  const { key, record } = await g.services.keys.create({ name: 'thread', credits: 0.02 })
  const first = await post(key, '/api/alpha/v1/responses', { model: 'claude-haiku-4-5', max_output_tokens: 16, input: [{ role: 'user', content: [{ type: 'input_text', text, prompt_cache_breakpoint: { mode: 'explicit' } }] }] })
  expect(first.status).toBe(200)
  const { id } = (await first.json()) as { id: string }
  const r = await burst(key, record.id, '/api/alpha/v1/responses', { model: 'claude-haiku-4-5', max_output_tokens: 16, store: false, previous_response_id: id, input: 'And then?' })
  // the history's breakpoint went upstream with the turn: Anthropic wrote the prompt
  expect(JSON.stringify(up.requests.at(-1)!.json())).toContain('"cache_control"')
  // each turn costs about $0.0051 and is held at about $0.0052: 3 of them after the first, not 4 as at input's $0.0041
  expect(r.served).toBe(3)
  expect(r.spent).toBeLessThan(0.02 + 4_000 * 1.25e-6 + REPLY)
})

test('a fallback to Claude is held anew at the write its breakpoints ask for', async () => {
  const { key, record } = await g.services.keys.create({ name: 'fallback', credits: 0.02 })
  const body = { model: 'gpt-4.1-nano', max_tokens: 16, messages: [{ role: 'system', content: [{ type: 'text', text, cache_control: { type: 'ephemeral', ttl: '1h' } }] }, { role: 'user', content: 'Hi' }] }
  const r = await burst(key, record.id, '/api/alpha/v1/chat/completions', body)
  expect(up.requests.at(-1)!.path).toContain('/v1/messages')
  // an hour's write, $0.0081 a reply: 3 served on $0.02
  expect(r.served).toBe(3)
  expect(r.spent).toBeLessThan(0.02 + 4_000 * 2e-6 + REPLY)
})
