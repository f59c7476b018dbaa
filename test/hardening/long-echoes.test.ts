// An error that names a client's value quotes it cut: a 10 KB model id, cursor, tool name or
// mock directive never comes back whole (an error the size of the request, for every bad
// request, is an amplifier and a log flood). The message still names the field.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

const LONG = 'x'.repeat(10_000)
let g: Gateway
beforeAll(async () => {
  g = await startGateway()
})
afterAll(() => g.stop())

const get = (path: string) => fetch(g.url + path, { headers: { authorization: `Bearer ${g.key}` } })
const post = (path: string, body: unknown) =>
  fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function small(res: Response, field: string) {
  const text = await res.text()
  expect(res.status).toBeGreaterThanOrEqual(400)
  expect(res.status).toBeLessThan(500)
  expect(text.length).toBeLessThan(1_000)
  expect(text).toContain(field)
}

test('files list cursors', async () => {
  await small(await get(`/api/v1/files?after=${LONG}`), 'after')
  await small(await get(`/api/beta/v1/files?after_id=${LONG}`), 'after_id')
  await small(await get(`/api/beta/v1/files?before_id=${LONG}`), 'before_id')
})

test('a model id', async () => {
  await small(await get(`/api/v1/models/${LONG}`), 'Model')
  await small(await post('/api/alpha/v1/chat/completions', { model: LONG, messages: [{ role: 'user', content: 'hi' }] }), 'model')
})

test('a tool name in tool_choice and in a mock directive', async () => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }]
  await small(await post('/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: { type: 'function', function: { name: LONG } } }), 'tool_choice.function.name')
  await small(await post('/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages: [{ role: 'user', content: `mock: tool ${LONG}` }], tools }), 'mock: tool')
})

test('twenty long tool names listed by one message', async () => {
  // names at the longest the API allows (64 characters): the message listing them is cut
  const names = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'n'.repeat(62)}`)
  const tools = names.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } }))
  await small(await post('/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: tool nope' }], tools }), 'mock: tool')
})
