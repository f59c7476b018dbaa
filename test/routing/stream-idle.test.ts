// An upstream that stops sending in the middle of a stream: the provider's timeout_ms bounds
// the silence between two reads, so the stream is cut with an error the client reads in band,
// the upstream connection is closed, and the record says why — on the pass-through path and
// on a translated one. A stream that keeps talking slower than the timeout as a whole is not cut.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const GPT_STREAM = fixture('openai/chat/stream-text-include-usage.sse')
const CLAUDE_STREAM = fixture('anthropic/messages/stream-text.sse')
const ask = [{ role: 'user' as const, content: 'hi' }]

let up: FakeUpstream
let claude: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  ;[up, claude] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  gw = await startGateway({
    yaml: `
providers:
  - { id: openai, kind: openai, base_url: ${up.url}/v1, api_key: sk-a, max_retries: 0, timeout_ms: 600 }
  - { id: anthropic, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0, timeout_ms: 600 }
compat: { cross_family: translate }
`,
  })
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([up.stop(), claude.stop()])
})
afterEach(() => {
  up.requests.length = 0
  claude.requests.length = 0
})

/** The first `n` events of an SSE text, each with its blank line. */
function firstEvents(sse: string, n: number): string {
  return sse.split(/\n\n/).slice(0, n).join('\n\n') + '\n\n'
}

async function record(id: string) {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
    if (res.status === 200) return ((await res.json()) as { generation: Record<string, any> }).generation
    await Bun.sleep(20)
  }
  throw new Error(`no record of ${id}`)
}

/** The status the listing gives a record: the one its client got, or would have. */
async function listedStatus(id: string): Promise<number> {
  const res = await fetch(`${gw.url}/api/v1/generations?limit=50`, { headers: { authorization: `Bearer ${gw.key}` } })
  const { data } = (await res.json()) as { data: { id: string; http_status: number }[] }
  return data.find((g) => g.id === id)!.http_status
}

test('pass-through: a stream silent past timeout_ms ends with an error the SDK throws, the upstream call closed, the record a 504', async () => {
  up.script({ sse: firstEvents(GPT_STREAM, 3), hold: true })
  const client = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true })
  let id = ''
  let text = ''
  const started = performance.now()
  const failure = await (async () => {
    for await (const chunk of stream) {
      id = chunk.id
      text += chunk.choices[0]?.delta?.content ?? ''
    }
  })().then(
    () => undefined,
    (e: Error) => e,
  )
  expect(failure?.message).toContain('sent nothing for 0.6 s')
  expect(text.length).toBeGreaterThan(0)
  // cut by the sweep within a second of the limit, not held
  expect(performance.now() - started).toBeLessThan(5_000)
  await up.requests[0]!.closed
  expect((await record(id)).error).toContain('sent nothing for 0.6 s')
  expect(await listedStatus(id)).toBe(504)
})

test('translated: a Claude stream silent past timeout_ms reaches a chat client as the same in-band error', async () => {
  claude.script({ sse: firstEvents(CLAUDE_STREAM, 3), hold: true })
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: ask, stream: true }),
  })
  expect(res.status).toBe(200)
  const body = await res.text()
  expect(body).toContain('sent nothing for 0.6 s')
  await claude.requests[0]!.closed
  const id = /"id":"([^"]+)"/.exec(body)![1]!
  expect((await record(id)).error).toContain('sent nothing for 0.6 s')
  expect(await listedStatus(id)).toBe(504)
})

test("pass-through: a Claude stream silent right after its opening (its start, an empty block, a ping) is cut as one silent later: the opening, then the error in band; the record a 504", async () => {
  // the opening is held until an event decides, but the upstream has begun: its silence counts
  claude.script({ sse: firstEvents(CLAUDE_STREAM, 3), hold: true })
  const res = await fetch(`${gw.url}/api/beta/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: ask, stream: true }),
  })
  expect(res.status).toBe(200)
  const body = await res.text()
  expect(body.startsWith(firstEvents(CLAUDE_STREAM, 3))).toBe(true)
  expect(body).toContain('sent nothing for 0.6 s')
  await claude.requests[0]!.closed
  const id = /"id":"(msg_[^"]+)"/.exec(body)![1]!
  expect((await record(id)).error).toContain('sent nothing for 0.6 s')
  expect(await listedStatus(id)).toBe(504)
})

test('a stream that keeps sending, each gap under timeout_ms, runs longer than timeout_ms whole and is not cut', async () => {
  claude.script({ sse: CLAUDE_STREAM, delayMs: 60 })
  const client = new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0 })
  const started = performance.now()
  const msg = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: ask }).finalMessage()
  expect(performance.now() - started).toBeGreaterThan(1_500)
  expect(msg.stop_reason).toBe('max_tokens')
  expect(msg.content.length).toBeGreaterThan(0)
})

test("a client slow to take a long stream is not the upstream's silence: nothing is cut while the reads wait on the client", async () => {
  // a stream of 20 MB, sent at once: the client's socket fills, and the gateway's reads wait on it
  const event = (i: number) => `data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"${String(i).padStart(6, '0')}${'x'.repeat(1000)}"},"finish_reason":null}]}\n\n`
  const events = Array.from({ length: 20_000 }, (_, i) => event(i)).join('')
  const end = 'data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":8000,"total_tokens":8001}}\n\ndata: [DONE]\n\n'
  up.script({ body: events + end, headers: { 'content-type': 'text/event-stream' } })
  const port = new URL(gw.url).port
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: ask })
  const socket = connect(Number(port), '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (d: string) => (received += d))
  socket.write(`POST /api/alpha/v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
  await Bun.sleep(200)
  socket.pause()
  // well past timeout_ms and the sweep's second, the client reading nothing
  await Bun.sleep(3_000)
  socket.resume()
  const until = Date.now() + 20_000
  while (!received.includes('[DONE]') && !received.includes('sent nothing') && Date.now() < until) await Bun.sleep(50)
  socket.destroy()
  expect(received).not.toContain('sent nothing')
  expect(received).toContain('data: [DONE]')
})
