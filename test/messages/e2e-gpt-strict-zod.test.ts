// What @anthropic-ai/sdk 1.17's helpers send for zod 4 schemas (the fixture, generated from the
// real libraries), driven through the SDK against a GPT model: a strict tool through the beta
// toolRunner (betaZodTool sends zod's JSON Schema as it is: `$schema` at the root, a discriminated
// union as `oneOf`, `default`s) and a structured output through messages.parse. The fake OpenAI
// upstream refuses what OpenAI's strict mode refuses (a property left optional, a keyword outside
// its documented subset, a format it does not list), so strict kept means the schema was fitted;
// it answers with the nulls the fitted schema makes the model write, which the client never sees.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const zod = fixtureJson('anthropic/sdk-zod4-schemas.generated.json')
const DOCUMENTED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', '$ref', '$defs', 'definitions', 'description', 'title', 'enum', 'const', 'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems'])
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])

/** Why OpenAI's strict mode refuses a schema, as the fake judges it, or null if it takes it. */
function refusal(s: unknown): string | null {
  if (Array.isArray(s)) return s.map(refusal).find((r) => r !== null) ?? null
  if (typeof s !== 'object' || s === null) return null
  const o = s as Record<string, any>
  const odd = Object.keys(o).find((k) => !DOCUMENTED.has(k))
  if (odd) return `'${odd}' is not permitted`
  if (o.format !== undefined && !FORMATS.has(o.format)) return `'${o.format}' is not a valid format`
  if ('$ref' in o && Object.keys(o).length > 1) return '$ref cannot have keywords'
  if (o.properties && (o.additionalProperties !== false || !Object.keys(o.properties).every((k) => o.required?.includes(k)))) return 'optional'
  const subs = [...Object.values(o.properties ?? {}), ...Object.values(o.$defs ?? {}), ...Object.values(o.definitions ?? {}), o.items, ...(o.anyOf ?? [])]
  return refusal(subs.filter((x) => x !== undefined))
}

const usage = { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 }
const reply = (message: object, finish: string) => ({
  id: 'chatcmpl-zod-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', usage,
  choices: [{ index: 0, logprobs: null, finish_reason: finish, message: { role: 'assistant', content: null, refusal: null, ...message } }],
})
const call = (name: string, args: object) => reply({ tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, 'tool_calls')
const text = (content: string) => reply({ content }, 'stop')

/** The fake OpenAI upstream: a strict schema it would refuse is its 400; else the next of `answers`. */
function openai(...answers: object[]) {
  const refusals: string[] = []
  rig.up.script((req) => {
    const body = req.json()
    const strict = [...(body.tools ?? []).filter((t: any) => t.function?.strict === true).map((t: any) => t.function.parameters), ...(body.response_format?.json_schema?.strict ? [body.response_format.json_schema.schema] : [])]
    for (const s of strict) {
      const why = refusal(s)
      if (why) {
        refusals.push(why)
        return { status: 400, json: JSON.parse(fixture(why === 'optional' ? 'openai/chat/error-400-strict-optional.handwritten.json' : 'openai/chat/error-400-strict-keyword.handwritten.json')) }
      }
    }
    return { json: answers.shift() ?? text('done') }
  })
  return refusals
}

const compat = (r: Response) => r.headers.get('x-switchyard-compat')?.split(/,\s*/) ?? []
const ask = [{ role: 'user' as const, content: 'Draw a square of side 3' }]

describe('the Anthropic SDK over zod 4 schemas, for a GPT model', () => {
  test('toolRunner with a strict betaZodTool-shaped tool (`$schema`, a discriminated union as oneOf): strict kept, the tool run with its input as zod reads it, no added null', async () => {
    const { betaTool } = await import('@anthropic-ai/sdk/helpers/beta/json-schema')
    const got: unknown[] = []
    const draw = betaTool({ name: 'draw', description: 'Draw a shape', inputSchema: zod.unions.tool, strict: true, run: async (input: unknown) => (got.push(input), 'drawn') } as any)
    const refusals = openai(call('draw', { value: 3, shape: { kind: 'square', side: 3, label: null } }), text('drawn it'))
    const runner = rig.anthropic.beta.messages.toolRunner({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [draw], max_iterations: 3, thread: false } as any)
    const final = await runner.runUntilDone()
    expect(refusals).toEqual([])
    expect(got).toEqual([{ value: 3, shape: { kind: 'square', side: 3 } }])
    expect((final.content[0] as any).text).toBe('drawn it')
    const fn = rig.up.requests.at(-1)!.json().tools[0].function
    expect(fn.strict).toBe(true)
    expect(fn.parameters.$schema).toBeUndefined()
    expect(fn.parameters.properties.shape.anyOf).toHaveLength(2)
  })

  test('a strict tool with zod `.default()`s and `.meta({ examples })`: the annotations are left out upstream and strict kept', async () => {
    const refusals = openai(call('get_weather', { unit: 'f', days: 2, note: null }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema: zod.defaults.tool, strict: true }] as any })
      .withResponse()
    expect(refusals).toEqual([])
    expect(data.content.find((b) => b.type === 'tool_use')!.input).toEqual({ unit: 'f', days: 2 })
    const fn = rig.up.requests.at(-1)!.json().tools[0].function
    expect(fn.strict).toBe(true)
    expect(fn.parameters.properties.unit).toEqual({ type: 'string', enum: ['c', 'f'] })
    expect(compat(response)).not.toContain('tools[].strict')
  })

  test('messages.parse with zodOutputFormat\'s schema of ISO dates, one optional: strict kept, the parsed output without the null', async () => {
    const { jsonSchemaOutputFormat } = await import('@anthropic-ai/sdk/helpers/json-schema')
    const refusals = openai(text('{"at":"2026-01-02T03:04:05Z","day":null,"when":"2026-01-03T00:00:00Z"}'))
    const m = await rig.anthropic.messages.parse({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: jsonSchemaOutputFormat(zod.dates.format, { transform: false }) } } as any)
    expect(refusals).toEqual([])
    expect((m as any).parsed_output).toEqual({ at: '2026-01-02T03:04:05Z', when: '2026-01-03T00:00:00Z' })
    expect(rig.up.requests.at(-1)!.json().response_format.json_schema.strict).toBe(true)
  })

  test('a structured output as the AI SDK and standard-schema helpers write it (`$schema`, `default`, open objects): strict kept, the text without the added null', async () => {
    const refusals = openai(text('{"unit":"c","days":3,"note":null}'))
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: { type: 'json_schema', schema: zod.defaults.standardInput } } })
    expect(res.status).toBe(200)
    expect(refusals).toEqual([])
    expect(JSON.parse(((await res.json()) as any).content[0].text)).toEqual({ unit: 'c', days: 3 })
    const sent = rig.up.requests.at(-1)!.json().response_format.json_schema
    expect(sent.strict).toBe(true)
    expect(sent.schema.$schema).toBeUndefined()
  })

  test('string lengths and a URL (minLength, maxLength and format uri, which strict mode does not take): sent without strict, named as left out, and answered', async () => {
    const refusals = openai(call('post', { title: 'Hi', tags: ['a'] }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'post', input_schema: zod.lengths.tool, strict: true }] as any })
      .withResponse()
    expect(refusals).toEqual([])
    expect(data.content.find((b) => b.type === 'tool_use')!.input).toEqual({ title: 'Hi', tags: ['a'] })
    expect(rig.up.requests.at(-1)!.json().tools[0].function.strict).toBeUndefined()
    expect(compat(response)).toContain('tools[].strict')
  })

  test("zodOutputFormat's schema with a URL (the SDK keeps format uri, which OpenAI refuses): sent without strict, not refused, and named as left out", async () => {
    const refusals = openai(text('{"title":"Hi","tags":["a"]}'))
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: { type: 'json_schema', schema: zod.lengths.format } } })
    expect(res.status).toBe(200)
    expect(refusals).toEqual([])
    expect(rig.up.requests.at(-1)!.json().response_format.json_schema.strict).toBe(false)
    // the guarantee Anthropic's output format always has is named as left out
    expect(compat(res)).toContain('output_config.format.strict')
  })

  test('an output format that fits keeps strict and names no loss', async () => {
    openai(text('{"at":"2026-01-02T03:04:05Z","when":"2026-01-03T00:00:00Z"}'))
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_format: { type: 'json_schema', schema: zod.dates.format } })
    expect(res.status).toBe(200)
    expect(compat(res)).toContain('output_format->response_format')
    expect(compat(res)).not.toContain('output_format.strict')
  })
})
