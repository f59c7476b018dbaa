// An Ollama-style server of the chat wire numbers every streamed call `index: 0`, telling them apart
// by their ids only, and may send a call's id with its first argument text ahead of its name. The
// piece with the new id then belongs to a new call once the call before has its whole arguments (a
// JSON value, which no more text can continue): before, it was merged into the first call, whose
// arguments stopped being JSON, and the second call lost its start.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import { openAIChatEvents } from '../../src/providers/openai/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const FIXTURE = 'openai/chat/stream-tool-calls-all-index-zero.handwritten.sse'

/** The fixture's calls read off the wire by id (a piece with none continues the last), not by the gateway's parser. */
function callsOf(sse: string): { id: string; name: string; arguments: string }[] {
  const calls: { id: string; name: string; arguments: string }[] = []
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: {')) continue
    for (const c of JSON.parse(line.slice(6)).choices[0]?.delta?.tool_calls ?? []) {
      if (c.id && calls.at(-1)?.id !== c.id) calls.push({ id: c.id, name: '', arguments: '' })
      const k = calls.at(-1)!
      k.name ||= c.function?.name ?? ''
      k.arguments += c.function?.arguments ?? ''
    }
  }
  return calls
}
const WANT = callsOf(fixture(FIXTURE))

type Obj = Record<string, unknown>
const chunk = (delta: Obj, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-z', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const piece = (o: Obj) => chunk({ tool_calls: [o] })
const tail = chunk({}, 'tool_calls') + 'data: [DONE]\n\n'
const folded = async (sse: string) => (await collect(withBlocks(openAIChatEvents(parseSse(new Response(sse).body!))))).content

describe('the adapter: every call at index 0, told apart by their ids', () => {
  test("a new id with argument text after a call's whole arguments begins a call of its own", async () => {
    expect(WANT.length).toBe(2)
    expect(WANT.every((c) => c.name === 'get_weather' && JSON.parse(c.arguments).location)).toBe(true)
    expect(await folded(fixture(FIXTURE))).toEqual(WANT.map((c) => ({ type: 'tool-call', ...c })))
  })

  test("a new id inside a call's arguments (a server that changes ids piece to piece) is still that call's", async () => {
    const sse = piece({ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":' } }) + piece({ index: 0, id: 'call_2', function: { arguments: '1}' } }) + tail
    expect(await folded(sse)).toEqual([{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":1}' }])
    // a string that holds braces does not end the arguments early
    const braces = piece({ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":"}\\"{' } }) + piece({ index: 0, id: 'call_2', function: { arguments: '"}' } }) + tail
    expect(await folded(braces)).toEqual([{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":"}\\"{"}' }])
    // nor does a new id with no argument text begin a call
    const bare = piece({ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":1}' } }) + piece({ index: 0, id: 'call_2', function: { arguments: ' ' } }) + tail
    expect(await folded(bare)).toEqual([{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":1} ' }])
  })
})

describe('through the messages surface, with the official SDK', () => {
  let up: FakeUpstream
  let gw: Gateway
  let anthropic: Anthropic
  beforeAll(async () => {
    up = await startFakeUpstream()
    gw = await startGateway({
      yaml: `
providers:
  - { id: local, kind: openai-compatible, base_url: "${up.url}/v1" }
models:
  - { id: llama-local, family: openai, deployments: [{ provider: local, upstream_id: "llama3.1:8b" }], price: { input_mtok: 0, output_mtok: 0 } }
compat:
  cross_family: translate
`,
    })
    anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
  })
  afterAll(async () => {
    await gw?.stop()
    await up?.stop()
  })
  const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } }

  test('one tool_use per call, with its id, name and whole input', async () => {
    up.script({ sse: fixture(FIXTURE) })
    const m = await anthropic.messages.stream({ model: 'llama-local', max_tokens: 200, tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }] }).finalMessage()
    expect(m.content).toEqual(WANT.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) })) as any)
    expect(m.stop_reason).toBe('tool_use')
  })
})
