// An upstream's 429 that says nothing of when to come back (no Retry-After: some proxies, an
// OpenAI answer that gives only `retry-after-ms`, an Anthropic `rate_limit_error` event) still
// reaches the client with a Retry-After, on every surface and path: a 429 without one leaves a
// client to guess, and the official SDKs then fall back to their own short backoff.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig({ SWITCHYARD_CROSS_FAMILY: 'translate' })
})
afterAll(() => rig.stop())

const ask = [{ role: 'user' as const, content: 'Hello?' }]
const anthropic429 = { status: 429, json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } } }
const openai429 = { status: 429, headers: { 'retry-after-ms': '800' }, json: { error: { message: 'Rate limit reached for gpt-4o-mini', type: 'requests', code: 'rate_limit_exceeded' } } }

/** The SDK error a call ended with: its class, status and the Retry-After it read. */
async function refusal(call: () => Promise<unknown>): Promise<{ name: string; status: number; retryAfter: string | null }> {
  try {
    await call()
  } catch (e) {
    const err = e as { constructor: { name: string }; status: number; headers?: Headers }
    return { name: err.constructor.name, status: err.status, retryAfter: err.headers?.get('retry-after') ?? null }
  }
  throw new Error('the call did not fail')
}

test('the openai SDK on a Claude model (chat, responses, streamed or not) gets a Retry-After with the 429', async () => {
  for (const call of [
    () => rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask }),
    () => rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask }).finalChatCompletion(),
    () => rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'Hello?' }),
  ]) {
    rig.up.script(anthropic429)
    const e = await refusal(call)
    expect(e).toMatchObject({ name: 'RateLimitError', status: 429 })
    expect(Number(e.retryAfter)).toBeGreaterThanOrEqual(1)
  }
})

test("the anthropic SDK on a GPT model gets a Retry-After with the 429, the upstream's retry-after-ms in whole seconds, rounded up", async () => {
  rig.up.script(openai429)
  const e = await refusal(() => rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: ask }))
  expect(e).toMatchObject({ name: 'RateLimitError', status: 429, retryAfter: '1' })
})

test('a rate_limit_error event that opens a stream is a 429 with a Retry-After too', async () => {
  rig.up.script({ sse: `event: error\ndata: ${JSON.stringify(anthropic429.json)}\n\n` })
  const e = await refusal(() => rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask }).finalChatCompletion())
  expect(e).toMatchObject({ name: 'RateLimitError', status: 429 })
  expect(Number(e.retryAfter)).toBeGreaterThanOrEqual(1)
})

test("an upstream's own Retry-After is passed on as it is", async () => {
  rig.up.script({ ...anthropic429, headers: { 'retry-after': '30' } })
  const e = await refusal(() => rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask }))
  expect(e.retryAfter).toBe('30')
})

test("a 429 that named no wait gets one from the gateway that differs from client to client: the SDKs sleep exactly retry-after-ms, and would otherwise all come back together", async () => {
  const waits: number[] = []
  for (let i = 0; i < 8; i++) {
    rig.up.script(anthropic429)
    const res = await fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: ask }) })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    waits.push(Number(res.headers.get('retry-after-ms')))
  }
  for (const ms of waits) expect(ms >= 1_000 && ms <= 1_500).toBe(true)
  expect(new Set(waits).size).toBeGreaterThan(4)
})
