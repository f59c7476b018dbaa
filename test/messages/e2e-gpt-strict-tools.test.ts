// A Claude strict tool (`strict: true`) sent to a GPT model through the messages surface, driven
// by @anthropic-ai/sdk. Anthropic takes strict schemas that OpenAI's strict mode refuses with a 400
// for the whole request (a property left optional, a keyword beside a `$ref`); the fake OpenAI
// upstream refuses them as OpenAI does, so a request the gateway would send as it came fails.
// Where it can be done faithfully the schema is made to fit (an optional property required and
// nullable, an object closed), and the nulls that adds are taken out of the model's arguments.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

/** Why OpenAI's strict mode refuses a schema, as the fake upstream judges it, or null if it takes it. */
function refusal(s: unknown): 'optional' | 'ref' | null {
  if (Array.isArray(s)) return s.map(refusal).find((r) => r !== null) ?? null
  if (typeof s !== 'object' || s === null) return null
  const o = s as Record<string, any>
  if ('$ref' in o && Object.keys(o).length > 1) return 'ref'
  if (o.properties && (o.additionalProperties !== false || !Object.keys(o.properties).every((k) => o.required?.includes(k)))) return 'optional'
  return refusal(Object.values(o))
}

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
const call = (name: string, args: object) => ({
  id: 'chatcmpl-strict-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
  choices: [{ index: 0, logprobs: null, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }],
})

/** A chat stream of one tool call whose arguments arrive in `pieces`. */
function toolStream(name: string, pieces: string[]): string {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-strict-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`
  return [
    chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name, arguments: '' } }] }),
    ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    chunk({}, 'tool_calls'),
    `data: ${JSON.stringify({ id: 'chatcmpl-strict-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('')
}

/** The fake OpenAI upstream: a strict function whose schema it would refuse is its 400; else `answer`. */
function openai(answer: object) {
  rig.up.script((req) => {
    for (const t of req.json().tools ?? []) {
      if (t.function?.strict !== true) continue
      const why = refusal(t.function.parameters)
      if (why) return { status: 400, json: fixture(why === 'ref' ? 'openai/chat/error-400-strict-ref-keywords.handwritten.json' : 'openai/chat/error-400-strict-optional.handwritten.json') }
    }
    return { json: answer }
  })
}

const compat = (r: Response) => r.headers.get('x-switchyard-compat')?.split(/,\s*/) ?? []
const sentTool = () => rig.up.requests.at(-1)!.json().tools[0].function

describe('a Claude strict tool sent to a GPT model', () => {
  test("an optional property, which Anthropic's strict tools take and OpenAI's strict mode refuses: strict kept, the property sent required and nullable, and the null the model sends for it taken out of the input", async () => {
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] }, days: { type: 'integer' } }, required: ['location'], additionalProperties: false }
    openai(call('get_weather', { location: 'Paris', unit: null, days: 3 }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.stop_reason).toBe('tool_use')
    // what the client's schema describes: unit left out, not null
    expect(data.content.find((b) => b.type === 'tool_use')!.input).toEqual({ location: 'Paris', days: 3 })
    const fn = sentTool()
    expect(fn.strict).toBe(true)
    expect(fn.parameters).toEqual({
      type: 'object',
      properties: { location: { type: 'string' }, unit: { anyOf: [{ type: 'string', enum: ['c', 'f'] }, { type: 'null' }] }, days: { type: ['integer', 'null'] } },
      required: ['location', 'unit', 'days'],
      additionalProperties: false,
    })
    expect(compat(response)).not.toContain('tools[].strict')
  })

  test('an object that says nothing of extra properties is closed, its optional properties nullable at every level; a property nullable in the client\'s own schema keeps its null', async () => {
    const input_schema = {
      type: 'object' as const,
      properties: {
        to: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
        note: { type: ['string', 'null'] },
        stops: { type: 'array', items: { type: 'object', properties: { city: { type: 'string' }, nights: { type: 'integer' } }, required: ['city'] } },
      },
      required: ['stops'],
    }
    openai(call('book', { to: { city: 'Paris', zip: null }, note: null, stops: [{ city: 'Lyon', nights: null }, { city: 'Dijon', nights: 2 }] }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'book', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.content.find((b) => b.type === 'tool_use')!.input).toEqual({ to: { city: 'Paris' }, note: null, stops: [{ city: 'Lyon' }, { city: 'Dijon', nights: 2 }] })
    const fn = sentTool()
    expect(fn.strict).toBe(true)
    const to = { type: 'object', properties: { city: { type: 'string' }, zip: { type: ['string', 'null'] } }, required: ['city', 'zip'], additionalProperties: false }
    expect(fn.parameters).toEqual({
      type: 'object',
      properties: {
        to: { anyOf: [to, { type: 'null' }] },
        // nullable already: made required as it is
        note: { type: ['string', 'null'] },
        stops: { type: 'array', items: { type: 'object', properties: { city: { type: 'string' }, nights: { type: ['integer', 'null'] } }, required: ['city', 'nights'], additionalProperties: false } },
      },
      required: ['to', 'note', 'stops'],
      additionalProperties: false,
    })
    expect(compat(response)).not.toContain('tools[].strict')
  })

  test('streamed: the arguments of a fitted tool go out once whole, without the added nulls, as one input_json_delta', async () => {
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'], additionalProperties: false }
    rig.up.script({ sse: toolStream('get_weather', ['{"loc', 'ation":"Pa', 'ris","unit', '":null}']) })
    const stream = rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema, strict: true }] as any })
    const deltas: string[] = []
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') deltas.push(e.delta.partial_json)
    })
    const final = await stream.finalMessage()
    expect(final.content.find((b) => b.type === 'tool_use')!.input).toEqual({ location: 'Paris' })
    expect(deltas).toEqual(['{"location":"Paris"}'])
    expect(sentTool().strict).toBe(true)
    expect(sentTool().parameters.properties.unit).toEqual({ type: ['string', 'null'] })
  })

  test('an object the client left open on purpose (additionalProperties true) cannot fit: sent without strict, the schema as it came, and strict named as left out', async () => {
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'], additionalProperties: true }
    openai(call('get_weather', { location: 'Paris' }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } })
    const fn = sentTool()
    expect(fn.strict).toBeUndefined()
    expect(fn.parameters).toEqual(input_schema)
    expect(compat(response)).toContain('tools[].strict')
  })

  test('a keyword outside what strict mode takes (allOf) cannot fit either: sent without strict, strict named as left out', async () => {
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'], allOf: [{ required: ['location'] }] }
    openai(call('get_weather', { location: 'Paris' }))
    const { response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema, strict: true }] as any })
      .withResponse()
    expect(sentTool().strict).toBeUndefined()
    expect(sentTool().parameters).toEqual(input_schema)
    expect(compat(response)).toContain('tools[].strict')
  })

  test("a schema past strict mode's size (more than 1,000 enum values in all, which OpenAI refuses with a 400) is not fitted: sent without strict, as it came, strict named as left out", async () => {
    const cities = Array.from({ length: 1_001 }, (_, i) => `city-${i}`)
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string', enum: cities }, unit: { type: 'string' } }, required: ['location'], additionalProperties: false }
    openai(call('get_weather', { location: 'city-7' }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { location: 'city-7' } })
    expect(sentTool().strict).toBeUndefined()
    expect(sentTool().parameters).toEqual(input_schema)
    expect(compat(response)).toContain('tools[].strict')
  })

  test("a field described where it uses a shared definition: strict kept, the $ref written out with the description over the definition's own", async () => {
    const address = { type: 'object', description: 'A postal address', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
    const input_schema = {
      type: 'object' as const,
      properties: { to: { $ref: '#/$defs/address', description: 'Where it goes' }, from: { $ref: '#/$defs/address' } },
      required: ['to', 'from'],
      additionalProperties: false,
      $defs: { address },
    }
    openai(call('ship', { to: { city: 'Paris' }, from: { city: 'Lyon' } }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'ship', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'ship', input: { to: { city: 'Paris' }, from: { city: 'Lyon' } } })
    const fn = sentTool()
    expect(fn.strict).toBe(true)
    expect(fn.parameters.properties.to).toEqual({ ...address, description: 'Where it goes' })
    // a bare $ref is what strict mode takes: left as it is
    expect(fn.parameters.properties.from).toEqual({ $ref: '#/$defs/address' })
    expect(compat(response)).not.toContain('tools[].strict')
  })

  test('a schema that already fits: strict stays true, the schema goes as it came, and nothing is named as left out', async () => {
    const input_schema = { type: 'object' as const, properties: { location: { type: 'string', description: 'A city' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } }, required: ['location', 'unit'], additionalProperties: false }
    openai(call('get_weather', { location: 'Paris', unit: null }))
    const { data, response } = await rig.anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [{ name: 'get_weather', input_schema, strict: true }] as any })
      .withResponse()
    expect(data.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { location: 'Paris', unit: null } })
    const fn = sentTool()
    expect(fn.strict).toBe(true)
    expect(fn.parameters).toEqual(input_schema)
    expect(compat(response)).not.toContain('tools[].strict')
  })
})
