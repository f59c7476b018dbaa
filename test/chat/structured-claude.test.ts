// A JSON schema response format for a Claude model is Claude's structured output
// (`output_config.format`): on the chat surface under `compat.cross_family: translate` (in reject
// mode `response_format` is the spec's 400 for a Claude model), and on the responses surface's
// own `text.format`. JSON mode has no counterpart: left out and named.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_CROSS_FAMILY: 'translate' })
})
afterAll(() => rig.stop())

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }

test("chat: response_format json_schema goes to Claude as output_config.format, and the SDK's parse reads the reply", async () => {
  const reply = { ...JSON.parse(fixture('anthropic/messages/nonstream-text.json')), content: [{ type: 'text', text: '{"city":"Paris"}' }] }
  rig.up.script({ json: reply })
  const r = await rig.client.chat.completions.parse({
    model: 'claude-sonnet-4-5',
    max_tokens: 200,
    messages: [{ role: 'user', content: 'Where?' }],
    response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
  })
  expect(r.choices[0]!.message.parsed).toEqual({ city: 'Paris' })
  const sent = rig.up.requests.at(-1)!.json()
  expect(sent.output_config).toEqual({ format: { type: 'json_schema', schema } })
  expect(sent).not.toHaveProperty('response_format')
})

test('responses: text.format json_schema goes to Claude as output_config.format', async () => {
  rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
  const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'Where?', text: { format: { type: 'json_schema', name: 'place', schema, strict: true } } })
  expect(r.status).toBe('completed')
  expect(rig.up.requests.at(-1)!.json().output_config).toEqual({ format: { type: 'json_schema', schema } })
})

test('JSON mode has no Claude counterpart: left out and named in x-switchyard-compat (translate mode)', async () => {
  rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
  const res = await rig.post({ model: 'claude-sonnet-4-5', max_tokens: 200, messages: [{ role: 'user', content: 'Where?' }], response_format: { type: 'json_object' } })
  expect(res.status).toBe(200)
  expect(res.headers.get('x-switchyard-compat')).toContain('response_format')
  const sent = rig.up.requests.at(-1)!.json()
  expect(sent).not.toHaveProperty('output_config')
  expect(sent).not.toHaveProperty('response_format')
})
