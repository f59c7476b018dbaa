// The gateway translates a parameter or says it did not, out loud: what it cannot carry to the
// other family is named in x-switchyard-compat or refused with a 400 naming it, never dropped in
// silence. The header holds only the gateway's own field names, bounded, valid as a header.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let g: Gateway
let up: FakeUpstream
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req) => ({ json: req.path.endsWith('/messages') ? fixtureJson('anthropic/messages/nonstream-text.json') : fixtureJson('openai/chat/nonstream-text.json') }))
  g = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await g.stop()
  await up.stop()
})

const post = (path: string, body: unknown) =>
  fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

test("messages output_format for a GPT model becomes OpenAI's json_schema response format, and says so", async () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
  const r = await post('/api/beta/v1/messages', { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], output_format: { type: 'json_schema', schema } })
  expect(r.status).toBe(200)
  expect(r.headers.get('x-switchyard-compat')).toContain('output_format->response_format')
  expect(up.requests.at(-1)!.json().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } })
})

for (const [name, extra] of [
  ['text.format', { text: { format: { type: 'json_object' } } }],
  ['context_management', { context_management: [{ type: 'compaction', compact_threshold: 1000 }] }],
  ['metadata', { metadata: { a: 'b' } }],
  ['truncation', { truncation: 'auto' }],
] as const) {
  test(`responses ${name} for a Claude model is named in x-switchyard-compat`, async () => {
    const r = await post('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', input: 'hi', ...extra })
    expect(r.status).toBe(200)
    expect(r.headers.get('x-switchyard-compat')).toContain(name)
  })
}

test('an unknown tool type on responses for a Claude model is a 400 naming tools[i].type', async () => {
  const r = await post('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'function', name: 'f' }, { type: 'ünknown_tool' }] })
  expect(r.status).toBe(400)
  expect(((await r.json()) as { error: string }).error).toStartWith('tools[1].type:')
})

test('twenty long unknown tool types never make a header at all: the request is refused, in a small body', async () => {
  const tools = Array.from({ length: 20 }, (_, i) => ({ type: `t${i}${'x'.repeat(5_000)}` }))
  const r = await post('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', input: 'hi', tools })
  expect(r.status).toBe(400)
  expect((await r.text()).length).toBeLessThan(1_000)
})

// the web search has a Claude counterpart (Anthropic's web search tool) and is translated, not named
test('hosted tools a Claude model has no counterpart for are named by type, in a header any client reads', async () => {
  const r = await post('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_ünïcode'] }, { type: 'code_interpreter', container: { type: 'auto' } }] })
  expect(r.status).toBe(200)
  const header = r.headers.get('x-switchyard-compat')!
  expect(header).not.toContain('tools.web_search')
  expect(header).toContain('tools.file_search')
  expect(header).toContain('tools.code_interpreter')
  expect(/^[\x20-\x7e]*$/.test(header)).toBe(true)
  expect(header.length).toBeLessThanOrEqual(1_005)
})
