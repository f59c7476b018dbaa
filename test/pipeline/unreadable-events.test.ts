// A relayed upstream stream that sends an event whose data is not JSON: the client's own parser
// would fail on it with no word of why (the SDKs throw "Could not parse message into JSON"), and
// the record would say the stream succeeded. Like a translated stream, the pass-through one ends
// there in the surface's own error shape, without the unreadable bytes, and the record says why.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

let rig: Rig
let anthropic: Anthropic
beforeAll(async () => {
  rig = await startRig()
  anthropic = new Anthropic({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const BROKEN = 'data: {"choices":[{"delta":{"content":"oops\n\n'
const MESSAGE = 'upstream sent a stream event that is not JSON'

/** The fixture's events with an unreadable one put in at `at`, and its ids made this test's own. */
function withUnreadable(path: string, at: number, from: string, to: string): string {
  const events = fixture(path).replaceAll(from, to).split('\n\n')
  events.splice(at, 0, BROKEN.slice(0, -2))
  return events.join('\n\n')
}

async function recordOf(id: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const g = await rig.generation(id).catch(() => undefined)
    if (g) return g
    await Bun.sleep(20)
  }
  throw new Error(`no record for ${id}`)
}

const cases = [
  {
    surface: 'chat',
    fixture: 'openai/chat/stream-text-include-usage.sse',
    from: 'chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc',
    text: '"content":"The"',
    at: 3,
    send: (b: object) => fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, ...b }) }),
    sdk: async () => {
      for await (const _ of await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    },
  },
  {
    surface: 'messages',
    fixture: 'anthropic/messages/stream-text.sse',
    from: 'msg_01PgicqXb8hKdXEPHm3LLTGF',
    text: '"text":"The"',
    at: 4,
    send: (b: object) => fetch(`${rig.gw.url}/api/beta/v1/messages`, { method: 'POST', headers: { 'x-api-key': rig.gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-3-opus-20240229', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream: true, ...b }) }),
    sdk: async () => {
      for await (const _ of await anthropic.messages.create({ model: 'claude-3-opus-20240229', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream: true }));
    },
  },
  {
    surface: 'responses',
    fixture: 'openai/responses/stream-text.sse',
    from: 'resp_681e3e15125c8191afb05fabbf3b86d6047f076151f76bcc',
    text: 'response.output_item.added',
    at: 3,
    send: (b: object) => fetch(`${rig.gw.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream: true, store: false, ...b }) }),
    sdk: async () => {
      for await (const _ of await rig.client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true, store: false }));
    },
  },
]

describe('an upstream event that is not JSON, on the pass-through path', () => {
  for (const c of cases) {
    test(`${c.surface}: mid-stream, the stream ends there with the gateway's 502 and not the bytes; the record says why`, async () => {
      const id = `${c.from.slice(0, c.from.indexOf('_') + 1 || 9)}unreadable${c.surface}`
      rig.up.script({ sse: withUnreadable(c.fixture, c.at, c.from, id) })
      const res = await c.send({})
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(body).toContain(c.text)
      expect(body).not.toContain('oops')
      expect(body).toContain(MESSAGE)
      const g = await recordOf(id)
      expect(g.error).toBe(MESSAGE)
      // the official SDK reads the gateway's error, not a parse failure of its own
      rig.up.script({ sse: withUnreadable(c.fixture, c.at, c.from, `${id}2`) })
      await expect(c.sdk()).rejects.toThrow(MESSAGE)
    })

    test(`${c.surface}: as the first event, the request fails before anything is sent: a 502 naming it`, async () => {
      rig.up.script({ sse: withUnreadable(c.fixture, 0, c.from, c.from) })
      const res = await c.send({})
      expect(res.status).toBe(502)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(await res.text()).toContain(MESSAGE)
    })
  }
})

describe('around an event that is not JSON', () => {
  test('what follows it in the same read is not sent on either: no [DONE] after it, only the error', async () => {
    const events = fixture('openai/chat/stream-text-include-usage.sse').replaceAll(cases[0]!.from, 'chatcmpl-one-read').split('\n\n')
    events.splice(2, 0, BROKEN.slice(0, -2))
    // the whole stream as one body: one read holds the bad event and everything after it
    rig.up.script({ body: events.join('\n\n'), headers: { 'content-type': 'text/event-stream' } })
    const res = await cases[0]!.send({})
    const body = await res.text()
    expect(body).toContain(MESSAGE)
    expect(body).not.toContain('[DONE]')
    expect(body).not.toContain('"finish_reason":"stop"')
  })

  test('what clients take is not cut: an empty event (left out), [DONE] with a trailing space, a ping whose data is empty', async () => {
    const chat = fixture('openai/chat/stream-text-include-usage.sse').replaceAll(cases[0]!.from, 'chatcmpl-tolerated').replace('data: [DONE]', 'data: [DONE] ').split('\n\n')
    chat.splice(2, 0, 'data:')
    rig.up.script({ sse: chat.join('\n\n') })
    let text = ''
    for await (const c of await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })) text += c.choices[0]?.delta.content ?? ''
    expect(text).toBe('The capital of the UK is London.')
    const messages = fixture('anthropic/messages/stream-text.sse').replace('event: ping\ndata: {"type": "ping"}', 'event: ping\ndata:')
    rig.up.script({ sse: messages })
    const final = await anthropic.messages.stream({ model: 'claude-3-opus-20240229', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
    // the recorded stream's own end
    expect(final.stop_reason).toBe('max_tokens')
    expect((final.content[0] as { text: string }).text).toStartWith('The')
  })
})

