// OpenAI's explicit prompt-cache breakpoints (a content part's `prompt_cache_breakpoint`) on the
// chat and responses surfaces. A GPT model's upstream gets them as they came, on every part type.
// A Claude model gets Anthropic's cache_control on the same parts, and never more than the 4
// Anthropic takes: OpenAI reads up to 80 breakpoints over a conversation, so clients leave them
// on earlier turns, and a fifth would be Anthropic's 400. The latest stay.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
const bp = { mode: 'explicit', ttl: '12h' }
const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((r) => ({
    json: r.path.includes('/messages') ? fixtureJson('anthropic/messages/nonstream-text.json')
      : r.path.includes('/chat') ? fixtureJson('openai/chat/nonstream-text.json') : fixtureJson('openai/responses/nonstream-text.json'),
  }))
  gw = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

async function send(surface: 'chat' | 'responses', body: Record<string, unknown>) {
  const res = await fetch(`${gw.url}/api/alpha/v1/${surface === 'chat' ? 'chat/completions' : 'responses'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return up.requests.at(-1)!.json() as Record<string, any>
}

/** Each cache_control of an Anthropic body, by where it sits: `m<message>.<block>`. */
function cached(body: Record<string, any>): string[] {
  const out: string[] = []
  body.messages.forEach((m: { content: string | { cache_control?: unknown }[] }, i: number) => {
    if (Array.isArray(m.content)) m.content.forEach((b, j) => b.cache_control && out.push(`m${i}.${j}:${JSON.stringify(b.cache_control)}`))
  })
  return out
}

/** Six turns, each user text carrying a breakpoint (as a client that leaves them on earlier turns sends them). */
const chatTurns = (extra: Record<string, unknown> = {}) =>
  Array.from({ length: 11 }, (_, i) => (i % 2 === 0 ? { role: 'user', content: [{ type: 'text', text: `turn ${i}`, prompt_cache_breakpoint: bp, ...(i === 0 ? extra : {}) }] } : { role: 'assistant', content: `answer ${i}` }))
const responsesTurns = () =>
  Array.from({ length: 11 }, (_, i) => (i % 2 === 0 ? { role: 'user', content: [{ type: 'input_text', text: `turn ${i}`, prompt_cache_breakpoint: bp }] } : { role: 'assistant', content: `answer ${i}` }))

describe('a GPT model: breakpoints go upstream as they came', () => {
  test('chat, text and image parts', async () => {
    const sent = await send('chat', { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', prompt_cache_breakpoint: bp }, { type: 'image_url', image_url: { url: png }, prompt_cache_breakpoint: bp }] }] })
    expect(sent.messages[0].content.map((p: { prompt_cache_breakpoint?: unknown }) => p.prompt_cache_breakpoint)).toEqual([bp, bp])
  })

  test('responses, text and image parts', async () => {
    const sent = await send('responses', { model: 'gpt-4o', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', prompt_cache_breakpoint: bp }, { type: 'input_image', image_url: png, prompt_cache_breakpoint: bp }] }] })
    expect(sent.input[0].content.map((p: { prompt_cache_breakpoint?: unknown }) => p.prompt_cache_breakpoint)).toEqual([bp, bp])
  })
})

describe("a Claude model: Anthropic's cache_control on the same parts, at most 4", () => {
  test('chat: one breakpoint becomes one cache_control', async () => {
    const sent = await send('chat', { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', prompt_cache_breakpoint: bp }] }] })
    expect(cached(sent)).toEqual(['m0.0:{"type":"ephemeral"}'])
  })

  test('chat: six breakpoints over the turns, the latest four kept', async () => {
    const sent = await send('chat', { model: 'claude-haiku-4-5', max_tokens: 100, messages: chatTurns() })
    expect(cached(sent).map((c) => c.split(':')[0])).toEqual(['m4.0', 'm6.0', 'm8.0', 'm10.0'])
  })

  test("chat: the client's own cache_control keeps its place, and the breakpoints take the room left", async () => {
    const sent = await send('chat', { model: 'claude-haiku-4-5', max_tokens: 100, messages: chatTurns({ cache_control: { type: 'ephemeral', ttl: '1h' } }) })
    expect(cached(sent)).toEqual(['m0.0:{"type":"ephemeral","ttl":"1h"}', 'm6.0:{"type":"ephemeral"}', 'm8.0:{"type":"ephemeral"}', 'm10.0:{"type":"ephemeral"}'])
  })

  test('responses: six breakpoints over the turns, the latest four kept', async () => {
    const sent = await send('responses', { model: 'claude-haiku-4-5', input: responsesTurns() })
    expect(cached(sent).map((c) => c.split(':')[0])).toEqual(['m4.0', 'm6.0', 'm8.0', 'm10.0'])
  })

  test('responses: an image part with a breakpoint', async () => {
    const sent = await send('responses', { model: 'claude-haiku-4-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this' }, { type: 'input_image', image_url: png, prompt_cache_breakpoint: bp }] }] })
    expect(cached(sent)).toEqual(['m0.1:{"type":"ephemeral"}'])
  })
})
