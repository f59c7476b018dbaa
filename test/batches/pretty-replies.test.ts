// OpenAI pretty-prints its JSON replies, line breaks and all. A batch's output file, its
// export and Anthropic's results stream are JSONL: one reply a line, whatever the upstream's
// layout, and the reply's content unchanged (a big number not read and written again).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { chat, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig()
  // as OpenAI sends it (byte-exact, indented), and a Claude reply laid out the same way
  const openai = fixture('openai/chat/nonstream-tool-calls-sdk.json').replace('"created": 1755097544', '"created": 12345678901234567890')
  const anthropic = JSON.stringify(JSON.parse(fixture('anthropic/messages/nonstream-text.json')), null, 2)
  expect(openai).toContain('\n  ')
  rig.up.script((r) => ({ json: r.path.includes('/messages') ? anthropic : openai }))
})
afterAll(() => rig.stop())

const jsonl = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l))

test('the output file and the export: one parseable line a reply, its numbers as they came', async () => {
  const id = await rig.upload([1, 2].map((i) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: chat('gpt-4o-mini', `q${i}`) })))
  const created = (await (await rig.call('POST', '/api/v1/batches', { input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' })).json()) as any
  const done = await rig.ended(created.id)
  expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
  const text = await (await rig.openai().files.content(done.output_file_id)).text()
  const lines = jsonl(text)
  expect(lines.map((l) => l.response.body.choices[0].message.tool_calls[0].function.name)).toEqual(['add', 'add'])
  expect(text).toContain('"created": 12345678901234567890')
  const exported = await (await rig.call('GET', `/api/v1/batches/${created.id}/export?format=ndjson`)).text()
  expect(jsonl(exported)).toHaveLength(2)
})

test("Anthropic's results stream: one line a reply, which the SDK reads", async () => {
  const client = rig.anthropic()
  const batch = await client.messages.batches.create({
    requests: [1, 2].map((i) => ({ custom_id: `m${i}`, params: { model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user' as const, content: `q${i}` }] } })),
  })
  await rig.ended(batch.id)
  const got: string[] = []
  for await (const r of await client.messages.batches.results(batch.id)) got.push(`${r.custom_id}:${r.result.type}`)
  expect(got.sort()).toEqual(['m1:succeeded', 'm2:succeeded'])
})
