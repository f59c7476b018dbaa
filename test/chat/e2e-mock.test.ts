// Zero config: no upstream is configured, so the built-in mock provider answers every
// model through the IR, with its documented deterministic replies (docs/mock-provider.md).
// Also the compat translate mode and the never-a-500 fuzz over HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { check } from '../providers/schema-check.ts'
import { chatFrames } from './e2e-helpers.ts'

let gw: Gateway
let client: OpenAI
beforeAll(async () => {
  // the cases go out back to back, more than a key's default burst a second
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000' } })
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw.stop()
})

async function lookup(id: string) {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { success: boolean; generation: any }).generation
}

const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }]

describe('mock provider through the chat surface', () => {
  for (const model of ['gpt-4o', 'claude-sonnet-4-5']) {
    test(`${model}: the documented reply (the last user message's text), recorded and looked up`, async () => {
      const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] })
      expect(r.choices[0]!.message.content).toBe('Say hello')
      expect(r.choices[0]!.finish_reason).toBe('stop')
      expect(r.usage!.prompt_tokens).toBeGreaterThan(0)
      const g = await lookup(r.id)
      expect(g.model).toBe(model)
      expect(g.usage.completion_tokens).toBe(r.usage!.completion_tokens)
      expect(g.endpoint).toBe('openai.chat.completions')
    })

    test(`${model}: streamed and non-streamed results agree (text, tool calls, finish, usage)`, async () => {
      for (const content of ['mock: text Paris is the capital.', 'mock: tool get_weather {"city":"Paris"}']) {
        const body = { model, messages: [{ role: 'user' as const, content }], tools }
        const plain = await client.chat.completions.create(body)
        const streamed = await client.chat.completions.stream({ ...body, stream_options: { include_usage: true } }).finalChatCompletion()
        const a = plain.choices[0]!
        const b = streamed.choices[0]!
        expect(b.message.content ?? null).toEqual(a.message.content ?? null)
        expect(b.finish_reason).toBe(a.finish_reason)
        expect((b.message.tool_calls ?? []).map((c: any) => [c.function.name, c.function.arguments])).toEqual((a.message.tool_calls ?? []).map((c: any) => [c.function.name, c.function.arguments]))
        expect(streamed.usage?.prompt_tokens).toBe(plain.usage!.prompt_tokens)
        expect(streamed.usage?.completion_tokens).toBe(plain.usage!.completion_tokens)
      }
    })
  }

  test("a last message with only an image is answered with what it held, not an earlier message's text, on chat and responses", async () => {
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const chat = await client.chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'What is in the next picture?' }, { role: 'assistant', content: 'Send it.' }, { role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }],
    })
    expect(chat.choices[0]!.message.content).toBe('(no text: 1 image)')
    const r = await client.responses.create({ model: 'mock-claude', input: [{ role: 'user', content: 'What is in it?' }, { role: 'user', content: [{ type: 'input_image', image_url: png, detail: 'auto' }] }] })
    expect(r.output_text).toBe('(no text: 1 image)')
  })

  test('stop: the text ends before the first stop sequence met, finish stop, streamed or not', async () => {
    const params = { model: 'mock-gpt', stop: ['STOP', 'never'], messages: [{ role: 'user' as const, content: 'mock: text one two STOP three' }] }
    const plain = await client.chat.completions.create(params)
    expect(plain.choices[0]!.message.content).toBe('one two ')
    expect(plain.choices[0]!.finish_reason).toBe('stop')
    let text = ''
    for await (const c of await client.chat.completions.create({ ...params, stream: true })) text += c.choices[0]?.delta.content ?? ''
    expect(text).toBe('one two ')
  })

  test('mock tool call arrives as tool_calls with JSON-string arguments', async () => {
    const r = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Oslo"}' }], tools })
    expect(r.choices[0]!.finish_reason).toBe('tool_calls')
    const call = r.choices[0]!.message.tool_calls![0] as any
    expect(call.function.name).toBe('get_weather')
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' })
  })

  test('with the mock: fail-midstream ends the stream without [DONE]; the SDK sees an error', async () => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'a long enough reply to come in several chunks\nmock: fail-midstream' }] }),
    })
    expect(res.status).toBe(200)
    let body = ''
    const reader = res.body!.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        body += new TextDecoder().decode(value)
      }
    } catch {}
    expect(chatFrames(body).length).toBeGreaterThan(1)
    expect(body).not.toContain('[DONE]')
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'some words to stream\nmock: fail-midstream' }] })
    await expect((async () => { for await (const _ of stream); })()).rejects.toThrow()
  })

  test('mock error status before output is an ordinary status code', async () => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'mock: error 429' }] }),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeTruthy()
  })

  test('HTTP 400s name the field and list offending parameters', async () => {
    const post = (body: unknown) => fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    let res = await post({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }], seed: 1, n: 2 })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toBe('Parameters not supported for Claude-family model claude-sonnet-4-5: seed, n')
    res = await post({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: 'yes' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toStartWith('stream:')
    res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: '{"model":' })
    expect(res.status).toBe(400)
  })

  test("maps of OpenAI's own bounds are held to them, not parsed and checked key by key by the hundred thousand", async () => {
    const post = (body: unknown) => fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'x' }], ...(body as object) }) })
    const many = (n: number, v: unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), v]))
    let res = await post({ metadata: many(17, 'v') })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toStartWith('metadata: expected an object of at most 16 keys')
    res = await post({ logit_bias: many(2000, 1) })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toStartWith('logit_bias: expected an object of at most 1024 token ids')
    res = await post({ stop: Array.from({ length: 65 }, (_, i) => `s${i}`) })
    expect(((await res.json()) as any).error).toBe('stop: expected a string or an array of at most 64 strings')
    expect((await post({ metadata: many(16, 'v'), logit_bias: many(300, -1) })).status).toBe(200)
  })
})

describe('compat.cross_family: translate', () => {
  test('foreign parameters are translated or dropped and named in x-switchyard-compat', async () => {
    const t = await startGateway({ yaml: 'compat:\n  cross_family: translate\n' })
    try {
      const res = await fetch(`${t.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi there' }], max_completion_tokens: 50, seed: 4 }),
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-switchyard-compat')).toBe('max_completion_tokens->max_tokens, seed')
      expect(((await res.json()) as any).choices[0].message.content).toBe('hi there')
    } finally {
      await t.stop()
    }
  })
})

describe('mock replies are whole characters, the same every time', () => {
  const ask = (content: string, max: number) => ({ model: 'mock-gpt', max_completion_tokens: max, messages: [{ role: 'user' as const, content }] })

  test('a cut inside a character ends before it, whatever an earlier request cut', async () => {
    const first = await client.chat.completions.create(ask('mock: text 🦄 unicorn', 3))
    expect(first.choices[0]!.message.content).toBe('🦄')
    // a cut that ends inside the emoji: its bytes once stayed in the tokenizer and began the next reply
    const mid = await client.chat.completions.create(ask('mock: text 🦄 unicorn', 1))
    expect(mid.choices[0]!.message.content ?? '').not.toContain('\ufffd')
    const again = await client.chat.completions.create(ask('mock: text 🦄 unicorn', 3))
    expect(again.choices[0]!.message.content).toBe('🦄')
    expect(again.usage!.completion_tokens).toBe(first.usage!.completion_tokens)
  })

  test("a one-word stream comes in two halves that never split a character's surrogate pair", async () => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: 'mock: text a😀' }] }),
    })
    const deltas = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content).filter((c) => typeof c === 'string')
    expect(deltas.join('')).toBe('a😀')
    for (const d of deltas) expect(d).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/)
  })

  test('scripts that contradict the request are 400s naming why; an empty reply still fails mid-stream where asked', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object', properties: {} } } }]
    const refused = async (body: object) => {
      const e = await client.chat.completions.create(body as never).catch((x) => x)
      expect(e.status).toBe(400)
      return String(e.message)
    }
    expect(await refused({ model: 'mock-gpt', tools, tool_choice: 'none', messages: [{ role: 'user', content: 'mock: tool f {}' }] })).toContain('tool_choice is none')
    expect(await refused({ model: 'mock-gpt', tools, messages: [{ role: 'user', content: 'mock: tool f [1,2]' }] })).toContain('must be a JSON object')
    expect(await refused({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: error 4e2' }] })).toContain('needs an HTTP status')
    // a lone CR ends a directive as a line feed does
    const cr = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text CR\r' }] })
    expect(cr.choices[0]!.message.content).toBe('CR')
    const empty = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text \nmock: fail-midstream' }] }).catch((x) => x)
    expect(empty.status).toBe(502)
  })
})

test('JSON mode for a GPT model needs the word json in the request, as OpenAI requires: a 400 without it, on chat and responses', async () => {
  const err = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'give me an object' }], response_format: { type: 'json_object' } }).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.error).toBe("the messages must contain the word 'json' in some form to use a response format of type json_object (response_format, text.format), as OpenAI requires")
  const stream = await client.chat.completions.create({ model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: 'give me an object' }], response_format: { type: 'json_object' } }).catch((e) => e)
  expect(stream.status).toBe(400)
  const r = await client.responses.create({ model: 'mock-gpt', input: 'an object', text: { format: { type: 'json_object' } } }).catch((e) => e)
  expect(r.status).toBe(400)
  // any case, anywhere in its text: the system prompt, instructions, a tool's result
  const sys = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'system', content: 'Answer in JSON.' }, { role: 'user', content: 'an object' }], response_format: { type: 'json_object' } })
  expect(sys.choices[0]!.message.content).toBe('{}')
  const inst = await client.responses.create({ model: 'mock-gpt', instructions: 'Reply with a Json object', input: 'an object', text: { format: { type: 'json_object' } } })
  expect(inst.output_text).toBe('{}')
})

test("chat's n past 1: one choice, and n named as left out, streamed or not", async () => {
  for (const stream of [false, true]) {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', n: 3, stream, messages: [{ role: 'user', content: 'hi' }] }) })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/)).toContain('n')
    const text = await res.text()
    expect(text).not.toContain('"index":1')
  }
})

describe('structured output from the mock', () => {
  test("a json_schema reply is JSON built from the schema: the SDK's parse() and the responses surface's output_text agree", async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'array', items: { type: 'integer', minimum: 1 }, minItems: 1 } }, required: ['city', 'days'], additionalProperties: false }
    const parsed = await client.chat.completions.parse({ model: 'mock-gpt', messages: [{ role: 'user', content: 'weather?' }], response_format: { type: 'json_schema', json_schema: { name: 'w', schema, strict: true } } })
    expect(parsed.choices[0]!.message.parsed).toEqual({ city: 'example', days: [1] })
    const r = await client.responses.create({ model: 'mock-claude', input: 'weather?', text: { format: { type: 'json_schema', name: 'w', schema, strict: true } } })
    expect(JSON.parse(r.output_text)).toEqual({ city: 'example', days: [1] })
    const obj = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } })
    expect(JSON.parse(obj.choices[0]!.message.content!)).toEqual({})
  })

  test("a schema's pattern, multipleOf, uniqueItems, formats and refs are met: chat and responses parse(), and a forced call's arguments, validate", async () => {
    const schema = {
      type: 'object',
      $defs: { Sku: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' } },
      properties: {
        sku: { $ref: '#/$defs/Sku' },
        price: { type: 'number', multipleOf: 0.01, exclusiveMinimum: 0 },
        qty: { type: 'integer', multipleOf: 6, minimum: 10 },
        tags: { type: 'array', items: { type: 'string', maxLength: 8 }, minItems: 3, uniqueItems: true },
        when: { type: 'string', format: 'date-time' },
        owner: { type: 'string', format: 'email' },
      },
      required: ['sku', 'price', 'qty', 'tags', 'when', 'owner'],
      additionalProperties: false,
    }
    const chat = await client.chat.completions.parse({ model: 'mock-gpt', messages: [{ role: 'user', content: 'order?' }], response_format: { type: 'json_schema', json_schema: { name: 'order', schema, strict: true } } })
    expect(check(chat.choices[0]!.message.parsed, schema)).toEqual([])
    expect(chat.choices[0]!.message.parsed).toMatchObject({ sku: 'AAA-0000', price: 0.01, qty: 12 })
    const r = await client.responses.parse({ model: 'mock-claude', input: 'order?', text: { format: { type: 'json_schema', name: 'order', schema, strict: true } } })
    expect(check(r.output_parsed, schema)).toEqual([])
    const call = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'order?' }], tools: [{ type: 'function', function: { name: 'order', parameters: schema } }], tool_choice: 'required' })
    expect(check(JSON.parse((call.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments), schema)).toEqual([])
  })

  test("a messages client's output_config.format holds the reply to the schema on both families' models", async () => {
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false }
    for (const model of ['mock-claude', 'mock-gpt']) {
      const m = await anthropic.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Alice is 30' }], output_config: { format: { type: 'json_schema', schema } } } as any)
      expect(m.content[0]).toMatchObject({ type: 'text' })
      expect(JSON.parse((m.content[0] as { text: string }).text)).toEqual({ name: 'example', age: 0 })
    }
  })
})
