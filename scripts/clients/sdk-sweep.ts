// Every method the pinned official SDKs (`openai` 7, `@anthropic-ai/sdk` 1, from the project's
// node_modules) offer for a resource the gateway serves, called as a user calls it, on the
// built-in mock with a GPT and a Claude model (`mock-gpt`, `mock-claude`): chat completions,
// responses (input items, input token counting, retrieve, cancel, delete, compact),
// conversations and their items, files, batches, models; messages (count_tokens, batches,
// the beta namespace), Anthropic files and models; the gateway's own generation records and
// usage. Helpers too: `.stream()`, `.parse()`, `runTools`, `toFile`, auto-pagination with
// `for await`, `withResponse()` (x-request-id) and `.asResponse()`.
//
// Every reply and stream event (and the items, blocks and lists inside them) is checked to carry
// each field the SDKs' types declare without `?`, read from their .d.ts: a typed client reads
// those as present. Not checked so: the responses reply's `required_action` (the
// specification's own extra) and the beta usage's `fallback_credit` (Anthropic leaves it out
// without a fallback credit token).
//
// Methods the gateway does not serve are checked to be a clear JSON 4xx (never a 500 or an
// HTML page): stored chat completions (retrieve, update, list, delete, messages.list), model
// deletion, `responses.compact` (context_management on a request instead), a retrieve's
// `stream: true` and `responses.cancel` (every response is answered in the foreground, so there
// is nothing queued to cancel or replay), and the resources outside the specification
// (embeddings, images, audio, vector stores, uploads, containers, fine-tuning, Anthropic's
// skills, agents, sessions).
//
// By the specification, not the SDKs' defaults: a Claude model on chat takes `max_tokens`
// (`max_completion_tokens` and `response_format` are §8's 400 for it); a responses reply that
// called tools says `status: "requires_action"` (§4.5), in which the openai SDK's `.parse()`
// leaves `parsed_arguments` null (it parses only a `completed` reply's calls; the config's
// `responses.tool_calls_status: completed` gives OpenAI's); errors are `{ error: <message> }`.
//
// Not run in CI; run it by hand: `bun scripts/clients/sdk-sweep.ts`. The gateway runs as
// `bun src/main.ts serve` on a free port, with a temp data dir, a known key and no upstream.
// PASS/FAIL a line; the exit status is 1 when any failed.
import Anthropic from '@anthropic-ai/sdk'
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema'
import OpenAI, { toFile } from 'openai'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { checks, startGateway } from './harness.ts'

const key = `sk-sy-sdk-sweep-${crypto.randomUUID().replaceAll('-', '')}`
const gw = await startGateway(key, 'sdk-sweep')
const { check, done } = checks(gw)
const oa = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
const an = new Anthropic({ apiKey: key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
const GPT = 'mock-gpt'
const CLAUDE = 'mock-claude'
const MODELS = [GPT, CLAUDE]

function ok(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what)
}

/** The call must fail with a 4xx whose body is JSON with an error message naming `word`. */
async function refused(f: () => Promise<unknown>, word: RegExp): Promise<string> {
  try {
    await f()
  } catch (e) {
    const err = e as { status?: number; error?: unknown; headers?: Headers; message?: string }
    ok(typeof err.status === 'number', `no HTTP status: ${err.message}`)
    ok(err.status >= 400 && err.status < 500, `status ${err.status}: ${err.message}`)
    ok(/json/.test(err.headers?.get('content-type') ?? ''), `not JSON: ${err.headers?.get('content-type')}`)
    const text = JSON.stringify(err.error ?? {})
    ok(word.test(text), `error does not name ${word}: ${text.slice(0, 300)}`)
    return `${err.status} ${text.slice(0, 100)}`
  }
  throw new Error('it succeeded')
}

/** The fields an SDK interface declares without `?` (its .d.ts read as text): never absent from a reply. */
function required(pkg: string, file: string, iface: string): string[] {
  const text = readFileSync(join(import.meta.dir, '..', '..', 'node_modules', pkg, 'resources', file), 'utf8')
  const start = text.search(new RegExp(`^export interface ${iface} (extends [^{]+)?\\{`, 'm'))
  ok(start >= 0, `no interface ${iface} in ${pkg}/${file}`)
  return [...text.slice(start, text.indexOf('\n}', start)).matchAll(/^    (\w+): /gm)].map((m) => m[1]!)
}

/** Every required field of `iface` is in `obj` (null where the type allows it is fine). */
function shaped(obj: unknown, pkg: string, file: string, iface: string): string {
  const missing = required(pkg, file, iface).filter((k) => (obj as Record<string, unknown>)[k] === undefined)
  ok(missing.length === 0, `${iface} lacks ${missing.join(', ')}`)
  return `${iface} whole`
}
/** BetaUsage but its fallback_credit, which Anthropic sends only for a request with a fallback credit token. */
function shapedBut(obj: unknown, iface: 'BetaUsage'): string {
  const missing = required(A, 'beta/messages/messages.d.ts', iface).filter((k) => k !== 'fallback_credit' && (obj as Record<string, unknown>)[k] === undefined)
  ok(missing.length === 0, `${iface} lacks ${missing.join(', ')}`)
  return `${iface} whole`
}
const A = '@anthropic-ai/sdk'
const O = 'openai'

/** Interfaces of a .d.ts by the literal `type` they declare, with their required fields. */
const typedCache = new Map<string, Map<string, string[][]>>()
function typed(pkg: string, file: string): Map<string, string[][]> {
  const k = `${pkg}/${file}`
  let m = typedCache.get(k)
  if (m) return m
  m = new Map()
  const text = readFileSync(join(import.meta.dir, '..', '..', 'node_modules', pkg, 'resources', file), 'utf8')
  for (const b of text.matchAll(/^export interface (\w+) \{\n([\s\S]*?)\n\}/gm)) {
    const lit = /^    type: '([^']+)';/m.exec(b[2]!)?.[1]
    if (!lit) continue
    const fields = [...b[2]!.matchAll(/^    (\w+): /gm)].map((x) => x[1]!)
    m.set(lit, [...(m.get(lit) ?? []), fields])
  }
  typedCache.set(k, m)
  return m
}

/**
 * `obj` and every object under it with a `type` the .d.ts declares an interface for: one of
 * those interfaces has all its required fields there. Returns what was lacking, by path.
 */
function lacking(obj: unknown, pkg: string, file: string, path = '$'): string[] {
  if (Array.isArray(obj)) return obj.flatMap((v, i) => lacking(v, pkg, file, `${path}[${i}]`))
  if (!obj || typeof obj !== 'object') return []
  const o = obj as Record<string, unknown>
  const out: string[] = []
  const shapes = typeof o.type === 'string' ? typed(pkg, file).get(o.type) : undefined
  if (shapes) {
    const misses = shapes.map((f) => f.filter((k) => o[k] === undefined))
    const best = misses.reduce((a, b) => (b.length < a.length ? b : a))
    if (best.length) out.push(`${path}(${o.type}) lacks ${best.join(',')}`)
  }
  // required_action is the specification's own extra ({id, type: "function", function}), no SDK type
  for (const [k, v] of Object.entries(o)) if (k !== 'required_action') out.push(...lacking(v, pkg, file, `${path}.${k}`))
  return out
}

const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }]
const schema = { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } }, required: ['name', 'n'], additionalProperties: false }

// ---------------------------------------------------------------- chat completions
for (const model of MODELS) {
  await check(`chat.completions.create ${model} withResponse`, async () => {
    // a Claude model takes `max_tokens` on chat: `max_completion_tokens` is the §8 400 for it
    const limit = model === GPT ? { max_completion_tokens: 50 } : { max_tokens: 50 }
    const { data, response, request_id } = await oa.chat.completions.create({ model, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'mock: text hi' }], ...limit, temperature: 0.5, metadata: { a: 'b' } }).withResponse()
    ok(data.choices[0]?.message.content === 'hi', `content ${data.choices[0]?.message.content}`)
    ok(data.object === 'chat.completion' && data.usage?.total_tokens, 'shape')
    ok(request_id && response.headers.get('x-request-id') === request_id, `x-request-id ${request_id}`)
    return `${data.id} request_id=${request_id}`
  })
  await check(`chat.completions.create ${model} stream include_usage`, async () => {
    const stream = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'mock: text one two three' }], stream: true, stream_options: { include_usage: true } })
    let text = ''
    let usage = 0
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? ''
      if (c.usage) usage = c.usage.total_tokens
    }
    ok(text === 'one two three' && usage > 0, `${text} ${usage}`)
    return `${text} usage=${usage}`
  })
  await check(`chat.completions.stream helper ${model}`, async () => {
    const s = oa.chat.completions.stream({ model, messages: [{ role: 'user', content: 'mock: text streamed' }] })
    let deltas = ''
    s.on('content', (d) => (deltas += d))
    const final = await s.finalChatCompletion()
    ok(final.choices[0]?.message.content === 'streamed' && deltas === 'streamed', JSON.stringify(final.choices[0]))
    return final.id
  })
  await check(`chat.completions.create ${model} tool call`, async () => {
    const r = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Paris"}' }], tools, tool_choice: 'auto' })
    const call = r.choices[0]?.message.tool_calls?.[0]
    ok(call?.type === 'function' && call.function.name === 'get_weather' && r.choices[0]?.finish_reason === 'tool_calls', JSON.stringify(r.choices[0]))
    return call.id
  })
  await check(`chat.completions.runTools ${model}`, async () => {
    const runner = oa.chat.completions.runTools({
      model,
      messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Paris"}' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, function: (a: { city: string }) => `sunny in ${a.city}`, parse: (s: string) => JSON.parse(s) as { city: string } } }],
    })
    const text = await runner.finalContent()
    ok(text === 'tool result: sunny in Paris', `${text}`)
    return text
  })
}
await check('chat.completions.parse mock-gpt (json_schema)', async () => {
  const r = await oa.chat.completions.parse({ model: GPT, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } })
  const parsed = r.choices[0]?.message.parsed as { name?: string } | null
  ok(parsed?.name === 'example', JSON.stringify(r.choices[0]?.message))
  return JSON.stringify(parsed)
})
await check('chat.completions.parse mock-claude is the §8 400 naming response_format', () =>
  refused(() => oa.chat.completions.parse({ model: CLAUDE, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } }), /response_format/))
await check('chat.completions.create .asResponse()', async () => {
  const res = await oa.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'raw' }] }).asResponse()
  ok(res.status === 200 && (await res.json()).object === 'chat.completion', `${res.status}`)
  return `${res.status} ${res.headers.get('content-type')}`
})
// Stored chat completions are not served (the spec's chat surface is POST only).
await check('chat.completions.retrieve → clear JSON error', () => refused(() => oa.chat.completions.retrieve('chatcmpl-x'), /./))
await check('chat.completions.update → clear JSON error', () => refused(() => oa.chat.completions.update('chatcmpl-x', { metadata: { a: 'b' } }), /./))
await check('chat.completions.list → clear JSON error', () => refused(() => oa.chat.completions.list(), /./))
await check('chat.completions.delete → clear JSON error', () => refused(() => oa.chat.completions.delete('chatcmpl-x'), /./))
await check('chat.completions.messages.list → clear JSON error', () => refused(() => oa.chat.completions.messages.list('chatcmpl-x'), /./))

// ---------------------------------------------------------------- responses
for (const model of MODELS) {
  let id = ''
  await check(`responses.create ${model} withResponse`, async () => {
    const { data, request_id } = await oa.responses.create({ model, input: 'mock: text hello', instructions: 'be brief', max_output_tokens: 50, metadata: { k: 'v' }, store: true }).withResponse()
    ok(data.output_text === 'hello' && data.object === 'response' && data.status === 'completed', `${data.output_text} ${data.status}`)
    ok(request_id, 'no x-request-id')
    id = data.id
    return `${id} request_id=${request_id}`
  })
  await check(`responses.retrieve ${model}`, async () => {
    const r = await oa.responses.retrieve(id)
    ok(r.id === id && r.output_text === 'hello', `${r.id} ${r.output_text}`)
    return r.status ?? ''
  })
  await check(`responses.retrieve ${model} include, include_obfuscation, starting_after`, async () => {
    const r = await oa.responses.retrieve(id, { include: ['message.output_text.logprobs'], include_obfuscation: false, starting_after: 0 })
    ok(r.id === id, r.id)
    return r.status ?? ''
  })
  // every response is answered in the foreground, so there is no event stream to replay
  await check(`responses.retrieve ${model} stream: true → clear JSON error naming stream`, () => refused(() => oa.responses.retrieve(id, { stream: true }), /stream/))
  await check(`responses.inputItems.list ${model} for await`, async () => {
    const items = []
    for await (const it of oa.responses.inputItems.list(id, { limit: 1, order: 'asc' })) items.push(it)
    ok(items.length === 1 && items[0]?.type === 'message', JSON.stringify(items).slice(0, 200))
    return `${items.length} item(s)`
  })
  await check(`responses.inputTokens.count ${model}`, async () => {
    const r = await oa.responses.inputTokens.count({ model, input: 'count these tokens', instructions: 'x' })
    ok(r.object === 'response.input_tokens' && r.input_tokens > 0, JSON.stringify(r))
    return JSON.stringify(r)
  })
  await check(`responses.create ${model} stream`, async () => {
    const s = await oa.responses.create({ model, input: 'mock: text a b', stream: true })
    let text = ''
    let completed = false
    for await (const e of s) {
      if (e.type === 'response.output_text.delta') text += e.delta
      if (e.type === 'response.completed') completed = true
    }
    ok(text === 'a b' && completed, `${text} ${completed}`)
    return text
  })
  await check(`responses.stream helper ${model}`, async () => {
    const s = oa.responses.stream({ model, input: 'mock: text via helper' })
    const final = await s.finalResponse()
    ok(final.output_text === 'via helper', final.output_text)
    return final.id
  })
  await check(`responses.create ${model} function call + previous_response_id`, async () => {
    const r = await oa.responses.create({ model, input: 'mock: tool get_weather {"city":"Oslo"}', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
    const call = r.output.find((o) => o.type === 'function_call')
    ok(call && call.type === 'function_call', JSON.stringify(r.output))
    const r2 = await oa.responses.create({ model, previous_response_id: r.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rainy' }], tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
    ok(r2.output_text === 'tool result: rainy', r2.output_text)
    return r2.output_text
  })
  await check(`responses.cancel ${model} (background)`, async () => {
    const r = await oa.responses.create({ model, input: 'mock: text bg', background: true })
    try {
      const c = await oa.responses.cancel(r.id)
      return `${r.status} → ${c.status}`
    } catch (e) {
      // OpenAI: cancelling a background response that already finished is a 400
      const err = e as { status?: number; error?: unknown }
      ok(err.status === 400 || err.status === 409, `status ${err.status}`)
      return `${r.status}, cancel: ${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
    }
  })
  await check(`responses.cancel ${model} (not background) → clear error`, () => refused(() => oa.responses.cancel(id), /./))
  // standalone compaction is not offered (context_management on a request is)
  await check(`responses.compact ${model} → clear JSON error naming compact`, () =>
    refused(() => oa.responses.compact({ model, input: [{ role: 'user', content: 'compact me' }, { role: 'assistant', content: 'ok' }] }), /compact/))
  await check(`responses.delete ${model}`, async () => {
    const r = await oa.responses.delete(id)
    ok(r === undefined || r === null || typeof r === 'object', 'shape')
    await refused(() => oa.responses.retrieve(id), /./)
    return 'deleted, then 404'
  })
}
await check('responses.parse mock-gpt (text.format json_schema)', async () => {
  const r = await oa.responses.parse({ model: GPT, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } })
  ok((r.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(r.output_parsed))
  return JSON.stringify(r.output_parsed)
})
await check('responses.parse mock-claude (text.format json_schema)', async () => {
  const r = await oa.responses.parse({ model: CLAUDE, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } })
  ok((r.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(r.output_parsed))
  return JSON.stringify(r.output_parsed)
})

// ---------------------------------------------------------------- conversations
for (const model of MODELS) {
  let conv = ''
  let itemId = ''
  await check(`conversations.create ${model}`, async () => {
    const c = await oa.conversations.create({ metadata: { topic: 'sweep' }, items: [{ type: 'message', role: 'user', content: 'first' }] })
    ok(c.object === 'conversation' && c.id.startsWith('conv_'), JSON.stringify(c))
    conv = c.id
    return conv
  })
  await check(`conversations.retrieve/update ${model}`, async () => {
    const r = await oa.conversations.retrieve(conv)
    const u = await oa.conversations.update(conv, { metadata: { topic: 'changed' } })
    ok(r.id === conv && (u.metadata as Record<string, string>)?.topic === 'changed', JSON.stringify(u))
    return JSON.stringify(u.metadata)
  })
  await check(`conversations.items.create/list/retrieve ${model}`, async () => {
    const added = await oa.conversations.items.create(conv, { items: [{ type: 'message', role: 'user', content: 'second' }], include: [] })
    ok(added.object === 'list' && added.data.length === 1, JSON.stringify(added))
    const all = []
    for await (const it of oa.conversations.items.list(conv, { limit: 1, order: 'asc' })) all.push(it)
    ok(all.length === 2, `${all.length} items`)
    itemId = all[1]!.id!
    const one = await oa.conversations.items.retrieve(itemId, { conversation_id: conv })
    ok(one.id === itemId, JSON.stringify(one))
    return `${all.length} items`
  })
  await check(`responses.create ${model} in a conversation`, async () => {
    const r = await oa.responses.create({ model, conversation: conv, input: 'mock: text in conv' })
    ok(r.output_text === 'in conv', r.output_text)
    const items = await oa.conversations.items.list(conv)
    ok(items.data.length === 4, `${items.data.length} items`)
    return `${items.data.length} items`
  })
  await check(`conversations.items.delete / delete ${model}`, async () => {
    const c = await oa.conversations.items.delete(itemId, { conversation_id: conv })
    ok(c.id === conv && c.object === 'conversation', JSON.stringify(c))
    const d = await oa.conversations.delete(conv)
    ok(d.deleted === true && d.id === conv, JSON.stringify(d))
    return JSON.stringify(d)
  })
}

// ---------------------------------------------------------------- files, batches, models (OpenAI)
let fileId = ''
await check('files.create toFile', async () => {
  const f = await oa.files.create({ file: await toFile(Buffer.from('hello file\n'), 'hello.txt', { type: 'text/plain' }), purpose: 'user_data' })
  ok(f.object === 'file' && f.filename === 'hello.txt' && f.bytes === 11, JSON.stringify(f))
  fileId = f.id
  return `${f.id} purpose=${f.purpose} status=${f.status}`
})
await check('files.create with expires_after', async () => {
  const f = await oa.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants', expires_after: { anchor: 'created_at', seconds: 3600 } })
  ok(f.object === 'file', JSON.stringify(f))
  return `${f.id} expires_at=${f.expires_at}`
})
await check('files.retrieve / waitForProcessing', async () => {
  const f = await oa.files.retrieve(fileId)
  const w = await oa.files.waitForProcessing(fileId, { pollInterval: 50, maxWait: 5000 })
  ok(f.id === fileId && w.id === fileId, 'ids')
  return `${f.status} / ${w.status}`
})
await check('files.list for await (limit, order, purpose)', async () => {
  const ids: string[] = []
  for await (const f of oa.files.list({ limit: 1, order: 'desc', purpose: 'user_data' })) ids.push(f.id)
  ok(ids.includes(fileId), ids.join(','))
  const all: string[] = []
  for await (const f of oa.files.list({ limit: 1 })) all.push(f.id)
  ok(all.length === 2, `${all.length} without purpose`)
  return ids.join(',')
})
await check('files.content', async () => {
  const res = await oa.files.content(fileId)
  const t = await res.text()
  ok(t === 'hello file\n', t)
  return t.trim()
})

let batchId = ''
await check('batches.create (input_file_id, endpoint, completion_window)', async () => {
  const lines = MODELS.map((m, i) => JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: m, messages: [{ role: 'user', content: `mock: text b${i}` }] } })).join('\n')
  const input = await oa.files.create({ file: await toFile(Buffer.from(lines + '\n'), 'batch.jsonl'), purpose: 'batch' })
  const b = await oa.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { sweep: '1' } })
  ok(b.object === 'batch' && b.endpoint === '/v1/chat/completions', JSON.stringify(b))
  batchId = b.id
  return `${b.id} ${b.status}`
})
await check('batches.retrieve until completed; output file content', async () => {
  let b = await oa.batches.retrieve(batchId)
  for (let i = 0; i < 100 && !['completed', 'failed', 'expired', 'cancelled'].includes(b.status); i++) {
    await Bun.sleep(100)
    b = await oa.batches.retrieve(batchId)
  }
  ok(b.status === 'completed' && b.output_file_id, JSON.stringify(b))
  const out = await (await oa.files.content(b.output_file_id)).text()
  const lines = out.trim().split('\n').map((l) => JSON.parse(l))
  ok(lines.length === 2 && lines.every((l) => l.response?.status_code === 200), out.slice(0, 300))
  return `${b.status} counts=${JSON.stringify(b.request_counts)}`
})
await check('batches.list for await', async () => {
  const ids: string[] = []
  for await (const b of oa.batches.list({ limit: 1 })) ids.push(b.id)
  ok(ids.includes(batchId), ids.join(','))
  return ids.join(',')
})
await check('batches.cancel (an ended batch)', async () => {
  try {
    const b = await oa.batches.cancel(batchId)
    return `${b.status}`
  } catch (e) {
    const err = e as { status?: number; error?: unknown }
    ok(err.status === 400 || err.status === 409, `status ${err.status}`)
    return `${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
  }
})
await check('files.delete', async () => {
  const d = await oa.files.delete(fileId)
  ok(d.deleted === true && d.id === fileId && d.object === 'file', JSON.stringify(d))
  return JSON.stringify(d)
})
await check('models.list for await / retrieve', async () => {
  const ids: string[] = []
  for await (const m of oa.models.list()) ids.push(m.id)
  ok(ids.includes(GPT) || ids.length > 0, 'none')
  const m = await oa.models.retrieve(ids[0]!)
  ok(m.object === 'model' && m.id === ids[0], JSON.stringify(m))
  return `${ids.length} models`
})
await check('models.delete → clear JSON error', () => refused(() => oa.models.delete('mock-gpt'), /./))

// ---------------------------------------------------------------- messages (Anthropic)
for (const model of MODELS) {
  for (const [ns, m] of [['messages', an.messages], ['beta.messages', an.beta.messages]] as const) {
    await check(`${ns}.create ${model} withResponse`, async () => {
      const { data, request_id } = await (m as typeof an.messages).create({ model, max_tokens: 100, system: 'be brief', messages: [{ role: 'user', content: 'mock: text hi' }], metadata: { user_id: 'u1' } }).withResponse()
      ok(data.type === 'message' && data.content[0]?.type === 'text' && data.content[0].text === 'hi' && data.stop_reason === 'end_turn', JSON.stringify(data))
      ok(request_id, 'no request-id')
      return `${data.id} request_id=${request_id}`
    })
    await check(`${ns}.create ${model} stream`, async () => {
      const s = await (m as typeof an.messages).create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text x y' }], stream: true })
      let text = ''
      for await (const e of s) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
      ok(text === 'x y', text)
      return text
    })
    await check(`${ns}.stream helper ${model}`, async () => {
      const s = (m as typeof an.messages).stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text streamed' }] })
      let deltas = ''
      s.on('text', (t) => (deltas += t))
      const final = await s.finalMessage()
      ok(deltas === 'streamed' && final.usage.output_tokens > 0, `${deltas} ${JSON.stringify(final.usage)}`)
      return final.id
    })
    await check(`${ns}.countTokens ${model}`, async () => {
      const r = await (m as typeof an.messages).countTokens({ model, system: 'x', messages: [{ role: 'user', content: 'count me please' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] })
      ok(r.input_tokens > 0, JSON.stringify(r))
      return JSON.stringify(r)
    })
    await check(`${ns}.create ${model} tool_use round trip`, async () => {
      const toolsA = [{ name: 'get_weather', description: 'w', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
      const r = await (m as typeof an.messages).create({ model, max_tokens: 100, tools: toolsA, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Rome"}' }] })
      const use = r.content.find((b) => b.type === 'tool_use')
      ok(use && use.type === 'tool_use' && r.stop_reason === 'tool_use', JSON.stringify(r.content))
      const r2 = await (m as typeof an.messages).create({ model, max_tokens: 100, tools: toolsA, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Rome"}' }, { role: 'assistant', content: r.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'hot' }] }] })
      ok(r2.content[0]?.type === 'text' && r2.content[0].text === 'tool result: hot', JSON.stringify(r2.content))
      return 'tool result: hot'
    })
  }
  await check(`messages.parse ${model} (output_config.format)`, async () => {
    const r = await an.messages.parse({ model, max_tokens: 200, messages: [{ role: 'user', content: 'give' }], output_config: { format: { type: 'json_schema', schema } } })
    ok((r.parsed_output as { name?: string } | null)?.name === 'example', JSON.stringify(r.content))
    return JSON.stringify(r.parsed_output)
  })
}

// ---------------------------------------------------------------- message batches
for (const [ns, b] of [['messages.batches', an.messages.batches], ['beta.messages.batches', an.beta.messages.batches]] as const) {
  const batches = b as typeof an.messages.batches
  let id = ''
  await check(`${ns}.create`, async () => {
    const r = await batches.create({ requests: MODELS.map((model, i) => ({ custom_id: `c${i}`, params: { model, max_tokens: 50, messages: [{ role: 'user' as const, content: `mock: text m${i}` }] } })) })
    ok(r.type === 'message_batch' && r.id, JSON.stringify(r))
    id = r.id
    return `${r.id} ${r.processing_status}`
  })
  await check(`${ns}.retrieve until ended`, async () => {
    let r = await batches.retrieve(id)
    for (let i = 0; i < 100 && r.processing_status !== 'ended'; i++) {
      await Bun.sleep(100)
      r = await batches.retrieve(id)
    }
    ok(r.processing_status === 'ended' && r.results_url, JSON.stringify(r))
    return `${JSON.stringify(r.request_counts)} ${r.results_url}`
  })
  await check(`${ns}.results`, async () => {
    const out: string[] = []
    for await (const item of await batches.results(id)) {
      ok(item.result.type === 'succeeded', JSON.stringify(item))
      const c = item.result.message.content[0]
      out.push(`${item.custom_id}=${c?.type === 'text' ? c.text : '?'}`)
    }
    ok(out.length === 2, out.join(','))
    return out.sort().join(',')
  })
  await check(`${ns}.list for await`, async () => {
    const ids: string[] = []
    for await (const x of batches.list({ limit: 1 })) ids.push(x.id)
    ok(ids.includes(id), ids.join(','))
    return `${ids.length} batches`
  })
  await check(`${ns}.cancel (an ended batch)`, async () => {
    try {
      const r = await batches.cancel(id)
      return r.processing_status
    } catch (e) {
      const err = e as { status?: number; error?: unknown }
      ok(err.status === 400 || err.status === 409, `status ${err.status}`)
      return `${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
    }
  })
  await check(`${ns}.delete`, async () => {
    const r = await batches.delete(id)
    ok(r.type === 'message_batch_deleted' && r.id === id, JSON.stringify(r))
    return JSON.stringify(r)
  })
}

// ---------------------------------------------------------------- Anthropic files and models
for (const [ns, f] of [['files', an.files], ['beta.files', an.beta.files]] as const) {
  const files = f as typeof an.beta.files
  let id = ''
  await check(`${ns}.upload toFile`, async () => {
    const r = await files.upload({ file: await Anthropic.toFile(Buffer.from('anthropic file'), 'a.txt', { type: 'text/plain' }) })
    ok(r.type === 'file' && r.filename === 'a.txt' && r.size_bytes === 14, JSON.stringify(r))
    id = r.id
    return `${r.id} ${r.mime_type}`
  })
  await check(`${ns}.retrieveMetadata`, async () => {
    const r = await files.retrieveMetadata(id)
    ok(r.id === id && r.type === 'file', JSON.stringify(r))
    return r.filename
  })
  await check(`${ns}.list for await`, async () => {
    const ids: string[] = []
    for await (const x of files.list({ limit: 1 })) ids.push(x.id)
    ok(ids.includes(id), ids.join(','))
    return `${ids.length} files`
  })
  await check(`${ns}.download`, async () => {
    const t = await (await files.download(id)).text()
    ok(t === 'anthropic file', t)
    return t
  })
  await check(`${ns} file as a document block (mock-claude)`, async () => {
    const r = await an.beta.messages.create({ model: CLAUDE, max_tokens: 100, betas: ['files-api-2025-04-14'], messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: id } }, { type: 'text', text: 'read it' }] }] })
    ok(r.content[0]?.type === 'text', JSON.stringify(r.content))
    return r.content[0].text
  })
  await check(`${ns}.delete`, async () => {
    const r = await files.delete(id)
    ok(r.id === id && r.type === 'file_deleted', JSON.stringify(r))
    return JSON.stringify(r)
  })
}
for (const [ns, mo] of [['models', an.models], ['beta.models', an.beta.models]] as const) {
  const models = mo as typeof an.models
  await check(`${ns}.list for await / retrieve`, async () => {
    const ids: string[] = []
    for await (const x of models.list({ limit: 2 })) ids.push(x.id)
    ok(ids.length > 0, 'none')
    const r = await models.retrieve(ids[0]!)
    ok(r.type === 'model' && r.id === ids[0], JSON.stringify(r))
    return `${ids.length} models`
  })
}


// ---------------------------------------------------------------- parameters the official APIs define
await check('responses.inputTokens.count with every parameter (mock-gpt)', async () => {
  const prev = await oa.responses.create({ model: GPT, input: 'earlier turn' })
  const conv = await oa.conversations.create({})
  const fn = { type: 'function' as const, name: 'f', parameters: { type: 'object', properties: {} }, strict: false }
  const a = await oa.responses.inputTokens.count({ model: GPT, input: 'count', instructions: 'x', previous_response_id: prev.id, tools: [fn], tool_choice: 'auto', parallel_tool_calls: true, reasoning: { effort: 'low' }, text: { format: { type: 'text' }, verbosity: 'low' }, truncation: 'auto', personality: 'friendly' })
  const b = await oa.responses.inputTokens.count({ model: GPT, input: 'count', conversation: conv.id })
  ok(a.input_tokens > 0 && b.input_tokens > 0, `${JSON.stringify(a)} ${JSON.stringify(b)}`)
  return `${a.input_tokens} / ${b.input_tokens}`
})
await check('responses.inputItems.list include, order desc, after cursor', async () => {
  const r = await oa.responses.create({ model: GPT, input: [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }] })
  const page = await oa.responses.inputItems.list(r.id, { limit: 1, order: 'desc', include: ['message.input_image.image_url'] })
  ok(page.data.length === 1 && page.has_more, JSON.stringify(page.data))
  const next = await oa.responses.inputItems.list(r.id, { limit: 5, order: 'desc', after: page.data[0]!.id })
  ok(next.data.length === 2, `${next.data.length} after the first`)
  return `${page.data[0]!.id} then ${next.data.length}`
})
await check('conversations.items.list after cursor, include', async () => {
  const c = await oa.conversations.create({ items: [{ type: 'message', role: 'user', content: 'a' }, { type: 'message', role: 'user', content: 'b' }] })
  const first = await oa.conversations.items.list(c.id, { limit: 1, include: ['message.output_text.logprobs'] })
  const rest = await oa.conversations.items.list(c.id, { after: first.data[0]!.id! })
  ok(first.data.length === 1 && rest.data.length === 1, `${first.data.length} ${rest.data.length}`)
  return 'ok'
})
await check('files.list after cursor, order asc', async () => {
  const page = await oa.files.list({ limit: 1, order: 'asc' })
  const next = await oa.files.list({ limit: 1, order: 'asc', after: page.data[0]!.id })
  ok(page.data.length === 1 && next.data.length === 1 && next.data[0]!.id !== page.data[0]!.id, 'pages')
  return `${page.data[0]!.id} → ${next.data[0]!.id}`
})
await check('batches.create endpoint /v1/responses, output_expires_after; list after', async () => {
  const line = JSON.stringify({ custom_id: 'r', method: 'POST', url: '/v1/responses', body: { model: GPT, input: 'mock: text rb' } })
  const input = await oa.files.create({ file: await toFile(Buffer.from(line + '\n'), 'r.jsonl'), purpose: 'batch' })
  const b = await oa.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 3600 } })
  const page = await oa.batches.list({ limit: 1 })
  const next = await oa.batches.list({ limit: 1, after: page.data[0]!.id })
  ok(b.endpoint === '/v1/responses' && page.data.length === 1 && next.data.length === 1, `${b.endpoint} ${next.data.length}`)
  return b.id
})
await check('batches.create endpoint /v1/embeddings → clear JSON error naming endpoint', async () => {
  const input = await oa.files.create({ file: await toFile(Buffer.from('{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"model":"x","input":"y"}}\n'), 'e.jsonl'), purpose: 'batch' })
  return refused(() => oa.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' }), /endpoint|embeddings/)
})
await check('unified root /api/v1: files and batches with the openai client', async () => {
  const u = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 })
  const f = await u.files.create({ file: await toFile(Buffer.from('u'), 'u.txt'), purpose: 'user_data' })
  const got = await u.files.retrieve(f.id)
  const list = await u.batches.list()
  ok(got.id === f.id && Array.isArray(list.data), 'shapes')
  await u.files.delete(f.id)
  return f.id
})
await check('messages.create mock-claude with Claude parameters', async () => {
  const r = await an.messages.create({ model: CLAUDE, max_tokens: 2048, messages: [{ role: 'user', content: 'mock: text p' }], stop_sequences: ['zzz'], service_tier: 'auto', thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'auto' }, tools: [{ name: 't', input_schema: { type: 'object' } }], cache_control: { type: 'ephemeral' }, inference_geo: 'us', speed: 'standard' })
  ok(r.content.some((b) => b.type === 'text'), JSON.stringify(r.content))
  return r.stop_reason ?? ''
})
await check('messages.countTokens mock-claude with thinking, tool_choice, output_config, cache_control', async () => {
  const r = await an.messages.countTokens({ model: CLAUDE, messages: [{ role: 'user', content: 'count' }], thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'auto' }, tools: [{ name: 't', input_schema: { type: 'object' } }], output_config: { effort: 'low' }, cache_control: { type: 'ephemeral' }, speed: 'standard' })
  ok(r.input_tokens > 0, JSON.stringify(r))
  return String(r.input_tokens)
})
await check('beta.messages.create mock-claude with betas (anthropic-beta header)', async () => {
  const r = await an.beta.messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text b' }], betas: ['context-management-2025-06-27'] })
  ok(r.content[0]?.type === 'text', JSON.stringify(r))
  return r.id
})
await check('messages.batches.list after_id / before_id', async () => {
  const ids: string[] = []
  for (let i = 0; i < 2; i++) ids.push((await an.messages.batches.create({ requests: [{ custom_id: 'x', params: { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] } }] })).id)
  const first = await an.messages.batches.list({ limit: 1 })
  const after = await an.messages.batches.list({ limit: 1, after_id: first.data[0]!.id })
  const before = await an.messages.batches.list({ limit: 1, before_id: after.data[0]!.id })
  ok(first.data.length === 1 && after.data.length === 1 && before.data[0]?.id === first.data[0]!.id, `${first.data[0]?.id} ${after.data[0]?.id} ${before.data[0]?.id}`)
  return 'ok'
})
await check('models.list after_id / before_id, lifecycle', async () => {
  const first = await an.models.list({ limit: 1 })
  const after = await an.models.list({ limit: 1, after_id: first.data[0]!.id })
  const life = await an.models.list({ lifecycle: ['active'] })
  ok(after.data[0]?.id !== first.data[0]!.id && life.data.length > 0, 'pages')
  return `${first.data[0]!.id} → ${after.data[0]?.id}`
})
await check('files.list (Anthropic) ids, page cursor, scope_id', async () => {
  const a = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('1'), 'one.txt') })
  const b = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('2'), 'two.txt') })
  const byIds = await an.files.list({ ids: [a.id] })
  const page = await an.beta.files.list({ limit: 1 })
  ok(byIds.data.length === 1 && byIds.data[0]!.id === a.id, JSON.stringify(byIds.data.map((x) => x.id)))
  ok(page.data.length === 1 && page.hasNextPage(), 'next page')
  const scoped = await an.beta.files.list({ scope_id: 'sesn_x' })
  ok(scoped.data.length === 0, `${scoped.data.length} files in a session scope`)
  await an.files.delete(a.id)
  await an.files.delete(b.id)
  return 'ok'
})
await check('unified root: messages via an Anthropic client at /api', async () => {
  const u = new Anthropic({ apiKey: key, baseURL: `${gw.url}/api`, maxRetries: 0 })
  const r = await u.messages.create({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'mock: text u' }] })
  ok(r.content[0]?.type === 'text' && r.content[0].text === 'u', JSON.stringify(r))
  return r.id
})


// ---------------------------------------------------------------- reply shapes against the SDKs' types
for (const model of MODELS) {
  await check(`shape: chat ChatCompletion / message / usage ${model}`, async () => {
    const r = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'shape' }] })
    shaped(r, O, 'chat/completions/completions.d.ts', 'ChatCompletion')
    shaped(r.choices[0]!.message, O, 'chat/completions/completions.d.ts', 'ChatCompletionMessage')
    return shaped(r.usage, O, 'completions.d.ts', 'CompletionUsage')
  })
  await check(`shape: chat ChatCompletionChunk ${model}`, async () => {
    for await (const c of await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'shape' }], stream: true })) shaped(c, O, 'chat/completions/completions.d.ts', 'ChatCompletionChunk')
    return 'every chunk'
  })
  await check(`shape: Response / usage / output message ${model}`, async () => {
    const r = await oa.responses.create({ model, input: 'shape' })
    shaped(r, O, 'responses/responses.d.ts', 'Response')
    shaped(r.usage, O, 'responses/responses.d.ts', 'ResponseUsage')
    return shaped(r.output.find((o) => o.type === 'message'), O, 'responses/responses.d.ts', 'ResponseOutputMessage')
  })
  await check(`shape: streamed Response (response.completed) ${model}`, async () => {
    let final: unknown
    for await (const e of await oa.responses.create({ model, input: 'shape', stream: true })) if (e.type === 'response.completed') final = e.response
    return shaped(final, O, 'responses/responses.d.ts', 'Response')
  })
  await check(`shape: Message / Usage ${model}`, async () => {
    const r = await an.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] })
    shaped(r, A, 'messages/messages.d.ts', 'Message')
    return shaped(r.usage, A, 'messages/messages.d.ts', 'Usage')
  })
  await check(`shape: streamed Message (finalMessage) ${model}`, async () => {
    const r = await an.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] }).finalMessage()
    shaped(r, A, 'messages/messages.d.ts', 'Message')
    return shaped(r.usage, A, 'messages/messages.d.ts', 'Usage')
  })
}
await check('shape: MessageBatch, FileMetadata, FileObject, Batch, Conversation, Model, InputTokenCountResponse', async () => {
  const mb = await an.messages.batches.create({ requests: [{ custom_id: 's', params: { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 's' }] } }] })
  shaped(mb, A, 'messages/batches.d.ts', 'MessageBatch')
  shaped(mb.request_counts, A, 'messages/batches.d.ts', 'MessageBatchRequestCounts')
  const af = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('s'), 's.txt') })
  shaped(af, A, 'files.d.ts', 'FileMetadata')
  shaped(await an.beta.files.retrieveMetadata(af.id), A, 'beta/files.d.ts', 'BetaFileMetadata')
  const of = await oa.files.create({ file: await toFile(Buffer.from('s'), 's.txt'), purpose: 'user_data' })
  shaped(of, O, 'files.d.ts', 'FileObject')
  const line = JSON.stringify({ custom_id: 's', method: 'POST', url: '/v1/chat/completions', body: { model: GPT, messages: [{ role: 'user', content: 's' }] } })
  const bf = await oa.files.create({ file: await toFile(Buffer.from(line + '\n'), 's.jsonl'), purpose: 'batch' })
  shaped(await oa.batches.create({ input_file_id: bf.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), O, 'batches.d.ts', 'Batch')
  shaped(await oa.conversations.create({}), O, 'conversations/conversations.d.ts', 'Conversation')
  shaped(await oa.models.retrieve(GPT), O, 'models.d.ts', 'Model')
  return shaped(await oa.responses.inputTokens.count({ model: GPT, input: 's' }), O, 'responses/input-tokens.d.ts', 'InputTokenCountResponse')
})


await check('shape: BetaMessage / BetaUsage (beta.messages), ModelInfo, BetaModelInfo, DeletedFile, MessageBatchIndividualResponse', async () => {
  for (const model of MODELS) {
    const b = await an.beta.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] })
    shaped(b, A, 'beta/messages/messages.d.ts', 'BetaMessage')
    shapedBut(b.usage, 'BetaUsage')
    const bs = await an.beta.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] }).finalMessage()
    shaped(bs, A, 'beta/messages/messages.d.ts', 'BetaMessage')
    shapedBut(bs.usage, 'BetaUsage')
  }
  shaped(await an.models.retrieve(CLAUDE), A, 'models.d.ts', 'ModelInfo')
  shaped(await an.beta.models.retrieve(CLAUDE), A, 'beta/models.d.ts', 'BetaModelInfo')
  const f = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('d'), 'd.txt') })
  shaped(await an.files.delete(f.id), A, 'files.d.ts', 'DeletedFile')
  const mb = await an.messages.batches.create({ requests: [{ custom_id: 's', params: { model: GPT, max_tokens: 10, messages: [{ role: 'user', content: 's' }] } }] })
  for (let i = 0; i < 100 && (await an.messages.batches.retrieve(mb.id)).processing_status !== 'ended'; i++) await Bun.sleep(100)
  for await (const item of await an.messages.batches.results(mb.id)) {
    shaped(item, A, 'messages/batches.d.ts', 'MessageBatchIndividualResponse')
    if (item.result.type === 'succeeded') shaped(item.result.message, A, 'messages/messages.d.ts', 'Message')
  }
  return 'all whole'
})
await check('shape: OpenAI FileDeleted, ConversationDeletedResource, ResponseItemList, ConversationItemList, batch output line', async () => {
  const f = await oa.files.create({ file: await toFile(Buffer.from('d'), 'd.txt'), purpose: 'user_data' })
  shaped(await oa.files.delete(f.id), O, 'files.d.ts', 'FileDeleted')
  const c = await oa.conversations.create({ items: [{ type: 'message', role: 'user', content: 'x' }] })
  const page = await oa.conversations.items.list(c.id)
  shaped(page.data[0]!, O, 'conversations/conversations.d.ts', 'Message')
  shaped(await oa.conversations.delete(c.id), O, 'conversations/conversations.d.ts', 'ConversationDeletedResource')
  const r = await oa.responses.create({ model: GPT, input: 'shape' })
  const items = await oa.responses.inputItems.list(r.id)
  shaped(items.data[0]!, O, 'responses/responses.d.ts', 'ResponseInputMessageItem')
  shaped(await oa.responses.inputItems.list(r.id).asResponse().then((x) => x.json()), O, 'responses/input-items.d.ts', 'ResponseItemList')
  const c2 = await oa.conversations.create({})
  shaped(await oa.conversations.items.create(c2.id, { items: [{ type: 'message', role: 'user', content: 'y' }] }), O, 'conversations/items.d.ts', 'ConversationItemList')
  shaped(await oa.conversations.items.list(c2.id).asResponse().then((x) => x.json()), O, 'conversations/items.d.ts', 'ConversationItemList')
  return 'all whole'
})


for (const model of MODELS) {
  await check(`shape: every responses stream event and item ${model} (text, tool call, json)`, async () => {
    const bad = new Set<string>()
    const fn = { type: 'function' as const, name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } }, strict: false }
    for (const body of [{ input: 'mock: text a b' }, { input: 'mock: tool f {"a":"x"}', tools: [fn] }, { input: 'j', text: { format: { type: 'json_schema' as const, name: 'j', schema } } }]) {
      for await (const e of await oa.responses.create({ model, stream: true, ...body })) for (const l of lacking(e, O, 'responses/responses.d.ts')) bad.add(l.replace(/\[\d+\]/g, '[]'))
      for (const l of lacking(await oa.responses.create({ model, ...body }), O, 'responses/responses.d.ts')) bad.add('plain ' + l.replace(/\[\d+\]/g, '[]'))
    }
    ok(bad.size === 0, [...bad].join('; '))
    return 'all whole'
  })
  await check(`shape: every messages stream event and block ${model} (text, tool_use)`, async () => {
    const bad = new Set<string>()
    const toolsA = [{ name: 'f', input_schema: { type: 'object' as const, properties: { a: { type: 'string' } } } }]
    for (const body of [{ messages: [{ role: 'user' as const, content: 'mock: text a b' }] }, { tools: toolsA, messages: [{ role: 'user' as const, content: 'mock: tool f {"a":"x"}' }] }]) {
      for await (const e of await an.messages.create({ model, max_tokens: 100, stream: true, ...body })) for (const l of lacking(e, A, 'messages/messages.d.ts')) bad.add(l.replace(/\[\d+\]/g, '[]'))
      for (const l of lacking(await an.messages.create({ model, max_tokens: 100, ...body }), A, 'messages/messages.d.ts')) bad.add('plain ' + l.replace(/\[\d+\]/g, '[]'))
    }
    ok(bad.size === 0, [...bad].join('; '))
    return 'all whole'
  })
  await check(`shape: conversation items ${model}`, async () => {
    const c = await oa.conversations.create({})
    await oa.responses.create({ model, conversation: c.id, input: 'mock: text hi' })
    const bad = lacking((await oa.conversations.items.list(c.id)).data, O, 'conversations/conversations.d.ts')
    ok(bad.length === 0, bad.join('; '))
    return 'all whole'
  })
}


// ---------------------------------------------------------------- more SDK helpers
const weatherTool = () => betaTool({ name: 'get_weather', description: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const, run: (a) => `sunny in ${a.city}` })
for (const model of MODELS) {
  await check(`beta.messages.toolRunner ${model} thread: false (plain and streamed)`, async () => {
    const ask = [{ role: 'user' as const, content: 'mock: tool get_weather {"city":"Lima"}' }]
    const final = await an.beta.messages.toolRunner({ model, max_tokens: 200, messages: ask, tools: [weatherTool()], max_iterations: 3, thread: false })
    const text = final.content[0]?.type === 'text' ? final.content[0].text : ''
    let streamed = ''
    for await (const s of an.beta.messages.toolRunner({ model, max_tokens: 200, messages: ask, tools: [weatherTool()], max_iterations: 3, thread: false, stream: true })) {
      const m = await s.finalMessage()
      if (m.content[0]?.type === 'text') streamed = m.content[0].text
    }
    ok(text === 'tool result: sunny in Lima' && streamed === text, `${text} / ${streamed}`)
    return text
  })
}
await check('beta.messages.toolRunner mock-claude with its default message thread', async () => {
  const final = await an.beta.messages.toolRunner({ model: CLAUDE, max_tokens: 200, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lima"}' }], tools: [weatherTool()], max_iterations: 3 })
  ok(final.content[0]?.type === 'text', JSON.stringify(final.content))
  return final.content[0].text
})
await check('beta.messages.toolRunner mock-gpt with its default message thread → the 400 naming thread', () =>
  refused(async () => {
    for await (const _ of an.beta.messages.toolRunner({ model: GPT, max_tokens: 200, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lima"}' }], tools: [weatherTool()], max_iterations: 3 })) void _
  }, /thread/))
await check('beta.messages.thread mock-claude send twice', async () => {
  const t = an.beta.messages.thread({ model: CLAUDE, max_tokens: 100 })
  const a = await t.send([{ role: 'user', content: 'mock: text one' }])
  const b = await t.send([{ role: 'user', content: 'mock: text two' }])
  ok(a.content[0]?.type === 'text' && b.content[0]?.type === 'text' && b.content[0].text === 'two', JSON.stringify(b.content))
  return `${a.content[0].text}, ${b.content[0].text}`
})
for (const model of MODELS) {
  await check(`chat.completions.runTools ${model} stream: true`, async () => {
    const runner = oa.chat.completions.runTools({
      model, stream: true,
      messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Quito"}' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, function: (a: { city: string }) => `sunny in ${a.city}`, parse: (s: string) => JSON.parse(s) as { city: string } } }],
    })
    const text = await runner.finalContent()
    ok(text === 'tool result: sunny in Quito', `${text}`)
    return text
  })
  await check(`chat.completions.parse ${model} strict function tool → parsed_arguments`, async () => {
    const r = await oa.chat.completions.parse({ model, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lyon"}' }], tools: [{ type: 'function', function: { ...tools[0]!.function, strict: true } }] })
    const call = r.choices[0]?.message.tool_calls?.[0]
    ok(call?.type === 'function' && (call.function.parsed_arguments as { city?: string })?.city === 'Lyon', JSON.stringify(r.choices[0]?.message))
    return JSON.stringify(call.function.parsed_arguments)
  })
  // The specification's reply to a tool call is `status: "requires_action"` (§4.5; the config's
  // `responses.tool_calls_status: completed` gives OpenAI's), and the SDK parses a call's
  // arguments only in a `completed` reply: parsed_arguments stays null here, by the spec.
  await check(`responses.parse ${model} strict function tool (requires_action: parsed_arguments null)`, async () => {
    const r = await oa.responses.parse({ model, input: 'mock: tool get_weather {"city":"Lyon"}', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
    const call = r.output.find((o) => o.type === 'function_call')
    ok(r.status === ('requires_action' as string) && call?.type === 'function_call' && JSON.parse(call.arguments).city === 'Lyon', JSON.stringify(r.output))
    return `${r.status}, parsed_arguments ${JSON.stringify(call.parsed_arguments)}`
  })
  await check(`responses.stream ${model} with text.format → output_parsed`, async () => {
    const final = await oa.responses.stream({ model, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } }).finalResponse()
    ok((final.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(final.output_parsed))
    return JSON.stringify(final.output_parsed)
  })
  await check(`beta.messages.parse ${model} output_config.format`, async () => {
    const r = await an.beta.messages.parse({ model, max_tokens: 200, messages: [{ role: 'user', content: 'give' }], output_config: { format: { type: 'json_schema', schema } } })
    ok((r.parsed_output as { name?: string } | null)?.name === 'example', JSON.stringify(r.content))
    return JSON.stringify(r.parsed_output)
  })
}
await check('chat.completions.stream mock-gpt with response_format → parsed', async () => {
  const final = await oa.chat.completions.stream({ model: GPT, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } }).finalChatCompletion()
  ok((final.choices[0]?.message.parsed as { name?: string } | null)?.name === 'example', JSON.stringify(final.choices[0]?.message))
  return JSON.stringify(final.choices[0]?.message.parsed)
})


// ---------------------------------------------------------------- resources the specification does not serve
// Each is a clear JSON 4xx (never a 500 or an HTML page), whatever its method.
const unserved: [string, () => Promise<unknown>][] = [
  ['embeddings.create', () => oa.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })],
  ['moderations.create', () => oa.moderations.create({ input: 'x' })],
  ['images.generate', () => oa.images.generate({ model: 'gpt-image-1', prompt: 'x' })],
  ['audio.speech.create', () => oa.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x' })],
  ['completions.create (legacy)', () => oa.completions.create({ model: GPT, prompt: 'x' })],
  ['vectorStores.list', () => oa.vectorStores.list()],
  ['uploads.create', () => oa.uploads.create({ bytes: 1, filename: 'x.txt', mime_type: 'text/plain', purpose: 'user_data' })],
  ['containers.list', () => oa.containers.list()],
  ['fineTuning.jobs.list', () => oa.fineTuning.jobs.list()],
  ['videos.list', () => oa.videos.list()],
  ['anthropic skills.list', () => an.skills.list()],
  ['anthropic beta.skills.list', () => an.beta.skills.list()],
  ['anthropic beta.agents.list', () => an.beta.agents.list()],
  ['anthropic beta.sessions.list', () => an.beta.sessions.list()],
]
for (const [name, call] of unserved) await check(`${name} → clear JSON error`, () => refused(call, /./))

// ---------------------------------------------------------------- generation records and usage
await check('generations (by a chat id) and usage', async () => {
  const r = await oa.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'record me' }] })
  const unified = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 })
  let g: { success?: boolean; generation?: { id?: string } } = {}
  for (let i = 0; i < 50 && !g.success; i++) {
    g = ((await unified.get('/generations', { query: { id: r.id } }).catch(() => ({}))) as typeof g)
    if (!g.success) await Bun.sleep(100)
  }
  ok(g.success && g.generation?.id, JSON.stringify(g))
  const u = (await unified.get('/usage', { query: { timeframe: '24h' } })) as { totals?: object }
  ok(u.totals, JSON.stringify(u).slice(0, 200))
  return `${g.generation.id}`
})

done()
