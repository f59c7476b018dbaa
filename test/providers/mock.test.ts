// The mock provider's conventions, one test each: they are a contract users' CI relies on.
import { describe, expect, test } from 'bun:test'
import { encode } from 'gpt-tokenizer/encoding/o200k_base'
import { collect } from '../../src/ir/collect.ts'
import type { GenerationRequest, GenerationResponse, Message, StreamEvent } from '../../src/ir/types.ts'
import { MockAdapter } from '../../src/providers/mock/adapter.ts'
import { exampleFromSchema } from '../../src/providers/mock/schema-args.ts'
import { createProviders } from '../../src/providers/registry.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { OpenAIAdapter } from '../../src/providers/openai/adapter.ts'
import { claude, ctx, drain, model, providerConfig, request, user } from './support.ts'

const mock = new MockAdapter()
const gpt = model({ id: 'mock-gpt', upstreamId: 'mock-gpt', provider: 'mock' })
const run = (over: Partial<GenerationRequest>) => mock.generate(request(over), ctx(gpt))
const streamOf = async (over: Partial<GenerationRequest>) => drain(await mock.stream(request({ ...over, stream: true }), ctx(gpt)))
const text = (r: GenerationResponse) => r.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('')
const calls = (r: GenerationResponse) => r.content.flatMap((p) => (p.type === 'tool-call' ? [{ name: p.name, arguments: JSON.parse(p.arguments) }] : []))
const sys = (t: string): Message => ({ role: 'system', content: [{ type: 'text', text: t }] })
const weather = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 }, unit: { type: 'string', enum: ['c', 'f'] } } } }
const clock = { name: 'get_time', parameters: { type: 'object', properties: {} } }

describe('mock conventions', () => {
  test('echoes the last user message; trailing system messages ignored', async () => {
    const r = await run({ messages: [user('first'), { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, user('Hello there, mock!'), sys('reminder')] })
    expect(text(r)).toBe('Hello there, mock!')
    expect(r.finish.reason).toBe('stop')
  })

  test('a last user message with no text is said for what it held, not answered with an earlier message\'s text', async () => {
    const image = { type: 'image' as const, source: { kind: 'url' as const, url: 'https://example.com/a.png' } }
    const doc = { type: 'document' as const, source: { kind: 'text' as const, mediaType: 'text/plain', data: 'x' } }
    const reply = async (last: Message) => text(await run({ messages: [user('an earlier question'), { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, last, sys('reminder')] }))
    expect(await reply({ role: 'user', content: [image] })).toBe('(no text: 1 image)')
    expect(await reply({ role: 'user', content: [image, doc, image] })).toBe('(no text: 2 images, 1 document)')
    expect(await reply({ role: 'user', content: [] })).toBe('(no text)')
    expect(await reply({ role: 'user', content: [{ type: 'text', text: '' }] })).toBe('(no text)')
    // an assistant turn after it (a prefill) answers the same user message
    expect(text(await run({ messages: [user('an earlier question'), { role: 'user', content: [image] }, { role: 'assistant', content: [{ type: 'text', text: 'I see' }] }] }))).toBe('(no text: 1 image)')
    expect(text(await run({ messages: [sys('only instructions')] }))).toBe('(no user message)')
  })

  test('mock: text <TEXT> → exactly TEXT', async () => {
    expect(text(await run({ messages: [user('please\nmock: text  Exactly this, with two spaces before.')] }))).toBe(' Exactly this, with two spaces before.')
  })

  test('mock: tool <NAME> <JSON> → that call', async () => {
    const r = await run({ tools: [weather, clock], messages: [user('mock: tool get_weather {"city":"Paris"}')] })
    expect(calls(r)).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' } }])
    expect(r.finish.reason).toBe('tool_calls')
  })

  test('mock: tool naming a tool the request lacks → 400 saying so', async () => {
    const err = await run({ tools: [clock], messages: [user('mock: tool get_weather {}')] }).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(400)
    expect(err.message).toMatch(/"get_weather" is not among the request's tools \(get_time\)/)
  })

  test('forced tool_choice → arguments from the schema (named tool, and required → first tool)', async () => {
    const named = await run({ tools: [clock, weather], toolChoice: { type: 'tool', name: 'get_weather' } })
    expect(calls(named)).toEqual([{ name: 'get_weather', arguments: { city: 'example', days: 1, unit: 'c' } }])
    const required = await run({ tools: [clock, weather], toolChoice: { type: 'required' } })
    expect(calls(required)).toEqual([{ name: 'get_time', arguments: {} }])
    expect(exampleFromSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'boolean' }, c: { type: 'array' }, d: { type: 'object', properties: { e: { type: 'string' } } } } })).toEqual({
      a: 0, b: false, c: [], d: { e: 'example' },
    })
  })

  test('last message a tool result → "tool result: <content>"', async () => {
    const r = await run({
      tools: [weather],
      messages: [
        user('mock: tool get_weather {"city":"Paris"}'),
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: 'sunny, 21°C' }] },
      ],
    })
    expect(text(r)).toBe('tool result: sunny, 21°C')
  })

  test('mock: error <STATUS> → the upstream status table, Retry-After: 1 on 429', async () => {
    const rate = await run({ messages: [user('mock: error 429')] }).catch((e) => e)
    expect(rate).toMatchObject({ status: 429, retryAfter: '1' })
    expect(await run({ messages: [user('mock: error 529')] }).catch((e) => e.status)).toBe(503)
    expect(await run({ messages: [user('mock: error 500')] }).catch((e) => e.status)).toBe(502)
    expect(await run({ messages: [user('mock: error 400')] }).catch((e) => e.status)).toBe(400)
    const streamed = await mock.stream(request({ stream: true, messages: [user('mock: error 503')] }), ctx(gpt)).catch((e) => e)
    expect(streamed).toBeInstanceOf(UpstreamError)
    expect(streamed.status).toBe(503)
  })

  test('mock: fail-midstream → an error event after the first content chunk; non-stream → 502', async () => {
    const events = await streamOf({ messages: [user('one two three\nmock: fail-midstream')] })
    expect(events.map((e) => e.type)).toEqual(['start', 'text-delta', 'error'])
    expect(events[2]).toMatchObject({ error: { status: 502 } })
    expect(await run({ messages: [user('mock: fail-midstream')] }).catch((e) => e.status)).toBe(502)
  })

  test('streams come in several chunks: text and tool arguments', async () => {
    const textEvents = await streamOf({ messages: [user('The quick brown fox jumps')] })
    expect(textEvents.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text)).toEqual(['The ', 'quick ', 'brown ', 'fox ', 'jumps'])
    const toolEvents = await streamOf({ tools: [weather], messages: [user('mock: tool get_weather {"city":"Edinburgh"}')] })
    expect(toolEvents.filter((e) => e.type === 'tool-input-delta').length).toBe(3)
  })

  test('a long text (a prompt of megabytes echoed) comes in 1,024 deltas of whole characters, not one a word', async () => {
    const long = 'a 😀 '.repeat(50_000)
    const deltas = (await streamOf({ messages: [user(long)] })).flatMap((e) => (e.type === 'text-delta' ? [e.text] : []))
    expect(deltas.length).toBeLessThanOrEqual(1024)
    expect(deltas.join('')).toBe(long)
    for (const d of deltas) expect(d).toBe(Buffer.from(d).toString())
  })

  test('usage counted with o200k; maxTokens honoured with finish length', async () => {
    const long = 'one two three four five six seven eight nine ten'
    const r = await run({ messages: [user(long)], system: [{ type: 'text', text: 'sys' }] })
    expect(r.usage.outputTokens).toBe(encode(long).length)
    expect(r.usage.inputTokens).toBe(encode(`sys\n${long}`).length)
    const cut = await run({ messages: [user(long)], maxTokens: 3 })
    expect(cut.finish.reason).toBe('length')
    expect(cut.usage.outputTokens).toBe(3)
    expect(text(cut)).toBe('one two three')
  })

  test('a call whose name alone reaches maxTokens keeps its name, with no arguments; stream and generate agree', async () => {
    const over = { tools: [weather], toolChoice: { type: 'tool' as const, name: 'get_weather' }, maxTokens: 1 }
    const r = await run(over)
    expect(r.finish.reason).toBe('length')
    expect(r.usage.outputTokens).toBe(1)
    expect(r.content).toMatchObject([{ type: 'tool-call', name: 'get_weather', arguments: '' }])
    const events = await streamOf(over)
    expect(events.filter((e) => e.type === 'tool-input-delta')).toEqual([])
    expect(events.at(-1)).toMatchObject({ type: 'finish', finish: { reason: 'length' }, usage: { outputTokens: 1 } })
  })

  test('ids unique per request, prefix by family; content deterministic; stream folds to generate', async () => {
    const a = await run({})
    const b = await run({})
    expect(a.id).not.toBe(b.id)
    expect(a.id.startsWith('chatcmpl-mock-')).toBe(true)
    const c = await mock.generate(request(), ctx(claude({ id: 'mock-claude', upstreamId: 'mock-claude', provider: 'mock' })))
    expect(c.id.startsWith('msg_mock_')).toBe(true)
    expect(c.model).toBe('mock-claude')
    const req = { tools: [weather], messages: [user('mock: tool get_weather {"city":"Oslo"}')] }
    const folded = await collect((async function* (): AsyncGenerator<StreamEvent> { yield* await streamOf(req) })())
    const direct = await run(req)
    const strip = (r: GenerationResponse) => ({ ...r, id: '', created: 0, content: r.content.map((p) => (p.type === 'tool-call' ? { ...p, id: '' } : p)) })
    expect(strip(folded)).toEqual(strip(direct))
  })
})

describe('registry', () => {
  test('mock always; openai/anthropic only when configured; providerFor follows the catalog entry', () => {
    const none = createProviders({ providers: {} })
    expect(none.openai).toBeUndefined()
    expect(none.anthropic).toBeUndefined()
    expect(none.providerFor(gpt)).toBe(none.mock)
    expect(() => none.providerFor(model())).toThrow(/not configured/)
    const both = createProviders({ providers: { openai: providerConfig('openai', 'http://127.0.0.1:1'), anthropic: providerConfig('anthropic', 'http://127.0.0.1:1') } })
    expect(both.providerFor(model())).toBeInstanceOf(OpenAIAdapter)
    expect(both.providerFor(claude()).kind).toBe('anthropic')
  })
})

describe('values built from a schema validate against it', () => {
  test('refs, unions, bounds, lengths and formats', async () => {
    const { exampleFromSchema } = await import('../../src/providers/mock/schema-args.ts')
    const schema = {
      type: 'object',
      $defs: { Unit: { type: 'string', enum: ['c', 'f'] }, Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
      properties: {
        unit: { anyOf: [{ type: 'null' }, { $ref: '#/$defs/Unit' }] },
        days: { type: 'array', items: { type: 'integer', exclusiveMinimum: 0 }, minItems: 2 },
        code: { type: 'string', minLength: 10 },
        when: { type: 'string', format: 'date' },
        price: { type: 'number', minimum: 1.5 },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'boolean' } } }, { properties: { b: { const: 3 } } }] },
        tree: { $ref: '#/$defs/Node' },
      },
    }
    const v = exampleFromSchema(schema) as Record<string, any>
    expect(v.unit).toBe('c')
    expect(v.days).toEqual([1, 1])
    expect(v.code.length).toBeGreaterThanOrEqual(10)
    expect(v.when).toBe('2025-01-01')
    expect(v.price).toBe(1.5)
    expect(v.both).toEqual({ a: false, b: 3 })
    // a recursive schema ends
    expect(JSON.stringify(v.tree).length).toBeLessThan(1000)
    // a format named like Object.prototype's members is no format the mock knows: a string still
    expect(exampleFromSchema({ type: 'object', properties: { a: { type: 'string', format: 'constructor', maxLength: 0 }, b: { type: 'string', format: 'toString' } }, required: ['a', 'b'] })).toEqual({ a: '', b: 'example' })
  })
})

test('an example of nested minItems stays small: its values are bounded, not multiplied level by level', async () => {
  const { exampleFromSchema } = await import('../../src/providers/mock/schema-args.ts')
  let schema: Record<string, unknown> = { type: 'string', minLength: 100_000 }
  for (let i = 0; i < 6; i++) schema = { type: 'array', minItems: 64, items: schema }
  // 64^6 strings of 100,000 characters as asked; at most 10,000 values of 1,000 as built
  const text = JSON.stringify(exampleFromSchema(schema))
  expect(text.length).toBeLessThan(11_000_000)
  // a self-referencing array ends too
  const loop = { $defs: { A: { type: 'array', minItems: 64, items: { $ref: '#/$defs/A' } } }, $ref: '#/$defs/A' }
  expect(JSON.stringify(exampleFromSchema(loop)).length).toBeLessThan(1_000_000)
})
