// A chat client that sends Claude's own parameters (thinking, stop_sequences) to a GPT model under
// `compat.cross_family: translate`: the pass-through spells them in chat terms, and must spell
// them as OpenAI takes them. Claude's thinking became a `reasoning_effort` for gpt-4o, which
// refuses any, and an effort outside a reasoning model's tiers (`none` for o3); stop_sequences
// joined the client's own stop past the four OpenAI takes; and a structured output format
// (`output_config.format`) was named as translated but never sent.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_CROSS_FAMILY: 'translate' })
})
afterAll(async () => {
  await rig.stop()
})

async function send(body: object): Promise<{ status: number; compat: string | null; sent: Record<string, unknown> | undefined; error?: string }> {
  rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
  const from = rig.up.requests.length
  const res = await fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) })
  const j = await res.json()
  return { status: res.status, compat: res.headers.get('x-switchyard-compat'), sent: rig.up.requests[from]?.json(), error: j.error }
}

test('thinking to a model that does not reason: left out and named, the rest of the request served', async () => {
  const r = await send({ model: 'gpt-4o', thinking: { type: 'enabled', budget_tokens: 4000 } })
  expect(r.status).toBe(200)
  expect(r.sent!.reasoning_effort).toBeUndefined()
  expect(r.sent!.thinking).toBeUndefined()
  expect(r.compat).toBe('thinking')
})

test("thinking to a model that reasons: the model's own tier", async () => {
  expect((await send({ model: 'gpt-5.1', thinking: { type: 'enabled', budget_tokens: 30000 } })).sent!.reasoning_effort).toBe('high')
  // off: GPT-5's least is minimal; o3 always thinks, so it goes without
  expect((await send({ model: 'gpt-5', thinking: { type: 'disabled' } })).sent!.reasoning_effort).toBe('minimal')
  const o3 = await send({ model: 'o3', thinking: { type: 'disabled' } })
  expect(o3.sent!.reasoning_effort).toBeUndefined()
  expect(o3.compat).toBe('thinking')
})

test('stop_sequences beside stop past four: a 400 naming both, before any call', async () => {
  const r = await send({ model: 'gpt-4o', stop: ['a', 'b'], stop_sequences: ['X', 'Y', 'Z'] })
  expect(r.status).toBe(400)
  expect(r.error).toContain('stop_sequences: with stop, 5 stop sequences')
  expect(r.sent).toBeUndefined()
  expect((await send({ model: 'gpt-4o', stop: ['a'], stop_sequences: ['X', 'Y', 'Z'] })).sent!.stop).toEqual(['a', 'X', 'Y', 'Z'])
})

test('a structured output format (output_config.format) goes as the response format; its effort as the model takes it', async () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
  const r = await send({ model: 'gpt-4o', output_config: { effort: 'low', format: { type: 'json_schema', schema } } })
  expect(r.status).toBe(200)
  expect(r.sent!.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } })
  expect(r.sent!.reasoning_effort).toBeUndefined()
  expect(r.compat).toBe('output_config->response_format')
  const o3 = await send({ model: 'o3', output_config: { effort: 'high', format: { type: 'json_schema', schema } } })
  expect(o3.sent!.reasoning_effort).toBe('high')
  expect(o3.compat).toBe('output_config->reasoning_effort+response_format')
})
