// What the OpenAI surfaces answer, checked against OpenAI's published schema of each object
// (test/helpers/openai-schema.ts): chat completions and their chunks, Responses and their
// events, whatever model made them (Claude's translated, a chat-wire model's translated, the
// mock's), and the objects a client reads back (a stored response, its input items, a
// conversation's items, files, batches, models). Typed clients decode by that schema: a listed
// item without its status, or an output text without its annotations, fails them where the
// JavaScript SDK reads on.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { NO_LIMITS } from '../batches/helpers.ts'
import { chatWireModel, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { chatStreamSchemaBreaks, responsesStreamSchemaBreaks, schemaBreaks } from '../helpers/openai-schema.ts'
import { sseEvents } from '../helpers/sse-events.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { messagesStream } from '../helpers/upstream-streams.ts'
import { seeded, type Seeded } from '../helpers/seeded.ts'

type Json = any
const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'openai')

let up: FakeUpstream
let gw: Gateway
let r: Seeded = seeded(1)
let n = 0
const uid = () => `${(n++).toString(36)}x${r.count(1e9).toString(36)}`

/** A Messages reply of Anthropic's at random: thinking, a web search with cited text, text, calls, any stop reason. */
function claudeReply(b: Json): Json {
  const content: Json[] = []
  if (b.thinking && b.thinking.type !== 'disabled' && r.chance(0.7)) content.push(r.chance(0.8) ? { type: 'thinking', thinking: 'Let me see.', signature: `EqQB${uid()}` } : { type: 'redacted_thinking', data: `EmwK${uid()}` })
  if ((b.tools ?? []).some((t: Json) => String(t.type).startsWith('web_search')) && r.chance(0.6)) {
    const id = `srvtoolu_${uid()}`
    content.push({ type: 'server_tool_use', id, name: 'web_search', input: { query: 'weather paris' } })
    content.push({ type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', url: 'https://example.com/a', title: 'A', encrypted_content: `Eq${uid()}`, page_age: null }] })
    content.push({ type: 'text', text: 'It is sunny.', citations: [{ type: 'web_search_result_location', url: 'https://example.com/a', title: 'A', encrypted_index: `Eo${uid()}`, cited_text: 'sunny' }] })
  }
  const fns: Json[] = (b.tools ?? []).filter((t: Json) => t.input_schema)
  const calls = fns.length && r.chance(0.5) ? 1 + r.count(2) : 0
  if (calls === 0 || r.chance(0.5)) content.push({ type: 'text', text: r.pick(['Sure.', 'Done.', '']) })
  for (let k = 0; k < calls; k++) content.push({ type: 'tool_use', id: `toolu_${uid()}`, name: r.pick(fns).name, input: r.pick([{}, { a: 1 }]) })
  const stop = calls ? 'tool_use' : r.pick(['end_turn', 'max_tokens', 'stop_sequence', 'refusal', 'pause_turn'])
  const usage = { input_tokens: 10, output_tokens: 5, ...(r.chance(0.5) ? { cache_creation_input_tokens: 3, cache_read_input_tokens: 4 } : {}) }
  return { id: `msg_${uid()}`, type: 'message', role: 'assistant', model: b.model, content, stop_reason: stop, stop_sequence: stop === 'stop_sequence' ? 'END' : null, usage }
}

/** A chat completion of an OpenAI-compatible server at random (a Responses client's model on the chat wire), whole or streamed. */
function chatReply(b: Json): { json: Json } | { sse: string } {
  const calls = b.tools?.length && r.chance(0.5) ? 1 + r.count(2) : 0
  const text = calls && r.chance(0.5) ? null : r.pick(['Sure.', 'Done.', ''])
  const toolCalls = Array.from({ length: calls }, () => ({ id: `call_${uid()}`, type: 'function', function: { name: b.tools[0].function.name, arguments: r.pick(['{}', '{"a":1}']) } }))
  const finish = calls ? 'tool_calls' : r.pick(['stop', 'length', 'content_filter'])
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
  const head = { id: `chatcmpl-${uid()}`, created: 1, model: b.model }
  if (!b.stream) return { json: { ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null, ...(calls ? { tool_calls: toolCalls } : {}) }, finish_reason: finish, logprobs: null }], usage } }
  const chunk = (delta: Json, finish_reason: string | null = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] })}\n\n`
  let out = chunk({ role: 'assistant', content: '' }) + (text ? chunk({ content: text }) : '')
  toolCalls.forEach((c, index) => {
    out += chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] })
    out += chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] })
  })
  out += chunk({}, finish)
  if (b.stream_options?.include_usage) out += `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`
  return { sse: `${out}data: [DONE]\n\n` }
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => {
    const b = req.json()
    if (req.path.includes('/messages')) {
      const m = claudeReply(b)
      return b.stream === true ? { sse: messagesStream(m) } : { json: m }
    }
    return chatReply(b)
  })
  gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up), SWITCHYARD_CROSS_FAMILY: 'translate' }, yaml: chatWireModel(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const call = (method: string, path: string, body?: Json) =>
  fetch(`${gw.url}/api/alpha/v1${path}`, { method, headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

async function json(method: string, path: string, body?: Json): Promise<Json> {
  const res = await call(method, path, body)
  const text = await res.text()
  expect({ path, status: res.status, text: res.status === 200 ? '' : text }).toEqual({ path, status: 200, text: '' })
  return JSON.parse(text)
}

test("the checker passes OpenAI's own recorded replies and names what a broken one lacks", async () => {
  const whole = await Bun.file(join(FIXTURES, 'chat', 'nonstream-tool-calls.json')).json()
  expect(schemaBreaks('CreateChatCompletionResponse', whole)).toEqual([])
  expect(chatStreamSchemaBreaks(await Bun.file(join(FIXTURES, 'chat', 'stream-parallel-tool-calls.sse')).text())).toEqual([])
  const { logprobs: _, ...choice } = whole.choices[0]
  expect(schemaBreaks('CreateChatCompletionResponse', { ...whole, choices: [{ ...choice, finish_reason: 'end_turn' }] })).toEqual([
    '$.choices[0]: no logprobs, which is required',
    expect.stringContaining('$.choices[0].finish_reason: "end_turn" is not one of'),
  ])
  const item = { type: 'function_call', id: 'fc_1', call_id: 'c', name: 'f', arguments: '{}' }
  expect(schemaBreaks('ResponseItemList', { object: 'list', data: [item], first_id: 'fc_1', last_id: 'fc_1', has_more: false })).toEqual(['$.data[0]: no status, which is required'])
})

const FUNCTIONS = ['get_weather', 'add'].map((name) => ({ name, description: 'd', parameters: { type: 'object', properties: {} } }))
const MODELS = ['claude-sonnet-4-5', 'claude-opus-4-5', 'llama-3.1-8b', 'mock-gpt', 'mock-claude']

function chatBody(model: string): Json {
  return {
    model,
    messages: [...(r.chance(0.3) ? [{ role: 'system', content: 'be brief' }] : []), { role: 'user', content: r.pick(['hi', [{ type: 'text', text: 'hello' }]]) }],
    ...(r.chance(0.5) ? { tools: FUNCTIONS.map((f) => ({ type: 'function', function: f })) } : {}),
    ...(r.chance(0.5) ? { stream: true, ...(r.chance(0.6) ? { stream_options: { include_usage: true } } : {}) } : {}),
    ...(r.chance(0.3) ? { max_completion_tokens: r.pick([50, 2000]) } : {}),
    ...(r.chance(0.2) ? { stop: ['END'] } : {}),
    ...(model.startsWith('claude') && r.chance(0.3) ? { reasoning_effort: r.pick(['low', 'high']) } : {}),
    ...(model.startsWith('claude') && r.chance(0.3) ? { web_search_options: {} } : {}),
  }
}

function responsesBody(model: string): Json {
  const tools = [...(r.chance(0.5) ? FUNCTIONS.map((f) => ({ type: 'function', ...f, ...(r.chance(0.5) ? { strict: false } : {}) })) : []), ...(model.startsWith('claude') && r.chance(0.3) ? [{ type: 'web_search' }] : [])]
  return {
    model,
    input: r.pick(['hi', [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }] }]]),
    ...(tools.length ? { tools } : {}),
    ...(r.chance(0.5) ? { stream: true } : {}),
    ...(r.chance(0.3) ? { max_output_tokens: r.pick([50, 2000]) } : {}),
    ...(model.includes('claude') && r.chance(0.3) ? { reasoning: { effort: r.pick(['low', 'high']), ...(r.chance(0.5) ? { summary: 'auto' } : {}) } } : {}),
    ...(r.chance(0.3) ? { instructions: 'be brief' } : {}),
    ...(r.chance(0.3) ? { store: false } : {}),
    ...(r.chance(0.2) ? { metadata: { k: 'v' } } : {}),
  }
}

test('every chat completion and Responses reply, whole or streamed, is what OpenAI publishes, whichever model made it', async () => {
  r = seeded(41)
  const broken: string[] = []
  const answered: Record<string, number> = {}
  for (let k = 0; k < 160; k++) {
    const chat = r.chance(0.5)
    const model = r.pick(MODELS)
    const body = chat ? chatBody(model) : responsesBody(model)
    const res = await call('POST', chat ? '/chat/completions' : '/responses', body)
    const text = await res.text()
    expect({ status: res.status, text: res.status === 200 ? '' : text, body }).toMatchObject({ status: 200 })
    const kind = `${chat ? 'chat' : 'responses'}${body.stream ? ' stream' : ''}`
    answered[kind] = (answered[kind] ?? 0) + 1
    const found = chat
      ? body.stream ? chatStreamSchemaBreaks(text) : schemaBreaks('CreateChatCompletionResponse', JSON.parse(text))
      : body.stream ? responsesStreamSchemaBreaks(text) : schemaBreaks('Response', JSON.parse(text))
    broken.push(...found.map((b) => `${kind} (${model}): ${b}\n  client: ${JSON.stringify(body)}`))
    if (chat || body.store === false) continue
    // what the client reads back: the stored response and its input items
    const id = body.stream ? JSON.parse(sseEvents(text)[0]!.data).response.id : JSON.parse(text).id
    broken.push(...schemaBreaks('Response', await json('GET', `/responses/${id}`), `GET ${model} response`))
    broken.push(...schemaBreaks('ResponseItemList', await json('GET', `/responses/${id}/input_items`), `${model} input items`))
  }
  expect(broken.slice(0, 3)).toEqual([])
  // each kind was answered often enough to have been checked
  for (const kind of ['chat', 'chat stream', 'responses', 'responses stream']) expect(answered[kind] ?? 0).toBeGreaterThan(20)
})

test("the items a client sent come back in their listed form: a call's status, an output text's annotations, a tool's strictness", async () => {
  const input = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: [{ type: 'output_text', text: 'before' }] },
    { type: 'function_call', call_id: 'c1', name: 'add', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    { role: 'assistant', content: 'plain' },
  ]
  const tools = [{ type: 'function', name: 'add', parameters: { type: 'object', properties: {} } }]
  for (const model of ['claude-sonnet-4-5', 'mock-gpt']) {
    const reply = await json('POST', '/responses', { model, input, tools })
    expect(schemaBreaks('Response', reply)).toEqual([])
    // sent without strict, and not made strict: echoed so
    expect(reply.tools).toEqual([{ ...tools[0], strict: false }])
    const listed = await json('GET', `/responses/${reply.id}/input_items?order=asc`)
    expect(schemaBreaks('ResponseItemList', listed)).toEqual([])
    expect(listed.data.map((it: Json) => [it.type, it.status, it.id.split('_')[0]])).toEqual([
      ['message', 'completed', 'msg'], ['message', 'completed', 'msg'], ['function_call', 'completed', 'fc'], ['function_call_output', 'completed', 'fco'], ['message', 'completed', 'msg'],
    ])
    expect(listed.data[1].content).toEqual([{ type: 'output_text', text: 'before', annotations: [], logprobs: [] }])
    // the ids page on: after the call, its output
    const page = await json('GET', `/responses/${reply.id}/input_items?order=asc&after=${listed.data[2].id}&limit=1`)
    expect(page.data.map((it: Json) => it.id)).toEqual([listed.data[3].id])
  }
  const conversation = await json('POST', '/conversations', { items: input })
  expect(schemaBreaks('ConversationResource', conversation)).toEqual([])
  const added = await json('POST', `/conversations/${conversation.id}/items`, { items: input.slice(1) })
  expect(schemaBreaks('ConversationItemList', added)).toEqual([])
  const items = await json('GET', `/conversations/${conversation.id}/items`)
  expect(schemaBreaks('ConversationItemList', items)).toEqual([])
  expect(items.data).toHaveLength(9)
  for (const it of items.data) expect(schemaBreaks('ConversationItem', await json('GET', `/conversations/${conversation.id}/items/${it.id}`))).toEqual([])
  // and a turn in the conversation goes on from those items
  const turn = await json('POST', '/responses', { model: 'claude-sonnet-4-5', conversation: conversation.id, input: 'next' })
  expect(schemaBreaks('Response', turn)).toEqual([])
})

test('files, batches and models read back as OpenAI publishes them', async () => {
  const form = new FormData()
  form.append('purpose', 'batch')
  form.append('file', new File([`${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] } })}\n`], 'in.jsonl'))
  const res = await fetch(`${gw.url}/api/alpha/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: form })
  const file = await res.json()
  expect(schemaBreaks('OpenAIFile', file)).toEqual([])
  expect(schemaBreaks('ListFilesResponse', await json('GET', '/files'))).toEqual([])
  const batch = await json('POST', '/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
  expect(schemaBreaks('Batch', batch)).toEqual([])
  expect(schemaBreaks('ListBatchesResponse', await json('GET', '/batches'))).toEqual([])
  expect(schemaBreaks('ListModelsResponse', await json('GET', '/models'))).toEqual([])
  expect(schemaBreaks('Model', await json('GET', '/models/mock-gpt'))).toEqual([])
  expect(schemaBreaks('DeleteFileResponse', await json('DELETE', `/files/${file.id}`))).toEqual([])
})
