// `max`, the top reasoning effort of both APIs (OpenAI's reasoning effort, Anthropic's
// output_config.effort). A Claude model asked for it through an OpenAI surface thinks with the
// largest budget it can take; a GPT model asked for it through the messages surface gets it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((r) => ({
    json: r.path.includes('/messages') ? fixtureJson('anthropic/messages/nonstream-text.json')
      : r.path.includes('/chat') ? fixtureJson('openai/chat/nonstream-text.json') : fixtureJson('openai/responses/nonstream-text.json'),
  }))
  gw = await startGateway({ env: { ...upstreamEnv(up), SWITCHYARD_CROSS_FAMILY: 'translate' } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

async function post(path: string, body: Record<string, unknown>) {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
  expect([res.status, res.status === 200 ? '' : await res.text()]).toEqual([200, ''])
  return up.requests.at(-1)!.json() as Record<string, any>
}

test('chat and responses: a Claude model thinks with more than the xhigh budget, within its output limit', async () => {
  for (const [path, body] of [
    ['/api/alpha/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000, reasoning_effort: 'max' }],
    ['/api/alpha/v1/responses', { input: 'hi', max_output_tokens: 1000, reasoning: { effort: 'max' } }],
  ] as const) {
    const sent = await post(path, { model: 'claude-haiku-4-5', ...body })
    expect(sent.thinking.type).toBe('enabled')
    expect(sent.thinking.budget_tokens).toBeGreaterThan(32_768)
    expect(sent.thinking.budget_tokens).toBeLessThan(sent.max_tokens)
    expect(sent.max_tokens).toBeLessThanOrEqual(64_000)
  }
})

test("messages: a GPT model gets Anthropic's output_config.effort max as reasoning_effort max; one whose top tier is xhigh or high gets that", async () => {
  const sent = await post('/api/beta/v1/messages', { model: 'gpt-5.6', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'max' } })
  expect(sent.reasoning_effort).toBe('max')
  const xhigh = await post('/api/beta/v1/messages', { model: 'gpt-5.2', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'max' } })
  expect(xhigh.reasoning_effort).toBe('xhigh')
  const older = await post('/api/beta/v1/messages', { model: 'gpt-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'max' } })
  expect(older.reasoning_effort).toBe('high')
})
