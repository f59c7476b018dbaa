// `input` may be one object with content (a single message). It is made a list once, where
// the body is decoded, so the pass-through upstream, the translated path, the stored thread and
// batch items all see one shape (it once reached the recorder as an object and answered 502).
// And whatever the record's reading of a reply does, it never costs the client the reply.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { recordsOf, startBatchRig } from '../batches/helpers.ts'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { relayJson, relayStream } from '../../src/pipeline/relay.ts'
import { GenerationOutcome } from '../../src/pipeline/outcome.ts'
import { jsonText } from '../../src/pipeline/reply.ts'
import type { Passthrough, WireTap } from '../../src/routing/contract.ts'
import { UNWATCHED } from '../../src/providers/idle.ts'

const ONE = { role: 'user', content: 'hi' }

describe('input as one object', () => {
  let g: Gateway
  let up: FakeUpstream
  beforeAll(async () => {
    up = await startFakeUpstream()
    g = await startGateway({ env: upstreamEnv(up) })
  })
  afterAll(async () => {
    await g.stop()
    await up.stop()
  })
  const post = (body: unknown) => fetch(`${g.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

  test('pass-through, JSON: the upstream gets a list of one message, and the stored response can be continued', async () => {
    up.script({ json: fixtureJson('openai/responses/nonstream-text.json') })
    const r = await post({ model: 'gpt-4o-mini', input: ONE })
    expect(r.status).toBe(200)
    const id = ((await r.json()) as { id: string }).id
    expect(up.requests.at(-1)!.json().input).toEqual([ONE])
    up.script({ json: { ...fixtureJson('openai/responses/nonstream-text.json'), id: 'resp_second_turn' } })
    const next = await post({ model: 'gpt-4o-mini', previous_response_id: id, input: { content: 'and then?' } })
    expect(next.status).toBe(200)
    const sent = up.requests.at(-1)!.json()
    expect(JSON.stringify(sent.input ?? sent)).toContain('and then?')
  })

  test('pass-through, streamed', async () => {
    up.script({ sse: fixture('openai/responses/stream-text.sse') })
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const stream = await openai.responses.create({ model: 'gpt-4o-mini', input: ONE as never, stream: true })
    let last = ''
    for await (const ev of stream) last = ev.type
    expect(last).toBe('response.completed')
    expect(up.requests.at(-1)!.json().input).toEqual([ONE])
  })

  test('translated to a Claude model and on the mock', async () => {
    up.script({ json: fixtureJson('anthropic/messages/nonstream-text.json') })
    const claude = await post({ model: 'claude-sonnet-4-5', input: ONE })
    expect(claude.status).toBe(200)
    expect(up.requests.at(-1)!.json().messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
    expect((await post({ model: 'mock-gpt', input: ONE })).status).toBe(200)
  })
})

test('a batch item whose input is one object is answered', async () => {
  const rig = await startBatchRig({ upstream: false })
  try {
    const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/responses', requests: [{ model: 'mock-gpt', input: { content: 'mock: text one-object' } }] })
    expect(res.status).toBe(200)
    const b = (await res.json()) as { id: string }
    const done = await rig.ended(b.id)
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 })
    const [r] = await rig.allResults(b.id)
    expect(JSON.stringify(r.result.output)).toContain('one-object')
    expect((await recordsOf(rig, b.id)).length).toBe(1)
  } finally {
    await rig.stop()
  }
})

describe('a tap that throws never costs the client the reply', () => {
  const throwing: WireTap = {
    state: { produced: false, done: false } as WireTap['state'],
    event: () => {
      throw new TypeError('input.forEach is not a function')
    },
    json: () => {
      throw new TypeError('input.forEach is not a function')
    },
    rewritesJson: true,
    producedText: () => '',
  }
  const pt = (reply: () => Response): Passthrough => ({
    call: (_body, _ctx, accept) => accept(reply(), UNWATCHED),
    tap: () => throwing,
    promptText: () => '',
  })
  const outcome = () =>
    new GenerationOutcome(undefined, { apiKey: { id: 'k' } as never, model: { id: 'gpt-4o-mini' } as never, stream: false, endpoint: 'openai.responses', fallbackId: () => 'resp_x' })
  const ctx = { signal: new AbortController().signal } as never

  test('JSON: the upstream text goes to the client with its status, and the failure is reported', async () => {
    const errors: unknown[] = []
    const text = '{"id":"resp_1","object":"response","status":"completed","output":[]}'
    const res = await relayJson({ pt: pt(() => new Response(text, { status: 200 })), body: {}, ctx, out: outcome(), headers: {}, onTapError: (e) => errors.push(e) })
    expect(res.status).toBe(200)
    expect(jsonText(res)).toBe(text)
    expect(errors.length).toBe(1)
  })

  test('stream: the events go on as the upstream sent them', async () => {
    const errors: unknown[] = []
    const sse = 'event: response.created\ndata: {"type":"response.created"}\n\nevent: response.completed\ndata: {"type":"response.completed"}\n\n'
    const res = await relayStream({ pt: pt(() => new Response(sse)), body: {}, ctx, out: outcome(), headers: {}, onTapError: (e) => errors.push(e), sse: {} as never })
    expect(res.status).toBe(200)
    const got = await res.text()
    expect(got).toContain('response.created')
    expect(errors.length).toBe(1)
  })
})
