// A JSON schema response format for a Claude model is Claude's structured output
// (`output_config.format`): on the chat surface under `compat.cross_family: translate` (in reject
// mode `response_format` is the spec's 400 for a Claude model), and on the responses surface's
// own `text.format`; what Claude's structured output does not compile moves into descriptions.
// JSON mode has no counterpart: left out and named.
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

test("what Claude's structured output does not compile (a zod .min(), .max(), .int().min(0)) moves into descriptions, each keyword named; the rest goes as it came", async () => {
  // as the openai SDK's zodTextFormat writes z.object({ name: z.string().min(1).max(40), age: z.number().int().min(0), tags: z.array(z.string()).max(5), when: z.string().datetime(), site: z.string().url() })
  const zodSchema = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 40, description: 'Who' },
      age: { type: 'integer', minimum: 0 },
      tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 5, minItems: 1 },
      when: { type: 'string', format: 'date-time' },
      site: { type: 'string', format: 'url' },
      kind: { oneOf: [{ type: 'string', const: 'a' }, { type: 'number', exclusiveMaximum: 10 }] },
    },
    required: ['name', 'age', 'tags', 'when', 'site', 'kind'],
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  }
  rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
  const res = await fetch(`${rig.gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', input: 'Who?', store: false, text: { format: { type: 'json_schema', name: 'person', schema: zodSchema, strict: true } } }),
  })
  expect(res.status).toBe(200)
  expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/).sort()).toEqual(
    ['exclusiveMaximum', 'format', 'maxItems', 'maxLength', 'minLength', 'minimum', 'pattern'].map((k) => `schema.${k}->description`),
  )
  expect(rig.up.requests.at(-1)!.json().output_config.format.schema).toEqual({
    type: 'object',
    properties: {
      name: { type: 'string', description: 'Who\n\n{minLength: 1, maxLength: 40}' },
      age: { type: 'integer', description: '{minimum: 0}' },
      tags: { type: 'array', items: { type: 'string', description: '{pattern: "^[a-z]+$"}' }, minItems: 1, description: '{maxItems: 5}' },
      when: { type: 'string', format: 'date-time' },
      site: { type: 'string', description: '{format: "url"}' },
      kind: { anyOf: [{ type: 'string', const: 'a' }, { type: 'number', description: '{exclusiveMaximum: 10}' }] },
    },
    required: ['name', 'age', 'tags', 'when', 'site', 'kind'],
    additionalProperties: false,
  })
})
