// A `__proto__` key anywhere in a body is a 400 naming it, on every surface; `constructor`,
// `prototype` and Object.prototype's own names (`toString`, `hasOwnProperty`) are unknown
// parameters at the top level and ordinary keys inside data (a tool schema's property, a
// model's tool input sent back); nesting past 64 levels is a 400, never a stack overflow.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
const ADMIN = 'admin-token-d3-0123456789abcdef'
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_ADMIN_TOKEN: ADMIN } })
})
afterAll(async () => {
  await gw.stop()
})

const SURFACES = [
  { name: 'chat', path: '/api/alpha/v1/chat/completions', body: (model: string) => `{"model":"${model}","messages":[{"role":"user","content":"hi"}]` },
  { name: 'messages', path: '/api/beta/v1/messages', body: (model: string) => `{"model":"${model}","max_tokens":50,"messages":[{"role":"user","content":"hi"}]` },
]

async function post(path: string, raw: string) {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: raw })
  const text = await res.text()
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { status: res.status, text, error: res.status >= 400 ? (JSON.parse(text).error as string) : '' }
}

describe('prototype keys', () => {
  for (const s of SURFACES) {
    for (const model of ['mock-claude', 'mock-gpt']) {
      test(`${s.name}, ${model}: __proto__ / constructor / prototype at the top level are a 400 naming them (unknown parameters, but for __proto__)`, async () => {
        for (const [key, value] of [['__proto__', '{"seed":1,"n":3}'], ['__proto__', '{"foo":1}'], ['__proto__', '{"stream":true}'], ['constructor', '{"name":"x"}'], ['prototype', '1']]) {
          const r = await post(s.path, s.body(model) + `,"${key}":${value}}`)
          expect(r.status).toBe(400)
          expect(r.error).toContain(key!)
          expect(r.text).not.toContain('data:')
        }
      })

      test(`${s.name}, ${model}: a prototype key deep inside a message is a 400 naming its place`, async () => {
        const raw = s.body(model).replace('{"role":"user","content":"hi"}', '{"role":"user","content":[{"type":"text","text":"hi","__proto__":{"x":1}}]}') + '}'
        const r = await post(s.path, raw)
        expect(r.status).toBe(400)
        expect(r.error).toContain('messages[0].content[0].__proto__')
      })

      test(`${s.name}, ${model}: toString and hasOwnProperty are unknown parameters, not a 500`, async () => {
        for (const key of ['toString', 'hasOwnProperty', 'valueOf']) {
          const r = await post(s.path, s.body(model) + `,"${key}":1}`)
          expect(r.status).toBe(400)
          expect(r.error).toContain(`Unknown parameter: ${key}`)
        }
      })
    }
  }

  test("constructor and prototype inside data are its own keys: a tool schema's properties, a tool input sent back, metadata", async () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, prototype: { type: 'object', properties: { toString: { type: 'integer' } }, required: ['toString'] } }, required: ['constructor', 'prototype'] }
    for (const model of ['mock-gpt', 'mock-claude']) {
      // the mock builds the forced call's input from the schema: the keys come back as the model's
      const first = await post('/api/beta/v1/messages', JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Who built the car?' }], tools: [{ name: 'team', input_schema: schema }], tool_choice: { type: 'any' }, metadata: { user_id: 'u' } }))
      expect(first.status).toBe(200)
      const use = JSON.parse(first.text).content[0]
      expect(use).toMatchObject({ type: 'tool_use', name: 'team', input: { constructor: 'example', prototype: { toString: 0 } } })
      // and go back in the next turn, as a tool loop sends them
      const next = await post('/api/beta/v1/messages', JSON.stringify({ model, max_tokens: 100, tools: [{ name: 'team', input_schema: schema }], messages: [{ role: 'user', content: 'Who built the car?' }, { role: 'assistant', content: [use] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Ferrari' }] }] }))
      expect(next.status).toBe(200)
      expect(JSON.parse(next.text).content[0].text).toBe('tool result: Ferrari')
      const chat = await post('/api/alpha/v1/chat/completions', JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], metadata: { constructor: 'x', prototype: 'y' }, tools: [{ type: 'function', function: { name: 'team', parameters: schema } }], tool_choice: 'required' }))
      expect(chat.status).toBe(200)
      expect(JSON.parse(JSON.parse(chat.text).choices[0].message.tool_calls[0].function.arguments)).toEqual({ constructor: 'example', prototype: { toString: 0 } })
    }
  })

  test('a key spelled with \\u escapes is caught too; the words inside string values are not keys', async () => {
    const escaped = await post('/api/alpha/v1/chat/completions', `{"model":"mock-gpt","messages":[{"role":"user","content":"hi"}],"__pro\\u0074o__":{"n":3}}`)
    expect(escaped.status).toBe(400)
    expect(escaped.error).toContain('__proto__')
    const words = await post('/api/alpha/v1/chat/completions', `{"model":"mock-gpt","messages":[{"role":"user","content":"mock: text ok\\n__proto__ constructor prototype \\u00e9"}]}`)
    expect(words.status).toBe(200)
  })

  test('other JSON bodies (admin, file uploads) are read by the same safe parser', async () => {
    const admin = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"name":"x","constructor":{"a":1}}' })
    expect(admin.status).toBe(400)
    expect(admin.headers.get('x-request-id')).toBeTruthy()
    expect(((await admin.json()) as { error: string }).error).toContain('constructor')
    const upload = await post('/api/v1/files', '{"filename":"a.txt","purpose":"user_data","prototype":1}')
    expect(upload.status).toBe(400)
    expect(upload.error).toContain('prototype')
  })

  test('a tool schema 20,000 levels deep with a forced tool is a 400 naming the depth, not a 502', async () => {
    const deep = '{"type":"object","properties":{"a":'.repeat(20_000) + '{"type":"string"}' + '}}'.repeat(20_000)
    const raw = `{"model":"mock-gpt","tool_choice":"required","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`
    const r = await post('/api/alpha/v1/chat/completions', raw)
    expect(r.status).toBe(400)
    expect(r.error).toContain('nested more than 64 levels')
    expect(r.error).toContain('tools[0].function.parameters')
  })

  test('ordinary bodies at a realistic depth still pass', async () => {
    let schema = '{"type":"string"}'
    for (let i = 0; i < 20; i++) schema = `{"type":"object","properties":{"a":${schema}}}`
    const raw = `{"model":"mock-gpt","tool_choice":"required","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`
    const r = await post('/api/alpha/v1/chat/completions', raw)
    expect(r.status).toBe(200)
  })
})
