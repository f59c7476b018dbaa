// Conversations a client of one family may send, made at random (whitespace where models and
// clients leave it, tool loops, thinking, prefills, names and ids of the other family's forms),
// translated for the other family: every body the gateway sends must be one the real upstream
// takes (test/helpers/upstream-rules.ts), and every answer a 200 or a 400 saying what the
// target cannot take. Bodies the gateway sent broke several of those rules before it made them
// fit (a whitespace-only text block, a prefill ending in a space, `parameters: {}`, a history
// call named `search.docs`, an assistant turn of thinking alone).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { chatWireModel, fixture, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { seeded, type Seeded } from '../helpers/seeded.ts'
import { anthropicBreaks, openaiChatBreaks } from '../helpers/upstream-rules.ts'

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => {
    const stream = req.json().stream === true
    if (req.path.includes('/messages')) return stream ? { sse: fixture('anthropic/messages/stream-text.sse') } : { json: fixture('anthropic/messages/nonstream-text.json') }
    return stream ? { sse: fixture('openai/chat/stream-text-include-usage.sse') } : { json: fixture('openai/chat/nonstream-text.json') }
  })
  gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up) }, yaml: chatWireModel(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})


const TEXTS = ['', ' ', '\n', '\n\n', ' \t ', 'hello ', 'ok', 'A question?\n', ' lead'] as const
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const CHAT_TOOLS = ['get_weather', 'add', 'search_docs']

/** A chat conversation an OpenAI client may send, to a Claude model. */
function chatBody(r: Seeded, n: number): object {
  const text = () => r.pick(TEXTS)
  // a part marked for Claude's prompt cache, as an OpenAI client of a Claude model may mark one
  const part = () => ({ type: 'text', text: text(), ...(r.chance(0.2) ? { cache_control: { type: 'ephemeral' } } : {}) })
  const messages: object[] = []
  if (r.chance(0.5)) messages.push({ role: r.pick(['system', 'developer']), content: r.chance(0.3) ? [part()] : text() })
  const turns = 1 + r.count(4)
  for (let t = 0; t < turns; t++) {
    const parts = [part(), ...(r.chance(0.3) ? [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] : []), ...(r.chance(0.5) ? [part()] : [])]
    messages.push({ role: 'user', content: r.chance(0.4) ? parts : text() })
    if (t === turns - 1 && r.chance(0.6)) break
    const calls = Array.from({ length: r.chance(0.5) ? 1 + r.count(3) : 0 }, (_, k) => ({ id: `${r.pick(['call_', 'toolu_', 'fc.'])}${n}_${t}_${k}`, type: 'function', function: { name: r.pick(CHAT_TOOLS), arguments: r.pick(['{}', '', ' {"a":1} ']) } }))
    const content = r.pick([null, '', text(), [{ type: 'text', text: text() }], [{ type: 'text', text: text() }, { type: 'text', text: text() }]])
    messages.push({ role: 'assistant', content: content === null && calls.length === 0 ? 'fine' : content, ...(calls.length ? { tool_calls: calls } : {}) })
    for (const c of r.chance(0.2) ? [...calls].reverse() : calls) messages.push({ role: 'tool', tool_call_id: c.id, content: r.pick(['r', '', ' ', [{ type: 'text', text: 'a' }, { type: 'text', text: ' ' }]]) })
  }
  const tools = r.chance(0.7) ? CHAT_TOOLS.map((name) => ({ type: 'function', function: { name, ...r.pick([{}, { parameters: {} }, { parameters: { type: 'object', properties: {} } }]) } })) : undefined
  return {
    model: 'claude-sonnet-4-5',
    messages,
    stream: r.chance(0.3),
    ...(tools ? { tools, ...(r.chance(0.3) ? { tool_choice: r.pick(['auto', 'required', 'none']) } : {}) } : {}),
    ...(r.chance(0.3) ? { reasoning_effort: r.pick(['low', 'medium', 'high']) } : {}),
    ...(r.chance(0.3) ? { max_tokens: r.pick([100, 1024, 5000]) } : {}),
    ...(r.chance(0.2) ? { temperature: r.pick([0, 0.5, 1]) } : {}),
  }
}

/** A Responses input a client that keeps its conversation may send, to a Claude model. */
function responsesBody(r: Seeded, n: number, model = 'claude-sonnet-4-5'): object {
  const text = () => r.pick(TEXTS)
  const input: object[] = []
  const turns = 1 + r.count(4)
  for (let t = 0; t < turns; t++) {
    input.push({ role: r.pick(['user', 'user', 'developer']), content: r.chance(0.5) ? text() : [{ type: 'input_text', text: text() }] })
    if (t === turns - 1 && r.chance(0.6)) break
    // a reasoning item back by id alone: for an OpenAI-family model, as OpenAI does, only one a store holds
    if (model.startsWith('claude') && r.chance(0.3)) input.push({ type: 'reasoning', id: `rs_${n}_${t}`, summary: r.chance(0.5) ? [] : [{ type: 'summary_text', text: text() }] })
    if (r.chance(0.6)) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: text(), annotations: [] }] })
    // a function's call or a custom tool's (Codex's apply_patch), its input free text
    const calls = Array.from({ length: r.chance(0.5) ? 1 + r.count(3) : 0 }, (_, k) =>
      r.chance(0.8) ? { type: 'function_call', call_id: `call_${n}_${t}_${k}`, name: r.pick(CHAT_TOOLS), arguments: r.pick(['{}', '', '{"q":"x"}']) } : { type: 'custom_tool_call', call_id: `call_${n}_${t}_${k}`, name: 'apply_patch', input: text() },
    )
    const outputs = calls.map((c) => ({ type: `${c.type}_output`, call_id: c.call_id, output: r.pick(['r', '', ' ']) }))
    if (r.chance(0.3)) calls.forEach((c, k) => input.push(c, outputs[k]!))
    else input.push(...calls, ...outputs)
  }
  return {
    model,
    input,
    store: false,
    stream: r.chance(0.3),
    ...(r.chance(0.4) ? { instructions: text() } : {}),
    ...(r.chance(0.7) ? { tools: [...CHAT_TOOLS.map((name) => ({ type: 'function', name, parameters: r.pick([{ type: 'object', properties: {} }, {}]) })), { type: 'custom', name: 'apply_patch' }] } : {}),
    ...(model.startsWith('claude') && r.chance(0.3) ? { reasoning: { effort: r.pick(['low', 'medium', 'high']) } } : {}),
  }
}

/** A messages conversation an Anthropic client may send, to a GPT model. */
function messagesBody(r: Seeded, n: number): object {
  const text = () => ({ type: 'text', text: r.pick(['hi', 'ok then', 'A question?\n', 'x ']), ...(r.chance(0.1) ? { cache_control: { type: 'ephemeral' } } : {}) })
  const tools = [`mcp__github-enterprise-server__${'list_pull_request_review_comments_'.repeat(2)}all`, 'get_weather', 'add']
  const messages: object[] = []
  let pending: string[] = []
  const turns = 1 + r.count(4)
  for (let t = 0; t < turns; t++) {
    const user: object[] = pending.map((id) => ({ type: 'tool_result', tool_use_id: id, ...(r.chance(0.3) ? { is_error: true } : {}), content: r.pick(['r', [text()]]) }))
    if (!user.length || r.chance(0.5)) user.push(text(), ...(r.chance(0.3) ? [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] : []))
    messages.push({ role: 'user', content: user })
    pending = []
    if (t === turns - 1 && r.chance(0.7)) break
    const a: object[] = []
    if (r.chance(0.3)) a.push({ type: 'thinking', thinking: 'hmm', signature: `sig${n}` })
    if (r.chance(0.5)) a.push(text())
    for (let k = r.chance(0.5) ? 1 + r.count(3) : 0; k > 0; k--) {
      const id = `${r.pick(['toolu_', 'call_'])}${n}_${t}_${k}${r.pick(['', 'x'.repeat(50)])}`
      pending.push(id)
      // a call in the history may be named as no tool is now (another agent's, a server's): `search.docs`
      a.push({ type: 'tool_use', id, name: r.pick([...tools, 'search.docs']), input: r.pick([{}, { a: 1 }]) })
    }
    messages.push({ role: 'assistant', content: a.length ? a : [text()] })
  }
  if (pending.length) messages.push({ role: 'user', content: pending.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'r' })) })
  return {
    model: r.pick(['gpt-4o', 'gpt-4.1']),
    max_tokens: r.pick([100, 4096]),
    messages,
    stream: r.chance(0.3),
    ...(r.chance(0.5) ? { system: r.chance(0.5) ? 'be brief' : [text()] } : {}),
    ...(r.chance(0.7)
      ? {
          tools: tools.map((name) => ({ name, input_schema: { type: 'object', properties: {} } })),
          ...(r.chance(0.4) ? { tool_choice: r.pick([{ type: 'auto' }, { type: 'any' }, { type: 'none' }, { type: 'tool', name: tools[0] }, { type: 'auto', disable_parallel_tool_use: true }]) } : {}),
        }
      : {}),
    ...(r.chance(0.2) ? { metadata: { user_id: r.pick(['u1', JSON.stringify({ device_id: 'd'.repeat(64), session_id: 's' })]) } } : {}),
    ...(r.chance(0.2) ? { temperature: r.pick([0, 0.7, 1]) } : {}),
  }
}

/** What the gateway may refuse itself, before any call: a turn the target cannot take at all. */
const REFUSALS = [/^messages: the last user turn holds only empty text/, /^messages: nothing to send as a user or assistant turn/]

async function run(path: string, headers: Record<string, string>, make: (r: Seeded, n: number) => object, check: (body: unknown) => string[], seed: number) {
  const r = seeded(seed)
  const broken: string[] = []
  let taken = 0
  for (let n = 0; n < 150; n++) {
    const body = make(r, n)
    const from = up.requests.length
    const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await res.text()
    if (res.status === 200) taken++
    else expect({ status: res.status, error: JSON.parse(text).error, body }).toMatchObject({ status: 400, error: expect.stringMatching(new RegExp(REFUSALS.map((x) => x.source).join('|'))) })
    for (const sent of up.requests.slice(from)) for (const b of check(sent.json())) broken.push(`${b}\n  client: ${JSON.stringify(body)}\n  sent: ${JSON.stringify(sent.json())}`)
  }
  expect(broken.slice(0, 3)).toEqual([])
  // most are answered: a checker that saw nothing would pass anything
  expect(taken).toBeGreaterThan(100)
}

test('chat to a Claude model: every translated body is one Anthropic takes', async () => {
  await run('/api/alpha/v1/chat/completions', { authorization: `Bearer ${gw.key}` }, chatBody, anthropicBreaks, 7)
})

test('responses to a Claude model: every translated body is one Anthropic takes', async () => {
  await run('/api/alpha/v1/responses', { authorization: `Bearer ${gw.key}` }, responsesBody, anthropicBreaks, 11)
})

test('responses to a model on the chat wire: every translated body is one OpenAI takes', async () => {
  await run('/api/alpha/v1/responses', { authorization: `Bearer ${gw.key}` }, (r, n) => responsesBody(r, n, 'llama-3.1-8b'), openaiChatBreaks, 17)
})

test('messages to a GPT model: every translated body is one OpenAI takes', async () => {
  await run('/api/beta/v1/messages', { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, messagesBody, openaiChatBreaks, 13)
})
