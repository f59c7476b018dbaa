// The same upstream reply asked for whole and streamed, through every surface and model family:
// what the official SDKs make of the stream (finalChatCompletion, finalResponse, finalMessage)
// must be the whole reply, ids and times aside. The JSON and streamed encoders of each surface
// are separate code; a client that switches `stream` on must get the same answer. The fake
// upstream makes its reply from the case number in the user's text, and names its model as the
// real APIs do, by the snapshot the alias resolved to.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { NO_LIMITS } from '../batches/helpers.ts'
import { chatWireModel, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { seeded } from '../helpers/seeded.ts'
import { messagesStream, responsesStream } from '../helpers/upstream-streams.ts'

type Json = any
let up: FakeUpstream
let gw: Gateway

const WORDS = ['Hello', ' world', 'é😀', ' "q"', '\n', 'ok']
interface Plan { thinking?: string; texts: string[]; calls: { id: string; name: string; args: string }[]; stop: 'stop' | 'length' | 'tool' }

/** The reply of case `c`: the same whichever wire asks, whole or streamed. */
function plan(c: number, tools: string[], thinks: boolean): Plan {
  const r = seeded(c * 7919 + 1)
  const words = () => Array.from({ length: 1 + r.count(4) }, () => r.pick(WORDS)).join('')
  const calls = tools.length > 0 && r.chance(0.5) ? Array.from({ length: 1 + r.count(2) }, (_, k) => ({ id: `call${c}x${k}`, name: r.pick(tools), args: r.pick(['{}', '{"a":1}', '{"q":"é😀"}']) })) : []
  const texts = calls.length > 0 && r.chance(0.5) ? [] : Array.from({ length: 1 + r.count(2) }, words)
  return { thinking: thinks && r.chance(0.7) ? `Let me ${words()}` : undefined, texts, calls, stop: calls.length > 0 ? 'tool' : r.pick(['stop', 'stop', 'length'] as const) }
}

const sse = (s: string) => ({ sse: s })

function anthropicReply(p: Plan, model: string, stream: boolean) {
  const content: Json[] = []
  if (p.thinking) content.push({ type: 'thinking', thinking: p.thinking, signature: 'EqQBsig' })
  for (const text of p.texts) content.push({ type: 'text', text })
  for (const c of p.calls) content.push({ type: 'tool_use', id: c.id.replace('call', 'toolu_'), name: c.name, input: JSON.parse(c.args) })
  const m = { id: 'msg_up', type: 'message', role: 'assistant', model: `${model}-20250929`, content, stop_reason: { tool: 'tool_use', length: 'max_tokens', stop: 'end_turn' }[p.stop], stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2, cache_creation_input_tokens: 0 } }
  return stream ? sse(messagesStream(m)) : { json: m }
}

function chatReply(p: Plan, model: string, c: number, b: Json) {
  const message = { role: 'assistant', content: p.texts.join('') || null, refusal: null, ...(p.calls.length ? { tool_calls: p.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })) } : {}) }
  const head = { id: 'chatcmpl-up', created: 1, model: `${model}-2024-08-06` }
  const finish = { tool: 'tool_calls', length: 'length', stop: 'stop' }[p.stop]
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 2 } }
  if (!b.stream) return { json: { ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage } }
  const chunk = (delta: Json, finish_reason: string | null = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason, logprobs: null }] })}\n\n`
  let out = chunk({ role: 'assistant', content: message.content === null ? null : '' })
  for (const piece of message.content ?? '') out += chunk({ content: piece })
  // each call begun in order, then their arguments' pieces interleaved, as some compatible servers send parallel calls
  const pieces = p.calls.map((c, index) => {
    out += chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] })
    return Array.from({ length: Math.ceil(c.args.length / 3) }, (_, i) => ({ index, function: { arguments: c.args.slice(i * 3, i * 3 + 3) } }))
  })
  const r = seeded(c)
  // now and then the last call's arguments first
  if (pieces.length > 1 && r.chance(0.5)) out += chunk({ tool_calls: [pieces.at(-1)!.shift()] })
  for (let left = pieces.filter((q) => q.length > 0); left.length > 0; left = left.filter((q) => q.length > 0)) out += chunk({ tool_calls: [r.pick(left).shift()] })
  out += chunk({}, finish)
  if (b.stream_options?.include_usage) out += `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`
  return sse(`${out}data: [DONE]\n\n`)
}

function responsesReply(p: Plan, model: string, c: number, stream: boolean) {
  const output: Json[] = []
  if (p.thinking) output.push({ type: 'reasoning', id: `rs_${c}`, summary: [{ type: 'summary_text', text: p.thinking }] })
  if (p.texts.length) output.push({ type: 'message', id: `msg_${c}`, role: 'assistant', status: 'completed', content: p.texts.map((text) => ({ type: 'output_text', text, annotations: [], logprobs: [] })) })
  p.calls.forEach((k, i) => output.push({ type: 'function_call', id: `fc_${c}_${i}`, call_id: k.id, name: k.name, arguments: k.args, status: 'completed' }))
  const cut = p.stop === 'length'
  const r = { id: `resp_up${c}`, object: 'response', created_at: 1, status: cut ? 'incomplete' : 'completed', incomplete_details: cut ? { reason: 'max_output_tokens' } : null, model: `${model}-2024-08-06`, output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 2 }, output_tokens_details: { reasoning_tokens: 1 } }, error: null, tools: [], tool_choice: 'auto', parallel_tool_calls: true, text: { format: { type: 'text' } }, metadata: {}, temperature: 1, top_p: 1, instructions: null, store: true, reasoning: { effort: null, summary: null }, truncation: 'disabled', max_output_tokens: null, previous_response_id: null, user: null, background: false }
  return stream ? sse(responsesStream(r)) : { json: r }
}

const reasons = (model: string) => /^(o\d|gpt-5|llama)/.test(model)
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => {
    const b = req.json()
    const c = Number(/case (\d+)/.exec(req.body)?.[1] ?? 0)
    if (req.path.includes('/messages')) return anthropicReply(plan(c, (b.tools ?? []).map((t: Json) => t.name), b.thinking !== undefined && b.thinking.type !== 'disabled'), b.model, b.stream === true)
    if (req.path.includes('/chat/completions')) return chatReply(plan(c, (b.tools ?? []).map((t: Json) => t.function.name), reasons(b.model)), b.model, c, b)
    return responsesReply(plan(c, (b.tools ?? []).map((t: Json) => t.name), reasons(b.model)), b.model, c, b.stream === true)
  })
  gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up), SWITCHYARD_CROSS_FAMILY: 'translate' }, yaml: chatWireModel(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

/** Ids, times and what the SDKs add of their own (parsed forms) left out. */
const comparable = (v: unknown): Json => JSON.parse(JSON.stringify(v, (k, x) => (['id', 'created', 'created_at', 'completed_at', 'sequence_number', '_request_id', 'parsed', 'parsed_output', 'output_parsed', 'parsed_arguments'].includes(k) ? undefined : x)))
const FUNCTIONS = ['get_weather', 'add']
const MODELS = ['claude-sonnet-4-5', 'gpt-4o', 'gpt-5', 'llama-3.1-8b', 'mock-gpt', 'mock-claude']

test('the SDKs make the same reply of a stream as of the whole reply, on every surface and model', async () => {
  const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
  const r = seeded(5)
  const differ: string[] = []
  const answered: Record<string, number> = {}
  for (let c = 1; c <= 150; c++) {
    const surface = r.pick(['chat', 'responses', 'messages'] as const)
    const model = r.pick(MODELS)
    const tools = r.chance(0.6)
    const think = r.chance(0.4)
    let pair: [unknown, unknown]
    if (surface === 'chat') {
      const body: Json = { model, messages: [{ role: 'user', content: `case ${c}` }], ...(tools ? { tools: FUNCTIONS.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } })) } : {}), ...(think && model.startsWith('claude') ? { reasoning_effort: 'low' } : {}) }
      pair = [await openai.chat.completions.create(body), await openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } }).finalChatCompletion()]
    } else if (surface === 'responses') {
      const body: Json = { model, input: `case ${c}`, ...(tools ? { tools: FUNCTIONS.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: {} }, strict: false })) } : {}), ...(think && (model.startsWith('claude') || model === 'gpt-5') ? { reasoning: { effort: 'low', summary: 'auto' } } : {}) }
      pair = [await openai.responses.create(body), await openai.responses.stream(body).finalResponse()]
    } else {
      const body: Json = { model, max_tokens: 4000, messages: [{ role: 'user', content: `case ${c}` }], ...(tools ? { tools: FUNCTIONS.map((name) => ({ name, input_schema: { type: 'object', properties: {} } })) } : {}), ...(think ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {}) }
      pair = [await anthropic.messages.create(body), await anthropic.messages.stream(body).finalMessage()]
    }
    answered[surface] = (answered[surface] ?? 0) + 1
    const [whole, streamed] = pair.map(comparable)
    // the SDK's chat stream helper keeps the last piece of a field it does not know (Claude's thinking as reasoning_content)
    if (surface === 'chat') for (const x of [whole, streamed]) delete x.choices[0].message.reasoning_content
    if (!Bun.deepEquals(whole, streamed)) differ.push(`${surface} ${model} case ${c}\n  whole:    ${JSON.stringify(whole)}\n  streamed: ${JSON.stringify(streamed)}`)
  }
  expect(differ.slice(0, 2)).toEqual([])
  for (const surface of ['chat', 'responses', 'messages']) expect(answered[surface]).toBeGreaterThan(35)
})
