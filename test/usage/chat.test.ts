// The report against real traffic: requests made through the chat surface with the official
// `openai` SDK (zero config: the built-in mock provider serves catalog models at their
// catalog prices), each generation record fetched through /api/v1/generations, and the
// usage report's totals compared with their sum.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

let g: Gateway
let key: string
let client: OpenAI

beforeAll(async () => {
  g = await startGateway()
  key = (await g.services.keys.create({ name: 'chat-usage', account: 'chat-usage' })).key
  client = new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(() => g.stop())

async function generation(id: string) {
  // recording happens right after the last byte; give the server that moment
  for (let i = 0; ; i++) {
    const r = await fetch(`${g.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } })
    if (r.status === 200) return ((await r.json()) as any).generation
    if (i >= 20) throw new Error(`generation ${id}: ${r.status} ${await r.text()}`)
    await Bun.sleep(25)
  }
}

test("the report's totals equal the sum of the chat requests' generation records", async () => {
  const ids: string[] = []
  const clientUsage = new Map<string, OpenAI.CompletionUsage>()

  const plain = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Count the tokens of this sentence, please.' }] })
  ids.push(plain.id)
  clientUsage.set(plain.id, plain.usage!)

  const claude = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'mock: text A reply from the Claude side.' }] })
  ids.push(claude.id)
  clientUsage.set(claude.id, claude.usage!)

  const streamed = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'A streamed answer with usage at the end.' }],
  })
  let streamId = ''
  for await (const chunk of streamed) {
    streamId = chunk.id
    if (chunk.usage) clientUsage.set(chunk.id, chunk.usage)
  }
  ids.push(streamId)

  const noUsage = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Streamed, no usage asked.' }] })
  let noUsageId = ''
  for await (const chunk of noUsage) noUsageId = chunk.id
  ids.push(noUsageId)

  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  ]
  const final = await client.chat.completions
    .stream({ model: 'gpt-4o', tools, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Paris"}' }] })
    .finalChatCompletion()
  ids.push(final.id)

  expect(new Set(ids).size).toBe(ids.length)
  const records = await Promise.all(ids.map(generation))
  for (const r of records) {
    expect(r.endpoint).toBe('openai.chat.completions')
    expect(r.unpriced).toBe(false)
    expect(r.cost).toBeGreaterThan(0)
    expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens)
    const seen = clientUsage.get(r.id)
    // what the client was told is what was recorded
    if (seen) expect([r.usage.prompt_tokens, r.usage.completion_tokens]).toEqual([seen.prompt_tokens, seen.completion_tokens])
  }
  expect(records.map((r) => r.stream)).toEqual([false, false, true, true, true])

  const res = await fetch(`${g.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  const report = (await res.json()) as any
  const sum = (f: (r: any) => number) => records.reduce((n, r) => n + f(r), 0)
  expect(report.totals).toMatchObject({
    total_requests: records.length,
    input_tokens: sum((r) => r.usage.prompt_tokens),
    output_tokens: sum((r) => r.usage.completion_tokens),
    total_tokens: sum((r) => r.usage.total_tokens),
    unpriced_requests: 0,
  })
  expect(report.totals.total_cost).toBeCloseTo(sum((r) => r.cost), 12)
  expect(report.series.reduce((n: number, p: any) => n + p.requests, 0)).toBe(records.length)
  expect(report.top_models.map((m: any) => m.model).sort()).toEqual(['claude-sonnet-4-5', 'gpt-4o', 'gpt-4o-mini'])

  // the spend of the key is the same money
  const apiKey = (await g.services.keys.authenticate(key))!
  expect((await g.services.keys.get(apiKey.id))!.spent).toBeCloseTo(sum((r) => r.cost), 12)
})
