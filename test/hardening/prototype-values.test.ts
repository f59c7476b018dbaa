// A client string looked up in a table must find only the table's own rows: "toString",
// "constructor" or "__proto__" as a role or a part type once found a function on the
// prototype and answered 500. Every Object.prototype name, in every enum-like field of every
// surface (and in batch lines and query parameters), is a 400 that names the field.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const NAMES = [...Object.getOwnPropertyNames(Object.prototype), '__proto__']

let g: Gateway
beforeAll(async () => {
  g = await startGateway({ env: NO_LIMITS })
})
afterAll(() => g.stop())

const CHAT = '/api/alpha/v1/chat/completions'
const MESSAGES = '/api/beta/v1/messages'
const RESPONSES = '/api/alpha/v1/responses'
const hi = [{ role: 'user', content: 'hi' }]

/** [field named in the 400, path, body with the name in that field] */
const FIELDS: [string, string, (n: string) => unknown][] = [
  ['messages[0].role', CHAT, (n) => ({ model: 'mock-gpt', messages: [{ role: n, content: 'hi' }] })],
  ['messages[0].content[0].type', CHAT, (n) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: [{ type: n, text: 'hi' }] }] })],
  ['tools[0].type', CHAT, (n) => ({ model: 'mock-gpt', messages: hi, tools: [{ type: n, function: { name: 'f' } }] })],
  ['tool_choice', CHAT, (n) => ({ model: 'mock-gpt', messages: hi, tool_choice: n })],
  ['response_format.type', CHAT, (n) => ({ model: 'mock-gpt', messages: hi, response_format: { type: n } })],
  ['model', CHAT, (n) => ({ model: n, messages: hi })],
  ['reasoning_effort', CHAT, (n) => ({ model: 'mock-claude', messages: hi, reasoning_effort: n })],
  ['messages[0].role', MESSAGES, (n) => ({ model: 'mock-claude', max_tokens: 10, messages: [{ role: n, content: 'hi' }] })],
  ['messages[0].content[0].type', MESSAGES, (n) => ({ model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: [{ type: n, text: 'hi' }] }] })],
  ['thinking.type', MESSAGES, (n) => ({ model: 'mock-claude', max_tokens: 2000, messages: hi, thinking: { type: n } })],
  ['tool_choice', MESSAGES, (n) => ({ model: 'mock-claude', max_tokens: 10, messages: hi, tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: n } })],
  ['source', MESSAGES, (n) => ({ model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: n, data: 'x' } }] }] })],
  ['thinking.display', MESSAGES, (n) => ({ model: 'mock-gpt', max_tokens: 10, messages: hi, thinking: { type: 'adaptive', display: n } })],
  ['input[0]', RESPONSES, (n) => ({ model: 'mock-gpt', input: [{ type: n }] })],
  ['input[0].role', RESPONSES, (n) => ({ model: 'mock-gpt', input: [{ role: n, content: 'hi' }] })],
  ['input[0].content[0].type', RESPONSES, (n) => ({ model: 'mock-gpt', input: [{ role: 'user', content: [{ type: n }] }] })],
  ['tool_choice', RESPONSES, (n) => ({ model: 'mock-gpt', input: 'hi', tool_choice: n })],
  ['reasoning.summary', RESPONSES, (n) => ({ model: 'mock-gpt', input: 'hi', reasoning: { summary: n } })],
  ['text.format', RESPONSES, (n) => ({ model: 'mock-gpt', input: 'hi', text: { format: { type: n } } })],
  ['truncation', RESPONSES, (n) => ({ model: 'mock-gpt', input: 'hi', truncation: n })],
  ['reasoning.effort', RESPONSES, (n) => ({ model: 'mock-claude', input: 'hi', reasoning: { effort: n } })],
  ['text.verbosity', RESPONSES, (n) => ({ model: 'mock-claude', input: 'hi', text: { verbosity: n } })],
]

const post = (path: string, body: unknown) =>
  fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('every Object.prototype name as an enum value is a 400 naming the field', () => {
  for (const [field, path, make] of FIELDS) {
    test(`${path.split('/').at(-1)} ${field}`, async () => {
      for (const n of NAMES) {
        const r = await post(path, make(n))
        const text = await r.text()
        expect(r.headers.get('x-request-id')).toBeTruthy()
        expect(`${n} → ${r.status}`).toBe(`${n} → 400`)
        expect(text).toContain(field.split('.')[0]!.replace(/\[.*$/, ''))
        expect(text).not.toContain('Internal error')
      }
    })
  }
})

test('batch lines with a prototype name as a role are refused naming the line and field, with no validator internals', async () => {
  for (const n of NAMES) {
    const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: n, content: 'hi' }] } })
    const form = new FormData()
    form.set('purpose', 'batch')
    form.set('file', new File([line + '\n'], 'in.jsonl'))
    const file = (await (await fetch(g.url + '/api/v1/files', { method: 'POST', headers: { authorization: `Bearer ${g.key}` }, body: form })).json()) as { id: string }
    const r = await post('/api/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    const text = await r.text()
    expect(`${n} → ${r.status}`).toBe(`${n} → 400`)
    expect(text).toContain('messages[0].role')
    expect(text).not.toContain('could not be checked')
  }
})

test('query parameters: a prototype name as usage timeframe or files order is a 400 naming it', async () => {
  for (const n of NAMES) {
    const q = encodeURIComponent(n)
    const usage = await fetch(`${g.url}/api/v1/usage?timeframe=${q}`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(`${n} → ${usage.status}`).toBe(`${n} → 400`)
    expect(await usage.text()).toContain('timeframe')
    const files = await fetch(`${g.url}/api/v1/files?order=${q}`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(`${n} → ${files.status}`).toBe(`${n} → 400`)
    expect(await files.text()).toContain('order')
  }
})
