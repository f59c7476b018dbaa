// What the official SDK's beta messages declare for the conversation's own bookkeeping: an MCP
// toolset (a tool with no name of its own, naming an `mcp_servers` entry), and the blocks a
// reply carries that the client sends back (MCP tool use and result, compaction, fallback, the
// MCP tool listing) or adds (tool addition and removal). A Claude model gets them as they came;
// a GPT model continues from the text around them and a compaction's summary, an MCP toolset
// named as done without.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
  rig.up.script((r) => ({ json: fixture(r.path.includes('/messages') ? 'anthropic/messages/nonstream-text.json' : 'openai/chat/nonstream-text.json') }))
})
afterAll(() => rig.stop())

const mcpServers = [{ type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'docs' }]
const lookup = { name: 'lookup', description: 'find a row', input_schema: { type: 'object' as const, properties: { q: { type: 'string' } } } }
const assistantTurn = {
  role: 'assistant' as const,
  content: [
    { type: 'mcp_tool_listing' as const, mcp_server_name: 'docs', tools: [{ name: 'search', input_schema: { type: 'object' as const } }] },
    { type: 'mcp_tool_use' as const, id: 'mcptoolu_1', name: 'search', server_name: 'docs', input: { q: 'x' } },
    { type: 'mcp_tool_result' as const, tool_use_id: 'mcptoolu_1', content: 'found it', is_error: false },
    { type: 'fallback' as const, from: { model: 'claude-opus-4-7' }, to: { model: 'claude-sonnet-4-5' } },
    { type: 'text' as const, text: 'the answer is 4' },
  ],
}
const messages = [
  { role: 'assistant' as const, content: [{ type: 'compaction' as const, content: 'earlier: the user asked about rows' }] },
  { role: 'user' as const, content: [{ type: 'text' as const, text: 'look it up' }, { type: 'tool_addition' as const, tool: { type: 'tool_reference' as const, name: 'lookup' } }] },
  assistantTurn,
  { role: 'user' as const, content: [{ type: 'tool_removal' as const, tool: { type: 'tool_reference' as const, name: 'lookup' } }, { type: 'text' as const, text: 'thanks' }] },
]
const tools = [lookup, { type: 'mcp_toolset' as const, mcp_server_name: 'docs' }]

// mcp_servers is Anthropic's alone: a GPT model refuses it (the family rules), so it goes to Claude only
async function send(model: string) {
  const servers = model.startsWith('claude') ? { mcp_servers: mcpServers } : {}
  const { response } = await rig.anthropic.beta.messages
    .create({ model, max_tokens: 100, betas: ['mcp-client-2025-11-20'], ...servers, tools, messages })
    .withResponse()
  return { compat: (response.headers.get('x-switchyard-compat') ?? '').split(', ').filter(Boolean), sent: rig.up.requests.at(-1)!.json() }
}

test('a Claude model gets the MCP toolset and every beta block as the SDK sent them', async () => {
  const r = await send('claude-sonnet-4-5')
  expect(r.sent.tools).toEqual(tools)
  expect(r.sent.messages).toEqual(messages)
  expect(r.compat).toEqual([])
})

test('a GPT model gets the text around the beta blocks and the compaction summary, and is told the MCP toolset was done without', async () => {
  const r = await send('gpt-4.1')
  expect(r.sent.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['lookup'])
  expect(r.compat).toEqual(expect.arrayContaining(['tools.mcp_toolset']))
  const sent = JSON.stringify(r.sent.messages)
  for (const text of ['earlier: the user asked about rows', 'look it up', 'the answer is 4', 'thanks']) expect(sent).toContain(text)
  for (const type of ['mcp_tool_use', 'mcp_tool_listing', 'tool_addition', 'fallback', 'compaction']) expect(sent).not.toContain(type)
})
