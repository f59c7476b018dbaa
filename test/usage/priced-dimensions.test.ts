// The usage report against records that carry every priced dimension: cache reads, 5-minute
// and hour cache writes (Anthropic's and OpenAI's), reasoning and audio tokens, web and file
// searches, the image tool's tokens, Anthropic's fast mode and US-only inference, OpenAI's
// flex and priority tiers, an unpriced tier, a response-cache hit, an upstream error and a
// stream cut short. Whatever the dimensions, the report must say what the records say: its
// cost the sum of their costs, its requests their count, each token bucket their sum — read
// from the hourly rollup (a window ending now) and from the records (a window with edges); and
// the parts of those tokens it shows (cache reads, cache writes, reasoning) their parts.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
})
afterAll(() => rig.stop())

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
const auth = () => ({ authorization: `Bearer ${rig.gw.key}` })

async function getJson(path: string): Promise<any> {
  const res = await fetch(`${rig.gw.url}${path}`, { headers: auth() })
  expect(res.status).toBe(200)
  return res.json()
}

/** Every record of the key, through the paged listing. */
async function listAll(): Promise<any[]> {
  const out: any[] = []
  let after: string | null = null
  for (;;) {
    const page: any = await getJson(`/api/v1/generations?limit=7${after ? `&after=${after}` : ''}`)
    out.push(...page.data)
    if (!page.has_more) return out
    after = page.last_id
  }
}

/** The first data line of a stream, parsed. */
const firstData = (text: string) => JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n', text.indexOf('data: '))))

/** Seconds of the records (created_at) are too coarse for a window's edges: the test's own clock. */
let startedAt = 0

async function makeTraffic(): Promise<string[]> {
  const ids: string[] = []
  const { up, client, anthropic } = rig
  startedAt = Date.now()

  // Anthropic, JSON: cache reads, 5-minute and hour writes
  const cacheReply = fixtureJson('anthropic/messages/nonstream-cache-read-and-write.json')
  cacheReply.id = 'msg_dims_cache'
  cacheReply.usage.cache_creation = { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: 118 }
  up.script({ json: JSON.stringify(cacheReply) })
  ids.push((await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })).id)

  // Anthropic, streamed: hour writes in message_start
  const sse = fixture('anthropic/messages/stream-cache-write.sse').replace(
    /"cache_creation_input_tokens":(\d+)/,
    (_m, n) => `"cache_creation_input_tokens":${n},"cache_creation":{"ephemeral_1h_input_tokens":${n},"ephemeral_5m_input_tokens":0}`,
  )
  up.script({ sse })
  ids.push((await anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask }).finalMessage()).id)

  // Anthropic web searches, streamed; thinking, through the chat surface's translation
  up.script({ sse: fixture('anthropic/messages/stream-web-search.handwritten.sse') })
  ids.push((await anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any }).finalMessage()).id)
  up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
  ids.push((await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask })).id)

  // Anthropic fast mode and US-only inference, together (Opus 4.6)
  up.script({ json: { id: 'msg_dims_fast', type: 'message', role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: 'Fast.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1000, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 200, service_tier: 'standard', speed: 'fast', inference_geo: 'us' } } })
  const fast = await rig.postMessages({ model: 'claude-opus-4-6', max_tokens: 100, speed: 'fast', messages: ask })
  expect(fast.status).toBe(200)
  ids.push(((await fast.json()) as any).id)

  // OpenAI chat: cache reads and writes on gpt-5.6-sol, reasoning tokens, audio tokens, priority
  const written = fixtureJson('openai/chat/nonstream-text.json')
  Object.assign(written, { id: 'chatcmpl-dims-written', model: 'gpt-5.6-sol', usage: { prompt_tokens: 10_000, completion_tokens: 100, total_tokens: 10_100, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 6000 }, completion_tokens_details: { reasoning_tokens: 40 } } })
  up.script({ json: JSON.stringify(written) })
  ids.push((await client.chat.completions.create({ model: 'gpt-5.6-sol', messages: ask })).id)
  up.script({ json: fixture('openai/chat/nonstream-reasoning-tokens.json') })
  ids.push((await client.chat.completions.create({ model: 'o3-mini', messages: ask })).id)
  const audio = fixtureJson('openai/chat/nonstream-text.json')
  Object.assign(audio, { id: 'chatcmpl-dims-audio', model: 'gpt-audio', usage: { prompt_tokens: 1500, completion_tokens: 2500, total_tokens: 4000, prompt_tokens_details: { cached_tokens: 100, audio_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 2000 } } })
  up.script({ json: JSON.stringify(audio) })
  ids.push((await client.chat.completions.create({ model: 'gpt-audio', messages: ask })).id)
  const priority = fixtureJson('openai/chat/nonstream-text.json')
  Object.assign(priority, { id: 'chatcmpl-dims-priority', service_tier: 'priority', usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } })
  up.script({ json: JSON.stringify(priority) })
  ids.push((await client.chat.completions.create({ model: 'gpt-4.1', messages: ask, service_tier: 'priority' })).id)

  // OpenAI chat streamed at flex
  up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse').replaceAll('"service_tier":"default"', '"service_tier":"flex"') })
  let flexId = ''
  for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true, service_tier: 'flex' })) flexId = chunk.id
  ids.push(flexId)

  // Responses: web and file searches, the image tool's tokens (JSON); priority (streamed)
  const base = fixtureJson('openai/responses/nonstream-text.json')
  const tools = { ...base, id: 'resp_dims_tools', model: 'gpt-5', usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 250 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 1100 } }
  tools.output = [
    { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather paris' } },
    { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['weather'], results: null },
    { id: 'ig_1', type: 'image_generation_call', status: 'completed', quality: 'high', size: '1024x1024', output_format: 'png', result: 'iVBORw0KGgo=', revised_prompt: 'A cat.' },
    ...base.output,
  ]
  tools.tools = [{ type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' }]
  tools.tool_usage = { image_gen: { input_tokens: 50, input_tokens_details: { image_tokens: 10, text_tokens: 40 }, output_tokens: 4160, total_tokens: 4210 }, web_search: { num_requests: 1 } }
  up.script({ json: JSON.stringify(tools) })
  ids.push((await client.responses.create({ model: 'gpt-5', input: 'Weather, and draw it.', tools: [{ type: 'web_search' }, { type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' } as never], store: false })).id)
  up.script({ sse: fixture('openai/responses/stream-text.sse').replaceAll('"service_tier":"default"', '"service_tier":"priority"') })
  ids.push((await client.responses.stream({ model: 'gpt-4.1', input: 'hi', service_tier: 'priority', store: false }).finalResponse()).id)

  // unpriced: a reply served at ultrafast, which has no known price
  up.script({ json: JSON.stringify({ ...base, id: 'resp_dims_ultrafast', model: 'gpt-5.6-sol', service_tier: 'ultrafast' }) })
  ids.push((await client.responses.create({ model: 'gpt-5.6-sol', input: 'Hi.', service_tier: 'ultrafast' as never, store: false })).id)

  // the response cache: the second answer is a hit, recorded at no cost
  const plain = fixtureJson('openai/chat/nonstream-text.json')
  plain.id = 'chatcmpl-dims-cacheable'
  up.script({ json: JSON.stringify(plain) })
  const cacheable = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'cache me' }] }
  const miss = await client.chat.completions.create(cacheable, { headers: { 'x-switchyard-cache': '60' } }).withResponse()
  expect(miss.response.headers.get('x-switchyard-cache')).toBe('miss')
  ids.push(miss.data.id)
  const hit = await client.chat.completions.create(cacheable, { headers: { 'x-switchyard-cache': '60' } }).withResponse()
  expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit')
  ids.push(hit.data.id)

  // an upstream error: recorded, failed
  up.script({ status: 400, json: fixture('openai/chat/error-400-unsupported-value.json') })
  const failed = await rig.post({ model: 'gpt-4o', messages: ask })
  expect(failed.status).toBe(400)

  // a stream cut short, relayed and translated: billed for what it produced
  up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse'), dropAfterEvents: 3 })
  const cut = await fetch(`${rig.gw.url}/api/beta/v1/messages`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'gpt-4.1', max_tokens: 100, stream: true, messages: ask }) })
  ids.push(firstData(await cut.text()).message.id)
  up.script({ sse: fixture('anthropic/messages/stream-text.sse'), dropAfterEvents: 4 })
  const cut2 = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
  ids.push(firstData(await cut2.text()).message.id)
  return ids
}

const sum = (rs: any[], f: (r: any) => number) => rs.reduce((n, r) => n + f(r), 0)

/**
 * The parts of the tokens a report shows, as the records say them (a reasoning count not
 * reported is none), and what else their costs count, summed from each record's usage (a
 * record with none shows none): hour cache writes, audio tokens, web and file searches, the
 * image tool's input and output tokens.
 */
const parts = (rs: any[]) => ({
  input_cached_tokens: sum(rs, (r) => r.usage.cache_read_input_tokens),
  input_cache_write_tokens: sum(rs, (r) => r.usage.cache_creation_input_tokens),
  reasoning_tokens: sum(rs, (r) => r.usage.completion_tokens_details?.reasoning_tokens ?? 0),
  input_cache_write_1h_tokens: sum(rs, (r) => r.usage.cache_write_1h_tokens ?? 0),
  input_audio_tokens: sum(rs, (r) => r.usage.audio_input_tokens ?? 0),
  output_audio_tokens: sum(rs, (r) => r.usage.audio_output_tokens ?? 0),
  web_search_requests: sum(rs, (r) => r.usage.web_searches ?? 0),
  file_search_requests: sum(rs, (r) => r.usage.file_searches ?? 0),
  image_tool_tokens: sum(rs, (r) => (r.usage.image_tool?.input_tokens ?? 0) + (r.usage.image_tool?.output_tokens ?? 0)),
})
const PARTS = Object.keys(parts([]))

function expectAgrees(report: any, records: any[]) {
  const cost = (rs: any[]) => sum(rs, (r) => r.cost ?? 0)
  expect(report.totals).toMatchObject({
    total_requests: records.length,
    input_tokens: sum(records, (r) => r.usage.prompt_tokens),
    output_tokens: sum(records, (r) => r.usage.completion_tokens),
    total_tokens: sum(records, (r) => r.usage.total_tokens),
    unpriced_requests: records.filter((r) => r.unpriced).length,
    ...parts(records),
  })
  expect(report.totals.total_cost).toBeCloseTo(cost(records), 12)
  // the series adds up to the totals, each bucket saying its unpriced requests
  expect(sum(report.series, (p) => p.requests)).toBe(records.length)
  for (const f of ['input_tokens', 'output_tokens', 'unpriced_requests', ...PARTS]) {
    expect([f, sum(report.series, (p) => p[f])]).toEqual([f, report.totals[f]])
  }
  expect(sum(report.series, (p) => p.cost)).toBeCloseTo(report.totals.total_cost, 12)
  // and each model to its records
  const models = [...new Set(records.map((r) => r.model))].sort()
  expect(report.top_models.map((m: any) => m.model).sort()).toEqual(models)
  for (const m of report.top_models) {
    const mine = records.filter((r) => r.model === m.model)
    expect(m).toMatchObject({
      model: m.model,
      requests: mine.length,
      tokens: sum(mine, (r) => r.usage.total_tokens),
      input_tokens: sum(mine, (r) => r.usage.prompt_tokens),
      output_tokens: sum(mine, (r) => r.usage.completion_tokens),
      unpriced_requests: mine.filter((r) => r.unpriced).length,
      ...parts(mine),
    })
    expect(m.cost).toBeCloseTo(cost(mine), 12)
  }
}

test('the usage report right after the traffic: what every record of every priced dimension says, no more, no less', async () => {
  const ids = await makeTraffic()
  // at once, as a dashboard would: the report includes the last request (a stream cut short)
  const now = (await getJson('/api/v1/usage')) as any
  // every reply the client saw, and the failed request, which had none
  expect(now.totals.total_requests).toBe(ids.length + 1)
  const listed = await listAll()
  // each reply the client saw has its record, and the listing has the failed request's too
  const looked = await Promise.all(ids.map((id) => getJson(`/api/v1/generations?id=${encodeURIComponent(id)}`).then((r) => r.generation)))
  expect(listed.length).toBe(ids.length + 1)
  const byGateway = new Map(listed.map((r) => [r.gateway_id, r]))
  for (const g of looked) expect(byGateway.get(g.gateway_id)).toMatchObject({ cost: g.cost, unpriced: g.unpriced, usage: g.usage })

  // the records hold what was asked of them: each dimension was priced, the unpriced one said so
  const of = (id: string) => looked[ids.indexOf(id)]
  expect(of('msg_dims_cache').usage).toMatchObject({ prompt_tokens: 3 + 1111 + 418, cache_read_input_tokens: 1111, cache_creation_input_tokens: 418, completion_tokens: 33 })
  expect(of('chatcmpl-dims-written').usage).toMatchObject({ prompt_tokens: 10_000, cache_read_input_tokens: 2000, cache_creation_input_tokens: 6000, completion_tokens: 100 })
  expect(of('chatcmpl-dims-audio').usage).toMatchObject({ prompt_tokens: 1500, completion_tokens: 2500, cache_read_input_tokens: 100 })
  expect(of('resp_dims_tools').usage).toMatchObject({ prompt_tokens: 1000, cache_read_input_tokens: 250, completion_tokens: 100 })
  expect(of('resp_dims_ultrafast')).toMatchObject({ cost: null, unpriced: true })
  // the miss and the hit share a reply id (a lookup finds the hit): the listing has both
  expect(listed.filter((r) => r.id === 'chatcmpl-dims-cacheable').map((r) => [r.cached === true, r.cost > 0]).sort()).toEqual([[false, true], [true, false]])
  expect(listed.filter((r) => r.error !== undefined).length).toBeGreaterThanOrEqual(1)
  for (const g of listed) if (!g.unpriced && !g.cached && g.error === undefined) expect(g.cost).toBeGreaterThan(0)

  // each part is there to be counted: the cache reads and writes, the reasoning asked for above
  expect(of('chatcmpl-dims-written').usage.completion_tokens_details).toEqual({ reasoning_tokens: 40 })
  expect(of('resp_dims_tools').usage.completion_tokens_details).toEqual({ reasoning_tokens: 30 })
  expect(parts(listed).input_cached_tokens).toBeGreaterThanOrEqual(1111 + 2000 + 100 + 250)
  expect(parts(listed).input_cache_write_tokens).toBeGreaterThanOrEqual(418 + 6000)
  expect(parts(listed).reasoning_tokens).toBeGreaterThanOrEqual(40 + 30)
  // and what else the costs count: the hour writes, the audio, the searches, the image tool
  expect(of('chatcmpl-dims-audio').usage).toMatchObject({ audio_input_tokens: 1000, audio_output_tokens: 2000 })
  expect(of('resp_dims_tools').usage).toMatchObject({ web_searches: 1, file_searches: 1, image_tool: { input_tokens: 50, output_tokens: 4160 } })
  expect(parts(listed)).toMatchObject({ input_audio_tokens: 1000, output_audio_tokens: 2000, file_search_requests: 1, image_tool_tokens: 50 + 4160 })
  expect(parts(listed).input_cache_write_1h_tokens).toBeGreaterThanOrEqual(300)
  expect(parts(listed).web_search_requests).toBeGreaterThanOrEqual(1 + 1)

  // a window ending now: read from the hourly rollup
  expectAgrees(now, listed)
  // a window with edges inside hours: read from the records themselves
  const from = new Date(startedAt - 1234).toISOString()
  const to = new Date(Date.now() + 1).toISOString()
  await Bun.sleep(5)
  expectAgrees(await getJson(`/api/v1/usage?from=${from}&to=${to}`), listed)
  // the same by day, and with a model filter
  expectAgrees(await getJson(`/api/v1/usage?timeframe=7d`), listed)
  const sonnet = of('msg_dims_cache').model
  expectAgrees(await getJson(`/api/v1/usage?model=${encodeURIComponent(sonnet)}&from=${from}&to=${to}`), listed.filter((r) => r.model === sonnet))
})

test("batch items: in the report of the batch key's account as their records are, each at the price of the same request made at once", async () => {
  const { key } = await rig.gw.services.keys.create({ name: 'batch books', account: 'batch-books' })
  const call = (method: string, path: string, body?: unknown, k = key) =>
    fetch(`${rig.gw.url}${path}`, { method, headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  // each model's reply carries cache reads and writes (an hour's too, on Claude)
  const written = { ...fixtureJson('openai/chat/nonstream-text.json'), model: 'gpt-5.6-sol', usage: { prompt_tokens: 10_000, completion_tokens: 100, total_tokens: 10_100, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 6000 }, completion_tokens_details: { reasoning_tokens: 40 } } }
  const claude = fixtureJson('anthropic/messages/nonstream-cache-read-and-write.json')
  claude.usage.cache_creation = { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: 118 }
  claude.usage.server_tool_use = { web_search_requests: 2 }
  let n = 0
  rig.up.script((req) => (req.json().model.startsWith('claude') ? { json: { ...claude, id: `msg_batch_${n++}` } } : { json: { ...written, id: `chatcmpl-batch-${n++}` } }))
  const ask = (model: string, i: number) => ({ model, messages: [{ role: 'user', content: `item ${i}` }] })
  const created = await call('POST', '/api/v1/batches', { requests: [ask('gpt-5.6-sol', 0), ask('claude-sonnet-4-5', 1), ask('gpt-5.6-sol', 2), ask('claude-sonnet-4-5', 3)] })
  expect(created.status).toBe(200)
  const id = ((await created.json()) as any).id
  for (let deadline = Date.now() + 20_000; ; await Bun.sleep(20)) {
    const b = (await (await call('GET', `/api/v1/batches/${id}`)).json()) as any
    if (['completed', 'failed', 'cancelled', 'expired'].includes(b.status)) break
    if (Date.now() > deadline) throw new Error(`batch ${id} did not end: ${b.status}`)
  }
  const records = ((await (await call('GET', '/api/v1/generations?limit=200')).json()) as any).data as any[]
  expect(records).toHaveLength(4)
  expect(records.every((r) => r.batch_id === id && r.error === undefined)).toBe(true)
  // the items' records keep what else their costs count, and the report sums it as theirs
  expect(parts(records)).toMatchObject({ input_cache_write_1h_tokens: 600, web_search_requests: 4 })
  expectAgrees((await (await call('GET', '/api/v1/usage')).json()) as any, records)

  // the same requests made at once cost what the items did: the gateway calls the interactive
  // API for them, which bills no batch discount
  const once = async (model: string) => {
    const res = await call('POST', '/api/alpha/v1/chat/completions', ask(model, 9))
    expect(res.status).toBe(200)
    const record = await call('GET', `/api/v1/generations?id=${((await res.json()) as any).id}`)
    return ((await record.json()) as any).generation.cost
  }
  for (const model of ['gpt-5.6-sol', 'claude-sonnet-4-5']) {
    const cost = await once(model)
    const items = records.filter((r) => r.model === model)
    expect(items).toHaveLength(2)
    for (const r of items) expect(r.cost).toBeCloseTo(cost, 12)
  }
})
