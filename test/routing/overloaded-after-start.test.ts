// Claude says it is overloaded in band, after its stream has begun: `message_start`, then
// `event: error` with overloaded_error. Said before any output, it is a failure before the reply
// as a 529 would be: the next deployment serves, and the client, through the official SDKs, sees
// one answer and no error (on the messages surface, relayed as it came; on chat, translated). The
// deployment that said it rests as for any overload.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, startFakeUpstream } from '../helpers/fake-upstream.ts'
import { generationOf } from '../helpers/records.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const TEXT = fixture('anthropic/messages/stream-text.sse')
// message_start, an empty text block's start, a ping: then Claude's overloaded_error
const OVERLOADED = TEXT.split('\n\n').slice(0, 3).join('\n\n') + '\n\n' + fixture('anthropic/messages/stream-error-overloaded-event.sse')

const [a, b] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
const gw: Gateway = await startGateway({
  yaml: `
providers:
  - { id: claude-a, kind: anthropic, base_url: ${a.url}, api_key: sk-a, max_retries: 0 }
  - { id: claude-b, kind: anthropic, base_url: ${b.url}, api_key: sk-b, max_retries: 0 }
models:
  - id: claude-sonnet-4-5
    family: anthropic
    deployments: [{ provider: claude-a, priority: 1 }, { provider: claude-b, priority: 2 }]
  - id: claude-haiku-4-5
    family: anthropic
    deployments: [{ provider: claude-a, priority: 1 }, { provider: claude-b, priority: 2 }]
routing: { cooldown_s: 60, failures_to_cool: 1 }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`,
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([a.stop(), b.stop()])
})
afterEach(() => {
  for (const u of [a, b]) u.requests.length = 0
})

const record = (id: string) => generationOf(gw, id)
const attempts = (rec: Record<string, any>) => rec.attempts.map((x: { provider: string; status: number }) => [x.provider, x.status])

describe("Claude's overloaded_error just after its stream began", () => {
  test('messages surface: the next deployment serves, and the SDK reads its stream whole', async () => {
    a.script({ sse: OVERLOADED })
    b.script({ sse: TEXT })
    const claude = new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0 })
    const stream = claude.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
    const msg = await stream.finalMessage()
    expect(msg.id).toBe('msg_01PgicqXb8hKdXEPHm3LLTGF')
    expect(msg.content[0]!.type === 'text' && msg.content[0].text.length).toBeGreaterThan(0)
    expect([a.requests.length, b.requests.length]).toEqual([1, 1])
    expect(attempts(await record(msg.id))).toEqual([['claude-a', 503], ['claude-b', 200]])

    // it rests, as after any overload: the next request goes to the other deployment at once
    const next = await claude.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
    expect(next.id).toBe(msg.id)
    expect([a.requests.length, b.requests.length]).toEqual([1, 2])
  })

  test('chat surface, translated: the next deployment serves the stream', async () => {
    a.script({ sse: OVERLOADED })
    b.script({ sse: TEXT })
    const openai = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
    const stream = await openai.chat.completions.create({ model: 'claude-haiku-4-5', stream: true, messages: [{ role: 'user', content: 'hi' }] })
    let text = ''
    let id = ''
    for await (const c of stream) {
      id ||= c.id
      text += c.choices[0]?.delta?.content ?? ''
    }
    expect(text.length).toBeGreaterThan(0)
    expect([a.requests.length, b.requests.length]).toEqual([1, 1])
    expect(attempts(await record(id))).toEqual([['claude-a', 503], ['claude-b', 200]])
  })

  test('a client that leaves before the first event, or while the opening is held, is recorded as a 499, relayed and translated', async () => {
    const listed = async () => {
      const res = await fetch(`${gw.url}/api/v1/generations?limit=50`, { headers: { authorization: `Bearer ${gw.key}` } })
      return ((await res.json()) as { data: { id: string; endpoint: string; http_status: number }[] }).data
    }
    const [opening, rest] = [TEXT.split('\n\n').slice(0, 3).join('\n\n') + '\n\n', TEXT.split('\n\n').slice(3).join('\n\n')]
    const enc = new TextEncoder()
    // the opening at once, the rest a second later
    const heldOpening = () =>
      new Response(
        new ReadableStream({
          async start(c) {
            c.enqueue(enc.encode(opening))
            await Bun.sleep(1000)
            try {
              c.enqueue(enc.encode(rest))
              c.close()
            } catch {} // the gateway left
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      )
    const asks: [string, string, object][] = [
      ['anthropic.messages', '/api/beta/v1/messages', { max_tokens: 100 }],
      ['openai.chat.completions', '/api/alpha/v1/chat/completions', {}],
    ]
    // the first event cut in two, its second half a second later; then the opening held
    for (const reply of [{ sse: TEXT, delayMs: 1000 }, heldOpening]) {
      for (const [endpoint, path, extra] of asks) {
        // on either deployment: the first may rest from the tests above
        for (const u of [a, b]) u.script(reply)
        const before = new Set((await listed()).map((g) => g.id))
        const left = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'leave' }], ...extra }),
          signal: AbortSignal.timeout(300),
        }).catch((e: Error) => e)
        expect(left).toBeInstanceOf(Error)
        let made: { endpoint: string; http_status: number }[] = []
        for (const until = Date.now() + 10_000; made.length === 0 && Date.now() < until; await Bun.sleep(50)) made = (await listed()).filter((g) => !before.has(g.id))
        expect(made.map((g) => [g.endpoint, g.http_status])).toEqual([[endpoint, 499]])
      }
    }
  })
})
