// Streams of one family made at random (text cut anywhere, multi-byte characters and escapes
// among it, thinking, parallel calls whose argument pieces come one call after another or
// alternated, every finish; the bytes sent in pieces that cut events and characters) and
// translated for a client of the other family: each client stream must keep its wire's order
// of events and add up to what the upstream said (test/helpers/stream-grammar.ts).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { chatWireModel, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { seeded, type Seeded } from '../helpers/seeded.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { chatStreamBreaks, messagesStreamBreaks, responsesStreamBreaks, type Said } from '../helpers/stream-grammar.ts'

/** What the upstream says next, in its pieces. */
interface Plan extends Said {
  pieces: string[][]
  argPieces: string[][]
  ids: string[]
  thinking?: string[]
  alternate: boolean
}
let plan: Plan
let r: Seeded

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => sent(req.path.includes('/messages') ? anthropicStream(plan) : openaiStream(plan)))
  gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up) }, yaml: chatWireModel(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const WORDS = ['Hello', ' world', ' ', '\n', 'é', '😀', '"quoted"', '\\', '{}', ' and more']
const ARGS = [{}, { city: 'Paris' }, { q: 'é😀 "x"', n: [1, 2, { a: null }] }, { deep: { a: { b: 'c' } } }]
const TOOLS = ['get_weather', 'add', 'search_docs']

/** `s` in pieces of 1 to 6 characters (a pair of surrogates is one). */
function cut(s: string): string[] {
  const chars = [...s]
  const out: string[] = []
  for (let i = 0; i < chars.length; ) {
    const n = 1 + r.count(6)
    out.push(chars.slice(i, i + n).join(''))
    i += n
  }
  return out
}

function makePlan(): Plan {
  const texts = Array.from({ length: r.count(3) }, () => Array.from({ length: 1 + r.count(4) }, () => r.pick(WORDS)).join(''))
  const calls = Array.from({ length: r.chance(0.5) ? 1 + r.count(3) : 0 }, () => ({ name: r.pick(TOOLS), args: JSON.stringify(r.pick(ARGS)) }))
  const finish = calls.length ? 'tool' : r.pick(['stop', 'stop', 'length'] as const)
  return {
    text: texts.join(''),
    calls,
    finish,
    pieces: texts.map(cut),
    argPieces: calls.map((c) => cut(c.args)),
    ids: calls.map((_, k) => `call_${k}${r.count(1000)}`),
    thinking: r.chance(0.3) ? cut(`Let me think.${r.pick(WORDS)}`) : undefined,
    alternate: r.chance(0.3),
  }
}

/** An OpenAI chat stream: the calls one after another, or their headers first and their pieces alternated. */
function openaiStream(p: Plan): string {
  const head = { id: 'chatcmpl-random', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' }
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  let out = chunk({ role: 'assistant', content: '' })
  for (const piece of p.pieces.flat()) out += chunk({ content: piece })
  const header = (k: number) => chunk({ tool_calls: [{ index: k, id: p.ids[k], type: 'function', function: { name: p.calls[k]!.name, arguments: '' } }] })
  const piece = (k: number, a: string) => chunk({ tool_calls: [{ index: k, function: { arguments: a } }] })
  if (p.alternate) {
    out += p.calls.map((_, k) => header(k)).join('')
    const longest = Math.max(0, ...p.argPieces.map((a) => a.length))
    for (let i = 0; i < longest; i++) p.argPieces.forEach((a, k) => (out += a[i] === undefined ? '' : piece(k, a[i]!)))
  } else p.argPieces.forEach((a, k) => (out += header(k) + a.map((x) => piece(k, x)).join('')))
  out += chunk({}, { tool: 'tool_calls', length: 'length', stop: 'stop' }[p.finish])
  out += `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`
  return `${out}data: [DONE]\n\n`
}

/** An Anthropic stream: thinking, text blocks, tool_use blocks, pings between. */
function anthropicStream(p: Plan): string {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  let out = ev('message_start', { message: { id: 'msg_random', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } })
  let index = 0
  const block = (start: object, deltas: object[]) => {
    out += ev('content_block_start', { index, content_block: start })
    if (r.chance(0.2)) out += ev('ping', {})
    for (const delta of deltas) out += ev('content_block_delta', { index, delta })
    out += ev('content_block_stop', { index: index++ })
  }
  if (p.thinking) block({ type: 'thinking', thinking: '', signature: '' }, [...p.thinking.map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: 'EqQBCgIYAhIM' }])
  for (const pieces of p.pieces) block({ type: 'text', text: '' }, pieces.map((text) => ({ type: 'text_delta', text })))
  p.calls.forEach((c, k) => block({ type: 'tool_use', id: `toolu_${p.ids[k]}`, name: c.name, input: {} }, ['', ...p.argPieces[k]!].map((partial_json) => ({ type: 'input_json_delta', partial_json }))))
  out += ev('message_delta', { delta: { stop_reason: { tool: 'tool_use', length: 'max_tokens', stop: 'end_turn' }[p.finish], stop_sequence: null }, usage: { output_tokens: 5 } })
  return out + ev('message_stop', {})
}

/** The stream's bytes sent in pieces of 1 to 300 bytes, cutting events and characters anywhere. */
function sent(sse: string): Response {
  const bytes = new TextEncoder().encode(sse)
  const cuts: Uint8Array[] = []
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + r.count(300)
    cuts.push(bytes.slice(i, i + n))
    i += n
  }
  return new Response(new ReadableStream({ pull: (c) => (cuts.length ? c.enqueue(cuts.shift()!) : c.close()) }), { headers: { 'content-type': 'text/event-stream' } })
}

async function run(seed: number, request: () => Promise<Response>, breaks: (body: string, said: Said) => string[]) {
  r = seeded(seed)
  const broken: string[] = []
  for (let n = 0; n < 120; n++) {
    plan = makePlan()
    const res = await request()
    const body = await res.text()
    expect(res.status).toBe(200)
    for (const b of breaks(body, plan)) broken.push(`${b}\n  said: ${JSON.stringify(plan)}\n  stream: ${body.slice(0, 3000)}`)
  }
  expect(broken.slice(0, 3)).toEqual([])
}

const post = (path: string, headers: Record<string, string>, body: object) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })

test("a GPT model's chat streams, to a messages client", async () => {
  const tools = TOOLS.map((name) => ({ name, input_schema: { type: 'object' } }))
  await run(3, () => post('/api/beta/v1/messages', { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, { model: 'gpt-4o', max_tokens: 100, stream: true, tools, messages: [{ role: 'user', content: 'go' }] }), messagesStreamBreaks)
})

test("a Claude model's streams, to a chat client", async () => {
  const tools = TOOLS.map((name) => ({ type: 'function', function: { name } }))
  await run(5, () => post('/api/alpha/v1/chat/completions', { authorization: `Bearer ${gw.key}` }, { model: 'claude-sonnet-4-5', stream: true, stream_options: { include_usage: true }, tools, messages: [{ role: 'user', content: 'go' }] }), chatStreamBreaks)
})

test("a Claude model's streams, to a Responses client", async () => {
  const tools = TOOLS.map((name) => ({ type: 'function', name }))
  await run(7, () => post('/api/alpha/v1/responses', { authorization: `Bearer ${gw.key}` }, { model: 'claude-sonnet-4-5', stream: true, store: false, tools, input: 'go' }), responsesStreamBreaks)
})

test("a chat-wire model's streams, to a Responses client", async () => {
  const tools = TOOLS.map((name) => ({ type: 'function', name }))
  await run(11, () => post('/api/alpha/v1/responses', { authorization: `Bearer ${gw.key}` }, { model: 'llama-3.1-8b', stream: true, store: false, tools, input: 'go' }), responsesStreamBreaks)
})
