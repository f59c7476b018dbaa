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

// The Claude models before Opus 4.1 and Sonnet 4.5 (the 3s, Sonnet 4, Opus 4) have no structured
// output: a JSON schema goes as a tool the model is made to call, and the call's input comes back
// as the reply's text, ended as a turn. The recorded reply is the AI SDK's own forced `json` tool,
// renamed as the gateway offers it.
const weatherSchema = {
  type: 'object',
  properties: { elements: { type: 'array', items: { type: 'object', properties: { location: { type: 'string' }, temperature: { type: 'number' }, condition: { type: 'string' } }, required: ['location', 'temperature', 'condition'], additionalProperties: false } } },
  required: ['elements'],
  additionalProperties: false,
}
const asReply = (recorded: string, name: string) => recorded.replaceAll('"name": "json"', `"name": "${name}"`).replaceAll('"name":"json"', `"name":"${name}"`)

test('chat: a JSON schema to a Claude model without structured output goes as a forced tool, and its input comes back as the parsed reply, ended as a turn', async () => {
  rig.up.script({ json: JSON.parse(asReply(fixture('anthropic/messages/nonstream-json-tool-vercel.json'), 'json_reply')) })
  const { data: r, response } = await rig.client.chat.completions
    .parse({
      model: 'claude-sonnet-4',
      max_tokens: 500,
      messages: [{ role: 'user', content: 'Weather in four cities?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema, strict: true } },
    })
    .withResponse()
  const choice = r.choices[0]!
  expect(choice.message.parsed).toEqual(JSON.parse(fixture('anthropic/messages/nonstream-json-tool-vercel.json')).content[0].input)
  expect(choice.message.tool_calls ?? []).toEqual([])
  expect(choice.finish_reason).toBe('stop')
  expect(response.headers.get('x-switchyard-compat')).toBe('response_format->output_config.format, output_config.format->tool')
  const sent = rig.up.requests.at(-1)!.json()
  expect(sent.model).toBe('claude-sonnet-4')
  expect(sent).not.toHaveProperty('output_config')
  expect(sent.tools).toEqual([expect.objectContaining({ name: 'json_reply', input_schema: weatherSchema })])
  expect(sent.tool_choice).toEqual({ type: 'tool', name: 'json_reply' })
})

test('chat: streamed, the forced tool\'s input arrives as content deltas, with no tool call and a stop finish', async () => {
  rig.up.script({ sse: asReply(fixture('anthropic/messages/stream-tool-use-vercel.sse'), 'json_reply') })
  const stream = await rig.client.chat.completions.create({
    model: 'claude-3-7-sonnet',
    max_tokens: 500,
    stream: true,
    messages: [{ role: 'user', content: 'Weather?' }],
    response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema } },
  })
  let text = ''
  let finish: string | null = null
  let calls = 0
  for await (const chunk of stream) {
    const c = chunk.choices[0]
    text += c?.delta.content ?? ''
    calls += c?.delta.tool_calls?.length ?? 0
    finish = c?.finish_reason ?? finish
  }
  expect(JSON.parse(text)).toEqual({ elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] })
  expect(calls).toBe(0)
  expect(finish).toBe('stop')
  expect(rig.up.requests.at(-1)!.json().tool_choice).toEqual({ type: 'tool', name: 'json_reply' })
})

test("responses: text.format to a Claude model without structured output: the client's own tools stay callable beside the reply's (any tool), named apart from them", async () => {
  rig.up.script({ json: JSON.parse(asReply(fixture('anthropic/messages/nonstream-json-tool-vercel.json'), 'json_reply_2')) })
  const r = await rig.client.responses.create({
    model: 'claude-opus-4',
    input: 'Weather?',
    tools: [{ type: 'function', name: 'json_reply', parameters: { type: 'object', properties: {} }, strict: false }],
    text: { format: { type: 'json_schema', name: 'weather', schema: weatherSchema, strict: true } },
  })
  expect(r.status).toBe('completed')
  expect(JSON.parse(r.output_text)).toEqual(JSON.parse(fixture('anthropic/messages/nonstream-json-tool-vercel.json')).content[0].input)
  expect(r.output.filter((o) => o.type === 'function_call')).toEqual([])
  const sent = rig.up.requests.at(-1)!.json()
  expect(sent.tools.map((t: { name: string }) => t.name)).toEqual(['json_reply', 'json_reply_2'])
  expect(sent.tool_choice).toEqual({ type: 'any' })
})
