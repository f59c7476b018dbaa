// The usage report against traffic through all three surfaces, both families, streamed and
// not, on both paths (pass-through to the fake upstream replaying recordings, and the IR):
// its totals equal the sum of the generation records the replies name, and the key's spend.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'
import { frames } from '../responses/e2e-helpers.ts'

let rig: Rig
let anthropic: Anthropic
beforeAll(async () => {
  rig = await startRig()
  anthropic = new Anthropic({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(() => rig.stop())

async function sseIds(res: Response, pick: (data: any) => string | undefined): Promise<string> {
  const text = (await res.text()).replace(/data: \[DONE\]\s*/g, '')
  return frames(text).map((f) => pick(f.data)).find(Boolean)!
}
const post = (path: string, body: unknown) =>
  fetch(`${rig.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })

test("usage totals = the sum of the records of every surface, family, path and mode = the key's spend", async () => {
  const ids: { id: string; endpoint: string; stream: boolean }[] = []
  const { client, up } = rig

  // chat: GPT pass-through (JSON, SSE), Claude translated (SSE), the mock
  up.script({ json: fixture('openai/chat/nonstream-text.json') })
  ids.push({ id: (await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).id, endpoint: 'openai.chat.completions', stream: false })
  up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse') })
  ids.push({ id: await sseIds(await post('/api/alpha/v1/chat/completions', { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }), (d) => d.id), endpoint: 'openai.chat.completions', stream: true })
  up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
  ids.push({ id: await sseIds(await post('/api/alpha/v1/chat/completions', { model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }), (d) => d.id), endpoint: 'openai.chat.completions', stream: true })
  ids.push({ id: (await client.chat.completions.create({ model: 'mock-claude', messages: [{ role: 'user', content: 'mock words' }] })).id, endpoint: 'openai.chat.completions', stream: false })

  // messages: Claude pass-through (JSON, SSE), GPT translated (JSON), the mock streamed
  up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
  ids.push({ id: (await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })).id, endpoint: 'anthropic.messages', stream: false })
  up.script({ sse: fixture('anthropic/messages/stream-cache-read.sse') })
  ids.push({ id: (await anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()).id, endpoint: 'anthropic.messages', stream: true })
  up.script({ json: fixture('openai/chat/nonstream-text.json') })
  ids.push({ id: (await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })).id, endpoint: 'anthropic.messages', stream: false })
  ids.push({ id: (await anthropic.messages.stream({ model: 'mock-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'streamed mock words' }] }).finalMessage()).id, endpoint: 'anthropic.messages', stream: true })

  // responses: GPT pass-through (JSON, SSE), Claude translated (JSON, SSE), the mock with a tool round trip
  up.script({ json: fixture('openai/responses/nonstream-text.json') })
  ids.push({ id: (await client.responses.create({ model: 'gpt-4o', input: 'hi' })).id, endpoint: 'openai.responses', stream: false })
  up.script({ sse: fixture('openai/responses/stream-reasoning-summary.sse') })
  const rs = client.responses.stream({ model: 'o4-mini', input: 'think', reasoning: { effort: 'medium', summary: 'detailed' } })
  for await (const _ of rs) {}
  ids.push({ id: (await rs.finalResponse()).id, endpoint: 'openai.responses', stream: true })
  up.script({ json: fixture('anthropic/messages/nonstream-cache-read-and-write.json') })
  ids.push({ id: (await client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi' })).id, endpoint: 'openai.responses', stream: false })
  up.script({ sse: fixture('anthropic/messages/stream-tool-use.sse') })
  ids.push({ id: await sseIds(await post('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', stream: true, input: 'weather?', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }] }), (d) => d.response?.id), endpoint: 'openai.responses', stream: true })
  const tools = [{ type: 'function' as const, name: 'f', parameters: { type: 'object', properties: {} }, strict: false }]
  const first: any = await client.responses.create({ model: 'mock-gpt', input: 'mock: tool f {}', tools })
  ids.push({ id: first.id, endpoint: 'openai.responses', stream: false })
  const second = client.responses.stream({ model: 'mock-claude', previous_response_id: first.id, tool_outputs: [{ tool_call_id: first.required_action.submit_tool_outputs.tool_calls[0].id, output: 'done' }], tools } as any)
  for await (const _ of second) {}
  ids.push({ id: (await second.finalResponse()).id, endpoint: 'openai.responses', stream: true })

  expect(new Set(ids.map((x) => x.id)).size).toBe(ids.length)
  const records = await Promise.all(ids.map((x) => rig.generation(x.id)))
  records.forEach((r, i) => {
    expect({ endpoint: r.endpoint, stream: r.stream }).toEqual({ endpoint: ids[i]!.endpoint, stream: ids[i]!.stream })
    expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens)
    expect(r.usage.completion_tokens).toBeGreaterThan(0)
    if (r.endpoint === 'openai.responses') expect(['completed', 'requires_action']).toContain(r.status)
  })

  const report = (await (await fetch(`${rig.gw.url}/api/v1/usage`, { headers: { authorization: `Bearer ${rig.gw.key}` } })).json()) as any
  const sum = (f: (r: any) => number) => records.reduce((n, r) => n + f(r), 0)
  expect(report.totals).toMatchObject({
    total_requests: records.length,
    input_tokens: sum((r) => r.usage.prompt_tokens),
    output_tokens: sum((r) => r.usage.completion_tokens),
    total_tokens: sum((r) => r.usage.total_tokens),
    unpriced_requests: records.filter((r) => r.unpriced).length,
  })
  expect(report.totals.total_cost).toBeCloseTo(sum((r) => r.cost ?? 0), 12)
  const apiKey = (await rig.gw.services.keys.authenticate(rig.gw.key))!
  expect((await rig.gw.services.keys.get(apiKey.id))!.spent).toBeCloseTo(sum((r) => r.cost ?? 0), 12)
})
