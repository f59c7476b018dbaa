// Anthropic's server tools (web search and fetch, code execution, tool search, the browser and
// computer toolsets, whatever their version) on the messages surface. A Claude model gets them
// as they came. A GPT model cannot run them: it gets the custom tools only, and each server
// tool it did without is named in x-switchyard-compat, never dropped unsaid. A container_upload
// block (a file for the code execution container) is taken too.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((r) => ({ json: r.path.includes('/messages') ? fixtureJson('anthropic/messages/nonstream-text.json') : fixtureJson('openai/chat/nonstream-text.json') }))
  gw = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const tools = [
  { name: 'lookup', description: 'find a row', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
  { type: 'web_search_20260318', name: 'web_search' },
  { type: 'code_execution_20260521', name: 'code_execution' },
  { type: 'browser_20260801', name: 'browser' },
]
const upload = { role: 'user', content: [{ type: 'container_upload', file_id: 'file_011' }, { type: 'text', text: 'run it' }] }

async function send(model: string, extra: Record<string, unknown>) {
  const res = await fetch(`${gw.url}/api/beta/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  })
  return { status: res.status, compat: (res.headers.get('x-switchyard-compat') ?? '').split(', ').filter(Boolean), sent: up.requests.at(-1)!.json() }
}

test('a Claude model gets the server tools and a container upload as they came', async () => {
  const r = await send('claude-haiku-4-5', { tools, messages: [upload] })
  expect(r.status).toBe(200)
  expect(r.sent.tools).toEqual(tools)
  expect(r.sent.messages[0].content[0]).toEqual(upload.content[0])
  expect(r.compat).toEqual([])
})

test('a GPT model: the custom tool goes on, each server tool is named', async () => {
  const r = await send('gpt-4o', { tools, messages: [upload] })
  expect(r.status).toBe(200)
  expect(r.sent.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['lookup'])
  expect(r.compat).toEqual(expect.arrayContaining(['tools.web_search_20260318', 'tools.code_execution_20260521', 'tools.browser_20260801']))
  expect(JSON.stringify(r.sent.messages)).toContain('run it')
})

test('a GPT model given only server tools gets none, and is told which', async () => {
  const r = await send('gpt-4o', { tools: tools.slice(1, 2) })
  expect(r.status).toBe(200)
  expect(r.sent.tools).toBeUndefined()
  expect(r.compat).toEqual(['tools.web_search_20260318'])
})

// bash and the text editor run at the client: a GPT model can call them as functions, and the
// client runs the call as it would Claude's
test('a GPT model gets bash and the text editor as the function tools they stand for, under their names', async () => {
  const own = [
    { type: 'bash_20250124', name: 'bash' },
    { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 1000 },
  ]
  const r = await send('gpt-4o', { tools: [...own, tools[1]], tool_choice: { type: 'tool', name: 'bash' } })
  expect(r.status).toBe(200)
  const sent = r.sent.tools as { type: string; function: { name: string; parameters: { properties: Record<string, unknown>; required?: string[] } } }[]
  expect(sent.map((t) => [t.type, t.function.name])).toEqual([['function', 'bash'], ['function', 'str_replace_based_edit_tool']])
  expect(Object.keys(sent[0]!.function.parameters.properties)).toEqual(['command', 'restart'])
  expect(sent[1]!.function.parameters.required).toEqual(['command', 'path'])
  expect(r.sent.tool_choice).toEqual({ type: 'function', function: { name: 'bash' } })
  expect(r.compat).toEqual(expect.arrayContaining(['tools.bash_20250124->function', 'tools.text_editor_20250728->function', 'tools.web_search_20260318']))
  // a Claude model still gets them as they came
  const c = await send('claude-haiku-4-5', { tools: own })
  expect(c.sent.tools).toEqual(own)
})
