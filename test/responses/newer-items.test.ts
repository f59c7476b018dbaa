// What the current Responses API has that the gateway does not read itself: the input items
// compaction_trigger, configuration_update, program and program_output, the hosted tools
// computer and programmatic_tool_calling, and the allowed_tools choice. A GPT model's upstream
// gets them as they came. On the IR path (a Claude model) the items that ask something of the
// turn and the hosted tools are left out and named in x-switchyard-compat, allowed_tools
// keeps its mode and list, and the request is still answered.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((r) => ({ json: r.path.includes('/messages') ? fixtureJson('anthropic/messages/nonstream-text.json') : fixtureJson('openai/responses/nonstream-text.json') }))
  gw = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const items = [
  { type: 'message', role: 'user', content: 'summarise what we did' },
  { type: 'program', id: 'prg_1', call_id: 'call_p1', code: 'return 1', fingerprint: 'fp_1' },
  { type: 'program_output', id: 'prgo_1', call_id: 'call_p1', result: '1', status: 'completed' },
  { type: 'configuration_update', reasoning: { effort: 'low' } },
  { type: 'compaction_trigger' },
]

async function send(model: string) {
  const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: items }),
  })
  return { status: res.status, compat: (res.headers.get('x-switchyard-compat') ?? '').split(', '), text: await res.text() }
}

test("a GPT model's upstream gets the newer item types as they came", async () => {
  const r = await send('gpt-4o')
  expect(r.status).toBe(200)
  expect(up.requests.at(-1)!.json().input).toEqual(items)
})

test('a Claude model: the items that ask for something are named, the rest of the turn answered', async () => {
  const r = await send('claude-haiku-4-5')
  expect([r.status, r.text.slice(0, 200)]).toEqual([200, expect.any(String)])
  expect(r.compat).toEqual(expect.arrayContaining(['input.configuration_update', 'input.compaction_trigger']))
  expect(JSON.stringify(up.requests.at(-1)!.json().messages)).toContain('summarise what we did')
})

test("the newer hosted tool types on a Claude model: left out and named, not a 400", async () => {
  for (const tool of [{ type: 'programmatic_tool_calling' }, { type: 'computer', display_width: 1024, display_height: 768, environment: 'linux' }]) {
    const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', input: 'hi', tools: [tool] }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')).toContain(`tools.${tool.type}`)
  }
})

test('allowed_tools: a GPT upstream gets it as it came; a Claude model is offered only the tools it lists, with its mode', async () => {
  const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }, { type: 'function', name: 'g', parameters: { type: 'object', properties: {} } }]
  const choice = { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'g' }] }
  const post = (model: string, tool_choice: unknown) =>
    fetch(`${gw.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: 'hi', tools, tool_choice }),
    })
  expect((await post('gpt-4o', choice)).status).toBe(200)
  expect(up.requests.at(-1)!.json().tool_choice).toEqual(choice)
  expect((await post('claude-haiku-4-5', choice)).status).toBe(200)
  const sent = up.requests.at(-1)!.json()
  expect(sent.tools.map((t: { name: string }) => t.name)).toEqual(['g'])
  expect(sent.tool_choice).toMatchObject({ type: 'any' })
  const bad = await post('claude-haiku-4-5', { ...choice, mode: 'sometimes' })
  expect([bad.status, ((await bad.json()) as { error: string }).error]).toEqual([400, expect.stringContaining('tool_choice.mode')])
})

// the model may then answer without the call that was asked for: never unsaid
test('a tool_choice for a hosted tool a Claude model does without, or required with only such tools: named', async () => {
  const post = async (tools: unknown[], tool_choice: unknown) => {
    const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', input: 'hi', tools, tool_choice }),
    })
    return { status: res.status, compat: (res.headers.get('x-switchyard-compat') ?? '').split(', '), sent: up.requests.at(-1)!.json() }
  }
  const fn = { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }
  const hosted = { type: 'file_search', vector_store_ids: ['vs_1'] }
  const a = await post([fn, hosted], { type: 'file_search' })
  expect([a.status, a.sent.tool_choice]).toEqual([200, undefined])
  expect(a.compat).toEqual(expect.arrayContaining(['tool_choice']))
  const b = await post([hosted], 'required')
  expect([b.status, b.sent.tools]).toEqual([200, undefined])
  expect(b.compat).toEqual(expect.arrayContaining(['tool_choice']))
  // a choice that carried over is not named
  const c = await post([fn, hosted], 'required')
  expect(c.sent.tool_choice).toMatchObject({ type: 'any' })
  expect(c.compat).not.toContain('tool_choice')
})
