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

  // a batch's items run at once and in no order: two turns of one conversation would both
  // continue it from the same turn, neither seeing the other, and be added to it in any order
  test('one turn of a conversation per batch: a second item naming it is a 400 naming both lines', async () => {
    const conv = (await (await rig.call('POST', '/api/v1/conversations', { items: [{ role: 'user', content: 'hello' }] })).json()) as any
    for (const [conversation, again] of [
      [conv.id, { id: conv.id }],
      ['named-' + crypto.randomUUID(), undefined],
    ] as const) {
      const requests = [{ ...item('mock-gpt', 'a'), conversation }, item('mock-gpt', 'between'), { ...item('mock-gpt', 'b'), conversation: again ?? conversation }]
      const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests })
      expect(res.status).toBe(400)
      const error = ((await res.json()) as any).error as string
      expect(error).toContain('requests[2]: conversation:')
      expect(error).toContain('requests[0]')
      expect(error).toContain(conversation)
    }
    // and in a JSONL file, by its lines
    const file = await rig.upload([0, 1].map((i) => ({ custom_id: `t${i}`, method: 'POST', url: '/v1/responses', body: { ...item('mock-gpt', `f${i}`), conversation: conv.id } })))
    const res = await rig.call('POST', '/api/v1/batches', { input_file_id: file, endpoint: '/v1/responses', completion_window: '24h' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toMatch(/line 2: conversation: .*line 1/)
    // turns that add nothing to it (store: false) may share it; nothing was added by the refused ones
    const unstored = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [0, 1].map((i) => ({ ...item('mock-gpt', `u${i}`), conversation: conv.id, store: false })) })
    expect(unstored.status).toBe(200)
    expect((await rig.ended(((await unstored.json()) as any).id)).request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
    const listed = (await (await rig.call('GET', `/api/v1/conversations/${conv.id}/items?order=asc`)).json()) as any
    expect(listed.data.length).toBe(1)
  })

  test("an item in a conv_ conversation sees its items and adds its turn; another key's conversation is a 404 naming the line", async () => {
    const conv = (await (await rig.call('POST', '/api/v1/conversations', { items: [{ role: 'user', content: 'a long earlier message '.repeat(20) }] })).json()) as any
    const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [{ ...item('mock-gpt', 'turn'), conversation: conv.id }, item('mock-gpt', 'alone')] })
    expect(res.status).toBe(200)
    const id = ((await res.json()) as any).id
    expect((await rig.ended(id)).request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
    const [turn, alone] = await rig.allResults(id)
    expect(turn.result.conversation).toEqual({ id: conv.id })
    expect(turn.result.usage.input_tokens).toBeGreaterThan(alone.result.usage.input_tokens + 50)
    const listed = (await (await rig.call('GET', `/api/v1/conversations/${conv.id}/items?order=asc`)).json()) as any
    expect(listed.data.map((it: any) => it.role)).toEqual(['user', 'user', 'assistant'])
    expect(listed.data[2].id).toBe(turn.result.output[0].id)
    const other = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [item('mock-gpt', 'x'), { ...item('mock-gpt', 'y'), conversation: conv.id }] }, rig.otherKey)
    expect(other.status).toBe(404)
    expect(((await other.json()) as any).error).toBe(`requests[1]: conversation: Conversation with id '${conv.id}' not found.`)
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
