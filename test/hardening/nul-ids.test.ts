// A NUL character in an id a client names (a URL's %00, a body's \u0000 under an id key) is a
// 400 naming where, on SQLite and PostgreSQL alike: PostgreSQL's text cannot hold one, and a
// lookup binding one was a 500 there (a 502 quoting the failed SQL where a file id was read for
// a model, a 503 after a second's retries for a batch's input file). Text that is not an id
// (a message, a metadata value) may still hold one.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
})
afterAll(() => gw.stop())

async function call(method: string, path: string, raw?: string) {
  const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: raw })
  return { status: res.status, body: await res.json() }
}
const SAID = 'holds a NUL character (\\u0000 or %00), which no id has'
const A = '/api/alpha/v1'
const NUL = '"a\\u0000b"'

test('a %00 in a path or a query value of the stored-state routes is a 400 naming the path or the parameter', async () => {
  const cases: [string, string, string][] = [
    ['GET', `${A}/responses/%00`, 'path'],
    ['GET', `${A}/responses/resp_x%00/input_items`, 'path'],
    ['DELETE', `${A}/responses/%00`, 'path'],
    ['GET', `${A}/conversations/conv_%00/items`, 'path'],
    ['DELETE', `${A}/conversations/%00`, 'path'],
    ['GET', `/api/v1/files/%00/content`, 'path'],
    ['DELETE', `/api/beta/v1/files/file-%00`, 'path'],
    ['GET', `${A}/files?after=file-%00`, 'after'],
    ['GET', `/api/beta/v1/files?ids=%00`, 'ids'],
    ['GET', `${A}/batches/batch_%00`, 'path'],
    ['GET', `/api/v1/generation?id=%00`, 'id'],
  ]
  for (const [method, path, place] of cases) {
    const r = await call(method, path)
    expect({ path, ...r }).toEqual({ path, status: 400, body: { error: `${place}: ${SAID}` } })
  }
})

test('a \\u0000 in an id of a body is a 400 naming its place, on every surface that looks ids up', async () => {
  const conv = (await call('POST', `${A}/conversations`, '{}')).body.id as string
  const cases: [string, string, string][] = [
    [`${A}/responses`, `{"model":"mock-gpt","input":"x","previous_response_id":${NUL}}`, 'previous_response_id'],
    [`${A}/responses`, `{"model":"mock-gpt","input":"x","conversation":${NUL}}`, 'conversation'],
    [`${A}/responses`, `{"model":"mock-gpt","input":"x","conversation":{"id":${NUL}}}`, 'conversation.id'],
    [`${A}/responses`, `{"model":"mock-gpt","input":[{"type":"item_reference","id":${NUL}}]}`, 'input[0].id'],
    [`${A}/responses`, `{"model":"mock-gpt","input":[{"role":"user","content":[{"type":"input_file","file_id":${NUL}}]}]}`, 'input[0].content[0].file_id'],
    [`${A}/responses`, `{"model":"mock-gpt","input":"x","tools":[{"type":"code_interpreter","container":${NUL}}]}`, 'tools[0].container'],
    [`${A}/responses/input_tokens`, `{"model":"mock-gpt","input":"x","previous_response_id":${NUL}}`, 'previous_response_id'],
    [`${A}/conversations`, `{"items":[{"type":"message","role":"user","content":"x","id":${NUL}}]}`, 'items[0].id'],
    [`${A}/conversations/${conv}/items`, `{"items":[{"type":"message","role":"user","content":"x","id":${NUL}}]}`, 'items[0].id'],
    [`${A}/chat/completions`, `{"model":"mock-gpt","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":${NUL}}}]}]}`, 'messages[0].content[0].file.file_id'],
    ['/api/beta/v1/messages', `{"model":"mock-claude","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"document","source":{"type":"file","file_id":${NUL}}}]}]}`, 'messages[0].content[1].source.file_id'],
    [`${A}/batches`, `{"input_file_id":${NUL},"endpoint":"/v1/responses","completion_window":"24h"}`, 'input_file_id'],
  ]
  for (const [path, raw, place] of cases) {
    const r = await call('POST', path, raw)
    expect({ path, place, ...r }).toEqual({ path, place, status: 400, body: { error: `${place}: ${SAID}` } })
  }
  // the conversation is there, and nothing was added to it
  expect((await call('GET', `${A}/conversations/${conv}/items`)).body.data).toEqual([])
})

test('text that is no id may hold a NUL character: a message, a metadata value, a stored turn continued', async () => {
  const first = await call('POST', `${A}/responses`, `{"model":"mock-gpt","input":"mock: text a\\u0000b","metadata":{"k":"v\\u0000w"}}`)
  expect(first.status).toBe(200)
  expect(first.body.output_text).toBe('a\u0000b')
  expect(first.body.metadata).toEqual({ k: 'v\u0000w' })
  const next = await call('POST', `${A}/responses`, JSON.stringify({ model: 'mock-gpt', input: 'again', previous_response_id: first.body.id }))
  expect(next.status).toBe(200)
  const conv = await call('POST', `${A}/conversations`, `{"items":[{"type":"message","role":"user","content":"x\\u0000y"}],"metadata":{"k":"\\u0000"}}`)
  expect(conv.status).toBe(200)
  const items = await call('GET', `${A}/conversations/${conv.body.id}/items`)
  expect(items.body.data[0].content[0].text).toBe('x\u0000y')
})
