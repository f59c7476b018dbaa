// A batch item's `usage` is in the generation record's words, and the record shows what else its
// cost counts (hour-long cache writes, audio tokens, web and file searches, the image tool): the
// item's usage shows them too, as its record does, so a result whose cost its tokens do not
// explain says why.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startBatchRig, type BatchRig } from './helpers.ts'
import { fixture } from '../helpers/fake-upstream.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig()
})
afterAll(() => rig.stop())

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]

test("an item whose reply searched the web and wrote hour-long cache entries: its usage shows both, as its record does", async () => {
  rig.up.script((req) => {
    const body = req.json()
    const usage = { input_tokens: 6039, output_tokens: 20, cache_creation_input_tokens: 500, cache_read_input_tokens: 0, cache_creation: { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: 200 }, server_tool_use: { web_search_requests: 3 } }
    return { json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage } }
  })
  const params = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }], messages: ask }
  const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/messages', requests: [{ custom_id: 'searched', ...params }] })
  expect(res.status).toBe(200)
  const b = (await res.json()) as any
  await rig.ended(b.id)
  const [item] = await rig.allResults(b.id)
  expect(item.status).toBe('succeeded')
  expect(item.usage).toMatchObject({ prompt_tokens: 6539, completion_tokens: 20, cache_creation_input_tokens: 500, cache_write_1h_tokens: 300, web_searches: 3 })
  // the record's own words, every field
  await rig.gw.services.recorder.flush()
  const listed = (await (await rig.call('GET', '/api/v1/generations?limit=200')).json()) as { data: any[] }
  const record = listed.data.find((d) => d.batch_id === b.id)
  expect(item.usage).toEqual(record.usage)
})

test('an item whose reply has none of them: its usage shows none', async () => {
  rig.up.script((req) => {
    const body = req.json()
    return { json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 3 } } }
  })
  const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/messages', requests: [{ custom_id: 'plain', model: 'claude-sonnet-4-5', max_tokens: 100, messages: ask }] })
  const b = (await res.json()) as any
  await rig.ended(b.id)
  const [item] = await rig.allResults(b.id)
  expect(item.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 })
})

// a reply that made a new code-interpreter container is recorded once its key's grants were read
// (was the container the key's already?): the item's usage must wait for that record too, not be
// taken from the records of the moment (none then: the usage was null, the container unsaid)
test('an item whose reply made a new code-interpreter container: its usage counts it, as its record does', async () => {
  const container = `cntr_${crypto.randomUUID().replaceAll('-', '')}`
  const text = fixture('openai/responses/nonstream-code-interpreter.handwritten.json').replaceAll('cntr_68f1c0de9a8c8190b2c3d4e5f60718293a4b5c6d7e8f9012', container)
  rig.up.script({ json: text })
  const params = { model: 'gpt-5.2', input: 'sqrt 2?', store: false, tools: [{ type: 'code_interpreter', container: { type: 'auto', memory_limit: '4g' } }] }
  const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [{ custom_id: 'container', ...params }] })
  expect(res.status).toBe(200)
  const b = (await res.json()) as any
  await rig.ended(b.id)
  const [item] = await rig.allResults(b.id)
  expect(item.status).toBe('succeeded')
  expect(item.usage).toMatchObject({ prompt_tokens: 312, completion_tokens: 41, code_interpreter_containers: { '4g': 1 } })
  await rig.gw.services.recorder.flush()
  const listed = (await (await rig.call('GET', '/api/v1/generations?limit=200')).json()) as { data: any[] }
  expect(item.usage).toEqual(listed.data.find((d) => d.batch_id === b.id).usage)
})
