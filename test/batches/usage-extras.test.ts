// A batch item's `usage` is in the generation record's words, and the record shows what else its
// cost counts (hour-long cache writes, audio tokens, web and file searches, the image tool): the
// item's usage shows them too, as its record does, so a result whose cost its tokens do not
// explain says why.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startBatchRig, type BatchRig } from './helpers.ts'

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
