// A server of the chat wire (OpenAI-compatible, vLLM- or Ollama-style) may send a call's argument
// text ahead of the piece that carries its id and name, under the same index. The call must come
// out as one: its id, its name and all of its arguments. Before, the early text started a call
// of its own with no name, and the id and name began a second call with no arguments.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { HELD_MAX, openAIChatEvents } from '../../src/providers/openai/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const FIXTURE = 'openai/chat/stream-tool-call-arguments-first.handwritten.sse'

/** The fixture's calls by index, read off the wire (not by the gateway's parser). */
function callsOf(sse: string): { id: string; name: string; arguments: string }[] {
  const calls: { id: string; name: string; arguments: string }[] = []
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: {')) continue
    for (const c of JSON.parse(line.slice(6)).choices[0]?.delta?.tool_calls ?? []) {
      const k = (calls[c.index] ??= { id: '', name: '', arguments: '' })
      k.id ||= c.id ?? ''
      k.name ||= c.function?.name ?? ''
      k.arguments += c.function?.arguments ?? ''
    }
  }
  return calls
}
const WANT = callsOf(fixture(FIXTURE))

type Obj = Record<string, unknown>
const chunk = (delta: Obj, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-e', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const piece = (o: Obj) => chunk({ tool_calls: [o] })

async function events(sse: string): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of withBlocks(openAIChatEvents(parseSse(new Response(sse).body!)))) out.push(e)
  return out
}
const folded = async (sse: string) => (await collect((async function* () { yield* await events(sse) })())).content
const tail = chunk({}, 'tool_calls') + 'data: [DONE]\n\n'

describe('the adapter: argument text ahead of its call\'s id and name', () => {
  test('waits for them: one call per index, each with its id, its name and all of its arguments', async () => {
    expect(await folded(fixture(FIXTURE))).toEqual(WANT.map((c) => ({ type: 'tool-call', ...c })))
    expect(WANT.every((c) => c.id && c.name === 'get_weather' && JSON.parse(c.arguments).location)).toBe(true)
  })

  test('a call never named comes out at the end with all it held, named \'\' as the JSON reply would name it', async () => {
    const sse = piece({ index: 0, function: { arguments: '{"a":' } }) + piece({ index: 0, function: { arguments: '1}' } }) + tail
    expect(await folded(sse)).toEqual([{ type: 'tool-call', id: 'call_chatcmpl-e_0', name: '', arguments: '{"a":1}' }])
    // its id, when one came, is its own
    const withId = piece({ index: 0, id: 'call_x', function: { arguments: '{}' } }) + tail
    expect(await folded(withId)).toEqual([{ type: 'tool-call', id: 'call_x', name: '', arguments: '{}' }])
  })

  test('what a call holds is its own: a call named at another index meanwhile starts and streams at once', async () => {
    const sse = piece({ index: 0, function: { arguments: '{"a":' } }) + piece({ index: 1, id: 'call_b', function: { name: 'g', arguments: '{"b":2}' } })
      + piece({ index: 0, id: 'call_a', function: { name: 'f', arguments: '1}' } }) + tail
    const evs = await events(sse)
    // call_b started before call_a was named
    expect(evs.filter((e) => e.type === 'tool-input-start').map((e) => (e as { id: string }).id)).toEqual(['call_b', 'call_a'])
    expect(await folded(sse)).toEqual([{ type: 'tool-call', id: 'call_b', name: 'g', arguments: '{"b":2}' }, { type: 'tool-call', id: 'call_a', name: 'f', arguments: '{"a":1}' }])
  })

  test("a later call's arguments first: the calls named before it start first, in the order the server began them", async () => {
    const sse = piece({ index: 0, id: 'call_a', function: { name: 'f', arguments: '' } }) + piece({ index: 1, id: 'call_b', function: { name: 'g', arguments: '' } })
      + piece({ index: 1, function: { arguments: '{"b":' } }) + piece({ index: 0, function: { arguments: '{"a":1}' } }) + piece({ index: 1, function: { arguments: '2}' } }) + tail
    const evs = await events(sse)
    expect(evs.filter((e) => e.type === 'tool-input-start').map((e) => (e as { id: string }).id)).toEqual(['call_a', 'call_b'])
    expect(await folded(sse)).toEqual([{ type: 'tool-call', id: 'call_a', name: 'f', arguments: '{"a":1}' }, { type: 'tool-call', id: 'call_b', name: 'g', arguments: '{"b":2}' }])
  })

  test('the text held is bounded: past HELD_MAX a nameless call starts as it is, its pieces then stream as they come', async () => {
    const big = 'x'.repeat(HELD_MAX)
    const sse = piece({ index: 0, function: { arguments: '{"a":"' } }) + piece({ index: 0, function: { arguments: big } }) + piece({ index: 0, function: { arguments: '"}' } }) + tail
    const deltas = (await events(sse)).filter((e) => e.type === 'tool-input-delta') as { delta: string }[]
    // what it held went out at the piece that passed the bound; the last piece on its own
    expect(deltas.map((d) => d.delta.length)).toEqual([HELD_MAX + 6, 2])
    expect(await folded(sse)).toEqual([{ type: 'tool-call', id: 'call_chatcmpl-e_0', name: '', arguments: `{"a":"${big}"}` }])
  })
})

describe('through the translated surfaces, with the official SDKs', () => {
  let up: FakeUpstream
  let gw: Gateway
  let anthropic: Anthropic
  let openai: OpenAI
  beforeAll(async () => {
    up = await startFakeUpstream()
    gw = await startGateway({
      yaml: `
providers:
  - { id: local, kind: openai-compatible, base_url: "${up.url}/v1" }
models:
  - { id: qwen-local, family: openai, deployments: [{ provider: local, upstream_id: Qwen/Qwen2.5-7B-Instruct }], price: { input_mtok: 0, output_mtok: 0 } }
compat:
  cross_family: translate
`,
    })
    anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  })
  afterAll(async () => {
    await gw?.stop()
    await up?.stop()
  })
  const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } }

  test('messages (@anthropic-ai/sdk): one tool_use per call, with its id, name and whole input', async () => {
    up.script({ sse: fixture(FIXTURE) })
    const m = await anthropic.messages.stream({ model: 'qwen-local', max_tokens: 200, tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }] }).finalMessage()
    expect(m.content).toEqual(WANT.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) })) as any)
    expect(m.stop_reason).toBe('tool_use')
    expect(up.requests.at(-1)!.path).toBe('/v1/chat/completions')
  })

  test('responses (openai): one function_call item per call, with its call_id, name and whole arguments', async () => {
    up.script({ sse: fixture(FIXTURE) })
    const tool = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } }, strict: false }
    const s = openai.responses.stream({ model: 'qwen-local', input: 'Weather in Paris and Tokyo?', tools: [tool], store: false })
    let streamed = ''
    for await (const e of s) if (e.type === 'response.function_call_arguments.delta') streamed += e.delta
    const r = await s.finalResponse()
    expect(r.output.map((o: any) => ({ call_id: o.call_id, name: o.name, arguments: o.arguments }))).toEqual(WANT.map((c) => ({ call_id: c.id, name: c.name, arguments: c.arguments })))
    expect(streamed).toBe(WANT.map((c) => c.arguments).join(''))
    expect(up.requests.at(-1)!.path).toBe('/v1/chat/completions')
  })
})
