// Batches of responses-style items (/v1/responses), for models of both families, on the mock.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordsOf, startBatchRig, type BatchRig } from './helpers.ts'

describe('responses items', () => {
  let rig: BatchRig
  beforeAll(async () => {
    rig = await startBatchRig({ upstream: false })
  })
  afterAll(() => rig?.stop())

  const item = (model: string, text: string) => ({ model, input: `mock: text ${text}` })
  const texts = (r: any): string => JSON.stringify(r.output ?? r)

  test('inline: GPT and Claude items through /v1/responses come back as response objects, recorded as openai.responses', async () => {
    const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [item('mock-gpt', 'r-gpt'), { custom_id: 'claude', ...item('mock-claude', 'r-claude') }] })
    expect(res.status).toBe(200)
    const b = (await res.json()) as any
    expect(b.endpoint).toBe('/v1/responses')
    const done = await rig.ended(b.id)
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
    const [gpt, claude] = await rig.allResults(b.id)
    expect(gpt.result.object).toBe('response')
    expect(texts(gpt.result)).toContain('r-gpt')
    expect(claude.custom_id).toBe('claude')
    expect(texts(claude.result)).toContain('r-claude')
    expect((await recordsOf(rig, b.id)).map((r) => r.endpoint)).toEqual(['openai.responses', 'openai.responses'])
  })

  // (an interactive turn holds its conversation while it runs; checking a batch's items, or
  // running one, takes no such hold, which would have stayed taken)
  test('an item that continues a conversation runs, and so does the next batch naming it', async () => {
    const conversation = 'conv-batch-' + crypto.randomUUID()
    for (let i = 0; i < 2; i++) {
      const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [{ ...item('mock-gpt', `turn ${i}`), conversation }] })
      expect(res.status).toBe(200)
      const done = await rig.ended(((await res.json()) as any).id)
      expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 })
    }
  })

  test('a JSONL file of OpenAI batch lines for /v1/responses, read back with the openai SDK', async () => {
    const file = await rig.upload([
      { custom_id: 'a', method: 'POST', url: '/v1/responses', body: item('mock-gpt', 'file-a') },
      { custom_id: 'b', method: 'POST', url: '/v1/responses', body: item('mock-claude', 'file-b') },
    ])
    const client = rig.openai(undefined, 'alpha/v1')
    const b = await client.batches.create({ input_file_id: file, endpoint: '/v1/responses', completion_window: '24h' })
    const done = await rig.ended(b.id)
    const out = (await (await client.files.content(done.output_file_id)).text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(out.map((l) => l.custom_id).sort()).toEqual(['a', 'b'])
    for (const l of out) expect(l.response.body.object).toBe('response')
  })
})
