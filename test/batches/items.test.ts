// Batch items through the same pipeline as interactive requests, against the fake upstream
// replaying recorded replies: chat and messages items for models of both families, from a
// JSONL file and inline; results paging; the generation records each item leaves (the
// batch's key and id, exactly one per item) and the books: usage report = records = spend.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson } from '../helpers/fake-upstream.ts'
import { chat, heldAfter, msg, recordsOf, replayFixtures, startBatchRig, type BatchRig } from './helpers.ts'
import { toFile } from 'openai'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ yaml: 'providers:\n  openai:\n    max_retries: 0\n  anthropic:\n    max_retries: 0\n' })
})
afterAll(() => rig.stop())

const openaiReply = fixtureJson('openai/chat/nonstream-text.json')
const anthropicReply = fixtureJson('anthropic/messages/nonstream-text.json')

async function create(body: unknown, path = '/api/v1/batches') {
  const res = await rig.call('POST', path, body)
  const json = (await res.json()) as any
  if (res.status !== 200) throw new Error(`create ${res.status}: ${JSON.stringify(json)}`)
  return json
}

describe('chat endpoint', () => {
  test('a JSONL file with GPT and Claude items: every item succeeds with the chat reply, in input order', async () => {
    const seen = replayFixtures(rig.up)
    const lines = [chat('gpt-4o-mini', 'c0'), { custom_id: 'x', ...chat('claude-3-5-haiku-latest', 'c1') }, chat('gpt-4o-mini', 'c2', { stream: true, stream_options: { include_usage: true } })]
    const file = await rig.upload(lines)
    const b = await create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' })
    const done = await rig.ended(b.id)
    expect(done.status).toBe('completed')
    const results = await rig.allResults(b.id)
    expect(results.map((r) => r.index)).toEqual([0, 1, 2])
    expect(results.every((r) => r.status === 'succeeded')).toBe(true)
    expect(results[0].result.choices[0].message.content).toBe(openaiReply.choices[0].message.content)
    expect(results[1].custom_id).toBe('x')
    expect(results[1].result.object).toBe('chat.completion')
    expect(results[1].result.choices[0].message.content).toBe(anthropicReply.content[0].text)
    // usage in the generation record's words
    const u = anthropicReply.usage
    expect(results[1].usage).toEqual({ prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens, total_tokens: u.input_tokens + u.output_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 })
    // a streaming item ran as a non-streaming one: its result is JSON
    expect(results[2].result.object).toBe('chat.completion')
    const sent = rig.up.requests.filter((r) => r.json().messages?.[0]?.content === 'c2')
    expect(sent).toHaveLength(1)
    expect(sent[0]!.json().stream).not.toBe(true)
    expect([...seen.values()]).toEqual([1, 1, 1])
  })

  test('generation records: one per item, with the batch id and the batch key; usage = records = spend', async () => {
    replayFixtures(rig.up)
    const key = await rig.gw.services.keys.create({ name: 'books', credits: 100 })
    const before = (await rig.gw.services.keys.get(key.record.id))!.spent
    const res = await rig.call('POST', '/api/v1/batches', { requests: Array.from({ length: 12 }, (_, i) => chat(i % 2 ? 'gpt-4o-mini' : 'claude-3-5-haiku-latest', `books ${i}`)) }, key.key)
    const b = (await res.json()) as any
    await rig.ended(b.id, key.key)
    const recs = (await recordsOf(rig, b.id))
    expect(recs).toHaveLength(12)
    expect(new Set(recs.map((r) => r.api_key_id))).toEqual(new Set([key.record.id]))
    expect(recs.every((r) => r.stream === 0 && r.http_status === 200 && r.cost > 0)).toBe(true)
    const sum = recs.reduce((a, r) => a + r.cost, 0)
    expect((await rig.gw.services.keys.get(key.record.id))!.spent - before).toBeCloseTo(sum, 10)
    // the generation lookup finds them by the reply id, for the batch's key only
    const results = await rig.allResults(b.id, 1000, key.key)
    const g = await rig.call('GET', `/api/v1/generations?id=${results[0].result.id}`, undefined, key.key)
    expect(g.status).toBe(200)
    expect(((await g.json()) as any).generation.batch_id).toBe(b.id)
    // the usage report counts exactly these records for this key's account
    const usage = (await (await rig.call('GET', '/api/v1/usage', undefined, key.key)).json()) as any
    expect(usage.totals.total_cost).toBeGreaterThanOrEqual(sum - 1e-9)
    expect(await heldAfter(rig, key.record.id)).toBe(0)
  })

  test('inline requests on the alpha root, with metadata and settings.concurrency kept', async () => {
    replayFixtures(rig.up)
    const b = await create({ requests: [chat('gpt-4o-mini', 'i0'), chat('gpt-4o-mini', 'i1')], metadata: { a: 1, nested: { b: [1, 2] } }, settings: { concurrency: 1 } }, '/api/alpha/v1/batches')
    expect(b.input_file_id).toBeNull()
    expect(b.metadata).toEqual({ a: 1, nested: { b: [1, 2] } })
    expect(b.settings).toEqual({ concurrency: 1 })
    const done = await rig.ended(b.id)
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
  })
})

describe('messages endpoint', () => {
  test('Claude and GPT items through /v1/messages: Anthropic message replies', async () => {
    replayFixtures(rig.up)
    const file = await rig.upload([msg('claude-3-5-haiku-latest', 'm0'), { custom_id: 'gpt', method: 'POST', url: '/v1/messages', body: msg('gpt-4o-mini', 'm1') }])
    const b = await create({ input_file_id: file, endpoint: '/v1/messages' })
    expect(b.endpoint).toBe('/v1/messages')
    await rig.ended(b.id)
    const [claude, gpt] = await rig.allResults(b.id)
    expect(claude.status).toBe('succeeded')
    expect(claude.result.type).toBe('message')
    expect(claude.result.content[0].text).toBe(anthropicReply.content[0].text)
    expect(gpt.custom_id).toBe('gpt')
    expect(gpt.result.type).toBe('message')
    expect(gpt.result.id).toMatch(/^msg_/)
    expect(gpt.result.content[0].text).toBe(openaiReply.choices[0].message.content)
    const recs = (await recordsOf(rig, b.id))
    expect(recs.map((r) => r.endpoint)).toEqual(['anthropic.messages', 'anthropic.messages'])
  })
})

describe('upstream failures', () => {
  test('429 and 5xx are retried with backoff (Retry-After honoured) before the item fails; 400 is not retried', async () => {
    const seen = replayFixtures(rig.up, {
      special: (p, n) => {
        if (p === 'flaky' && n <= 2) return { status: n === 1 ? 429 : 503, headers: { 'retry-after': '0' }, json: { error: { message: 'busy', type: 'rate_limit_error' } } }
        if (p === 'always-down') return { status: 500, headers: { 'retry-after': '0' }, json: { error: { message: 'down', type: 'server_error' } } }
        if (p === 'bad') return { status: 400, json: { error: { message: 'no such thing', type: 'invalid_request_error' } } }
        return undefined
      },
    })
    const b = await create({ requests: [chat('gpt-4o-mini', 'flaky'), chat('gpt-4o-mini', 'always-down'), chat('gpt-4o-mini', 'bad')] })
    await rig.ended(b.id)
    const [flaky, down, bad] = await rig.allResults(b.id)
    expect(flaky.status).toBe('succeeded')
    expect(seen.get('flaky')).toBe(3)
    expect(down.status).toBe('failed')
    expect(down.error).toMatchObject({ status: 502, message: expect.stringContaining('down') })
    expect(typeof down.error.code).toBe('string')
    // the first attempt and max_retries (4) more
    expect(seen.get('always-down')).toBe(5)
    expect(bad.error.status).toBe(400)
    expect(seen.get('bad')).toBe(1)
    // every attempt is recorded (failed ones cost nothing); the item's result is billed once
    const recs = (await recordsOf(rig, b.id))
    expect(recs.filter((r) => r.http_status === 200)).toHaveLength(1)
    expect(recs.filter((r) => r.http_status !== 200).every((r) => r.cost === 0 || r.cost === null)).toBe(true)
  })

  test('credit runs out mid-batch: the item admission refuses fails with 402 and never goes upstream', async () => {
    const seen = replayFixtures(rig.up)
    // enough for one request's reservation to be admitted, not for the next (credit admission)
    const key = await rig.gw.services.keys.create({ name: 'nearly-broke', credits: 0.000001 })
    const res = await rig.call('POST', '/api/v1/batches', { requests: [chat('gpt-4o-mini', 'p0'), chat('gpt-4o-mini', 'p1')], settings: { concurrency: 2 } }, key.key)
    const b = (await res.json()) as any
    // once spent, the key is refused at the door (402) for what spends
    const store = rig.gw.services.batches!.store
    for (let i = 0; i < 500 && !(await store.byId(b.id))!.endedAt; i++) await Bun.sleep(10)
    expect(await store.byId(b.id)).toMatchObject({ status: 'completed', total: 2, succeeded: 1, failed: 1 })
    const [ok, refused] = await store.results(b.id, 0, 2, 2)
    expect(ok!.status).toBe('succeeded')
    expect(JSON.parse(refused!.error!)).toMatchObject({ status: 402, code: 'insufficient_credits', message: expect.stringContaining('Credits exhausted') })
    // the key may still read its batch: nothing read costs anything
    expect((await rig.call('GET', `/api/v1/batches/${b.id}`, undefined, key.key)).status).toBe(200)
    expect((await rig.call('POST', '/api/v1/batches', { requests: [chat('gpt-4o-mini', 'p2')] }, key.key)).status).toBe(402)
    expect(seen.get('p0')).toBe(1)
    expect(seen.has('p1')).toBe(false)
    // the refused item left no reservation behind, the admitted one was settled
    expect(await heldAfter(rig, key.record.id)).toBe(0)
  })
})

describe('credit and the files items name', () => {
  // an item that names a stored file by id is held to the file's size at admission, as an
  // interactive request is: otherwise a funded key's batch runs far past its credit
  test("items naming a large file: the key's credit admits what it covers (one past, as interactive), the rest get 402", async () => {
    // the upstream counts the file's text, as a real one does
    const reply = fixtureJson('openai/chat/nonstream-text.json')
    rig.up.script(() => ({ json: { ...reply, usage: { prompt_tokens: 400_160, completion_tokens: 5, total_tokens: 400_165 } } }))
    const key = await rig.gw.services.keys.create({ name: 'file-heavy', credits: 0.08 })
    // 400 KB: bounded at 400,000 prompt tokens, about $0.06 at gpt-4o-mini's price
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(400_000, 'x')])
    const file = await rig.openai(key.key).files.create({ file: await toFile(pdf, 'doc.pdf', { type: 'application/pdf' }), purpose: 'user_data' })
    const item = (p: string) => ({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: file.id } }, { type: 'text', text: p }] }] })
    const res = await rig.call('POST', '/api/v1/batches', { requests: [0, 1, 2, 3].map((i) => item(`f${i}`)), settings: { concurrency: 4 } }, key.key)
    expect(res.status).toBe(200)
    const b = (await res.json()) as any
    const store = rig.gw.services.batches!.store
    for (let i = 0; i < 500 && !(await store.byId(b.id))!.endedAt; i++) await Bun.sleep(10)
    // held at $0.06 each against $0.08: the first two are admitted, the spend then passes the credit
    expect(await store.byId(b.id)).toMatchObject({ total: 4, succeeded: 2, failed: 2 })
    const errors = (await store.results(b.id, 0, 4, 4)).filter((r) => r.status === 'failed')
    for (const e of errors) expect(JSON.parse(e.error!)).toMatchObject({ status: 402, code: 'insufficient_credits' })
  })
})

describe('results paging by item index', () => {
  test('offset and limit over item indexes: pages join to every index once; the default page is 100, the max 1000', async () => {
    const b = await create({ requests: Array.from({ length: 250 }, (_, i) => chat('mock-gpt', `mock: text r${i}`)), settings: { concurrency: 50 } })
    await rig.ended(b.id)
    const page = (await (await rig.call('GET', `/api/v1/batches/${b.id}/results`)).json()) as any
    expect(page).toMatchObject({ id: b.id, status: 'completed', total: 250, offset: 0, limit: 100 })
    expect(page.results).toHaveLength(100)
    const p2 = (await (await rig.call('GET', `/api/alpha/v1/batches/${b.id}/results?offset=240&limit=1000`)).json()) as any
    expect(p2.results.map((r: any) => r.index)).toEqual(Array.from({ length: 10 }, (_, i) => 240 + i))
    expect(p2.results[0].result.choices[0].message.content).toBe('r240')
    const all = await rig.allResults(b.id, 37)
    expect(all.map((r) => r.index)).toEqual(Array.from({ length: 250 }, (_, i) => i))
    expect((await rig.call('GET', `/api/v1/batches/${b.id}/results?offset=300`).then((r) => r.json()) as any).results).toEqual([])
  })
})

describe('responses endpoint', () => {
  test('GPT (the Responses upstream) and Claude (translated) items from a file and inline: Response objects with the extras; records openai.responses', async () => {
    const seen = replayFixtures(rig.up)
    const responsesReply = fixtureJson('openai/responses/nonstream-text.json')
    const lines = [{ custom_id: 'g', model: 'gpt-4o', input: 'r0' }, { custom_id: 'c', model: 'claude-3-5-haiku-latest', input: [{ role: 'user', content: 'r1' }], max_output_tokens: 100 }]
    const file = await rig.upload(lines)
    const b = await create({ input_file_id: file, endpoint: '/v1/responses', completion_window: '24h' })
    expect((await rig.ended(b.id)).status).toBe('completed')
    const results = await rig.allResults(b.id)
    expect(results.map((r) => [r.custom_id, r.status])).toEqual([['g', 'succeeded'], ['c', 'succeeded']])
    expect(results[0].result).toMatchObject({ object: 'response', status: 'completed', output_text: responsesReply.output[0].content[0].text })
    expect(results[0].result.reasoning.summaries).toEqual([])
    expect(results[1].result).toMatchObject({ object: 'response', status: 'completed', output_text: anthropicReply.content[0].text })
    expect(results[1].result.id).toMatch(/^resp_/)
    expect(rig.up.requests.some((r) => r.path.endsWith('/responses') && r.json().input === 'r0')).toBe(true)
    const recs = (await recordsOf(rig, b.id))
    expect(recs.map((r) => r.endpoint)).toEqual(['openai.responses', 'openai.responses'])
    expect([...seen.values()]).toEqual([1, 1])

    // inline, OpenAI batch-line form, and a mock tool call: requires_action stored as a thread the key can continue
    const inline = await create({ endpoint: '/v1/responses', requests: [{ custom_id: 't', method: 'POST', url: '/v1/responses', body: { model: 'mock-gpt', input: 'mock: tool f {}', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }] } }] })
    expect((await rig.ended(inline.id)).status).toBe('completed')
    const [t] = await rig.allResults(inline.id)
    expect(t.result.status).toBe('requires_action')
    const call = t.result.required_action.submit_tool_outputs.tool_calls[0]
    // the thread was stored by the worker and is found by an interactive request
    let next: Response | undefined
    for (let i = 0; i < 20; i++) {
      next = await rig.call('POST', '/api/alpha/v1/responses', { model: 'mock-gpt', previous_response_id: t.result.id, tool_outputs: [{ tool_call_id: call.id, output: 'from batch' }] })
      if (next.status === 200) break
      await Bun.sleep(25)
    }
    expect(next!.status).toBe(200)
    expect(((await next!.json()) as any).output_text).toBe('tool result: from batch')
  })

  test('a responses item that fails its surface check is a 400 naming the line', async () => {
    const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [{ model: 'gpt-4o', input: 'ok' }, { model: 'gpt-4o', input: 'x', temperature: 5 }] })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toMatch(/requests\[1\].*temperature/)
  })
})
