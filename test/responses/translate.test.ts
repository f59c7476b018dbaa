// `compat.cross_family: translate` (what lets Codex drive a Claude model): OpenAI-only
// parameters become their Anthropic counterparts or are dropped and named in
// x-switchyard-compat; non-function tools are mapped where possible (a custom tool becomes a
// function taking one string, and its call comes back as a custom_tool_call), else dropped
// and named; a reasoning summary shows Claude's thinking text.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { frames, startResponsesRig, types, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
beforeAll(async () => {
  rig = await startResponsesRig({}, 'compat:\n  cross_family: translate\n')
})
afterAll(async () => {
  await rig.stop()
})

const CODEX_TOOLS = [
  { type: 'function', name: 'exec_command', description: 'run', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
  { type: 'custom', name: 'apply_patch', description: 'patch files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
  { type: 'tool_search', execution: 'client' },
  { type: 'web_search', external_web_access: false },
  { type: 'namespace', name: 'multi_agent_v1', tools: [] },
]

describe('Codex driving a Claude model', () => {
  test("Codex's body on the mock Claude model: tools mapped or dropped and named; parallel_tool_calls translated", async () => {
    const res = await rig.postResponses({
      model: 'mock-claude',
      input: [{ type: 'message', id: 'msg_1', role: 'developer', content: [{ type: 'input_text', text: 'base' }] }, { type: 'message', id: 'msg_2', role: 'user', content: [{ type: 'input_text', text: 'mock: tool exec_command {"cmd":"echo sy-ok"}' }] }],
      tools: CODEX_TOOLS,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 's',
      text: { verbosity: 'low' },
      client_metadata: { session_id: 's' },
    })
    expect(res.status).toBe(200)
    const compat = res.headers.get('x-switchyard-compat')!
    expect(compat).toContain('tools.tool_search')
    expect(compat).toContain('tools.web_search')
    // named by type only: the header carries the gateway's own words, never a client's tool name
    expect(compat).toContain('tools.namespace')
    expect(compat).not.toContain('multi_agent_v1')
    expect(compat).not.toContain('apply_patch')
    // the thinking is sealed into encrypted_content as asked: nothing of include goes unserved
    expect(compat.split(', ')).not.toContain('include')
    const fs = frames(await res.text())
    const final = fs.at(-1)!.data.response
    expect(final.status).toBe('requires_action')
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"echo sy-ok"}' })
  })

  test('a custom tool call comes back as a custom_tool_call item with its raw input', async () => {
    const res = await rig.postResponses({ model: 'mock-claude', input: 'mock: tool apply_patch {"input":"*** Begin Patch"}', tools: CODEX_TOOLS, stream: true })
    const fs = frames(await res.text())
    expect(types(fs)).toContain('response.custom_tool_call_input.done')
    const item = fs.at(-1)!.data.response.output[0]
    expect(item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' })
    // and goes back to the model as a tool call with its output
    const next = await rig.postResponses({ model: 'mock-claude', store: false, tools: CODEX_TOOLS, input: [{ role: 'user', content: 'patch it' }, item, { type: 'custom_tool_call_output', call_id: item.call_id, output: 'Done!' }] })
    expect((await next.json()).output_text).toBe('tool result: Done!')
  })

  test("reasoning_summary on a Claude model shows the thinking text as summary events and reasoning.summaries", async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-thinking.sse') })
    const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'think', reasoning_summary: 'auto', stream: true })
    expect(res.status).toBe(200)
    const fs = frames(await res.text())
    const t = types(fs)
    expect(t).toContain('response.reasoning_summary_part.added')
    expect(t).toContain('response.reasoning_summary_text.delta')
    expect(t).toContain('response.reasoning_summary_part.done')
    const deltas = fs.filter((f) => f.data.type === 'response.reasoning_summary_text.delta').map((f) => f.data.delta).join('')
    const final = fs.at(-1)!.data.response
    expect(final.reasoning.summaries).toEqual([{ type: 'summary_text', text: deltas }])
    // reasoning effort → a thinking budget upstream
    expect(rig.up.requests.at(-1)!.json().thinking).toMatchObject({ type: 'enabled', budget_tokens: expect.any(Number) })
  })

  // Codex's sub-agent tools come in a namespace; a member named as another tool is offered as namespace__name
  test("a namespace's tools are offered to Claude as functions; a call comes back with its namespace, and goes back to the model under the name it was offered by", async () => {
    const fn = (name: string) => ({ type: 'function', name, description: name, parameters: { type: 'object', properties: { id: { type: 'string' } } } })
    const tools = [fn('wait'), { type: 'namespace', name: 'multi_agent_v1', description: 'sub-agents', tools: [fn('spawn_agent'), fn('wait')] }]
    const mock = await rig.postResponses({ model: 'mock-claude', tools, input: 'mock: tool multi_agent_v1__wait {"id":"a1"}' })
    expect((await mock.json()).output[0]).toMatchObject({ type: 'function_call', name: 'wait', namespace: 'multi_agent_v1', arguments: '{"id":"a1"}' })
    const streamed = frames(await (await rig.postResponses({ model: 'mock-claude', tools, stream: true, input: 'mock: tool spawn_agent {"id":"a2"}' })).text())
    expect(streamed.at(-1)!.data.response.output[0]).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1' })
    expect(streamed.find((f) => f.data.type === 'response.output_item.added')!.data.item).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' })
    // on the Anthropic upstream: the members as tools; a namespaced call in the history under the offered name
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await rig.postResponses({
      model: 'claude-sonnet-4-5', tools, store: false,
      input: [
        { role: 'user', content: 'spawn and wait' },
        { type: 'function_call', call_id: 'toolu_w', name: 'wait', namespace: 'multi_agent_v1', arguments: '{"id":"a1"}' },
        { type: 'function_call_output', call_id: 'toolu_w', output: 'done' },
      ],
    })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.tools.map((t: any) => t.name)).toEqual(['wait', 'spawn_agent', 'multi_agent_v1__wait'])
    expect(sent.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_w', name: 'multi_agent_v1__wait' })
    expect(res.headers.get('x-switchyard-compat') ?? '').not.toContain('namespace')
  })

  test('a namespace given twice offers its members once; a choice or allowed_tools names a member with its namespace; hosted members are named as left out; a bad member name is a 400', async () => {
    const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } })
    const ns = { type: 'namespace', name: 'agents', description: 'sub-agents', tools: [fn('spawn'), fn('wait'), { type: 'web_search' }] }
    const send = async (body: Record<string, unknown>) => {
      rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
      const res = await rig.postResponses({ model: 'claude-sonnet-4-5', store: false, input: [{ type: 'additional_tools', tools: [ns] }, { role: 'user', content: 'go' }], ...body })
      return { res, sent: res.status === 200 ? rig.up.requests.at(-1)!.json() : await res.json() }
    }
    const twice = await send({ tools: [fn('wait'), ns] })
    expect(twice.sent.tools.map((t: any) => t.name)).toEqual(['wait', 'spawn', 'agents__wait'])
    expect(twice.res.headers.get('x-switchyard-compat')).toContain('tools.namespace.web_search')
    const chosen = await send({ tools: [fn('wait'), ns], tool_choice: { type: 'function', name: 'wait', namespace: 'agents' } })
    expect(chosen.sent.tool_choice).toEqual({ type: 'tool', name: 'agents__wait' })
    const allowed = await send({ tools: [fn('wait'), ns], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'namespace', name: 'agents' }] } })
    expect(allowed.sent.tools.map((t: any) => t.name)).toEqual(['spawn', 'agents__wait'])
    const missing = await send({ tools: [ns], tool_choice: { type: 'function', name: 'spawn', namespace: 'other' } })
    expect(missing.res.status).toBe(400)
    const bad = await send({ tools: [{ ...ns, tools: [fn('has space')] }] })
    expect(bad.res.status).toBe(400)
    expect(bad.sent.error).toContain('tools[0].tools[0].name')
  })

  test('mcp_servers → Anthropic MCP connector with its beta header', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'hi', mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'ex', authorization_token: 'tok' }] })
    expect(res.status).toBe(200)
    const up = rig.up.requests.at(-1)!
    expect(up.headers['anthropic-beta']).toContain('mcp-client-2025-04-04')
    expect(up.json().mcp_servers).toEqual([{ type: 'url', url: 'https://mcp.example.com/sse', name: 'ex', authorization_token: 'tok' }])
  })
})

describe("Codex's code-mode models", () => {
  test('an additional_tools input item (tools in namespaces) is accepted; on the IR path its tools join the request', async () => {
    const res = await rig.postResponses({
      model: 'mock-claude',
      input: [
        { type: 'additional_tools', id: 'at_1', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec', description: 'run code' }, { type: 'function', name: 'wait', parameters: { type: 'object', properties: {} } }] }] },
        { role: 'user', content: 'mock: tool exec {"input":"echo sy-ok"}' },
      ],
      reasoning: { context: 'all_turns' },
      store: false,
      stream: true,
    })
    expect(res.status).toBe(200)
    const final = frames(await res.text()).at(-1)!.data.response
    expect(final.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'exec', input: 'echo sy-ok' })
  })
})
