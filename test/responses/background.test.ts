// `background: true` on the responses surface. OpenAI's API would queue such a response and
// let the client poll for it; an upstream that did so behind the gateway would leave a queued
// object that the gateway stores, bills at zero and hands back on every poll, for ever. The
// gateway runs every response in the foreground instead, on either family: the upstream never
// sees `background` or `background_options`, the reply is the finished response, retrieving
// it finds it finished, its cost is counted, and x-switchyard-compat says what was not done.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, type RecordedRequest, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
const client = () => new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })

/** An upstream that behaves as OpenAI's does: a background request is queued, any other answered. */
function asOpenAI(req: RecordedRequest) {
  const body = req.json() as Record<string, unknown>
  if (req.path.includes('/messages')) return body.stream ? { sse: fixture('anthropic/messages/stream-text.sse') } : { json: fixtureJson('anthropic/messages/nonstream-text.json') }
  if (body.stream) return { sse: fixture('openai/responses/stream-text.sse') }
  const done = fixtureJson('openai/responses/nonstream-text.json')
  const id = `resp_${crypto.randomUUID().replaceAll('-', '')}`
  if (body.background === true) return { json: { ...done, id, status: 'queued', background: true, output: [], usage: null } }
  return { json: { ...done, id } }
}

const compatOf = (h: Headers) => (h.get('x-switchyard-compat') ?? '').split(',').map((e) => e.trim()).filter(Boolean)

async function generation(id: string) {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { generation: { status: string; cost: number; usage: { prompt_tokens: number } } }).generation
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(asOpenAI)
  gw = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

describe('background: true is answered in the foreground', () => {
  test('a GPT model: the finished response at once, found finished when polled, its cost counted, and said so', async () => {
    const { data: r, response } = await client().responses
      .create({ model: 'gpt-4o', input: 'hi', background: true, background_options: { completion_window: '2h' } } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse()
    const sent = up.requests.at(-1)!.json()
    expect(sent).not.toHaveProperty('background')
    expect(sent).not.toHaveProperty('background_options')
    expect(r.status).toBe('completed')
    expect(r.output_text.length).toBeGreaterThan(0)
    expect(compatOf(response.headers)).toEqual(expect.arrayContaining(['background', 'background_options']))
    // a client's poll loop ends at once
    expect((await client().responses.retrieve(r.id)).status).toBe('completed')
    expect((await client().responses.retrieve(r.id, { include: ['message.output_text.logprobs'], stream: false })).status).toBe('completed')
    // a client that would resume the events of a background run is told there are none, not
    // handed the object where it reads events (the SDK's stream then yields nothing and ends)
    const resumed = await client().responses.retrieve(r.id, { stream: true }).then(async (s) => {
      for await (const _ of s) return 'an event'
      return 'no events'
    }, (e: InstanceType<typeof OpenAI.APIError>) => `${e.status}: ${e.message}`)
    expect(resumed).toStartWith('400: ')
    expect(resumed).toContain('stream: a stored response is retrieved whole here')
    const odd = await fetch(`${gw.url}/api/alpha/v1/responses/${r.id}?expand=all`, { headers: { authorization: `Bearer ${gw.key}` } })
    expect(odd.status).toBe(400)
    expect(((await odd.json()) as { error: string }).error).toStartWith('expand: unknown query parameter')
    const g = await generation(r.id)
    expect(g.status).toBe('completed')
    expect(g.usage.prompt_tokens).toBeGreaterThan(0)
    expect(g.cost).toBeGreaterThan(0)
  })

  test('a GPT model streamed: the events of a foreground stream, ending completed', async () => {
    const stream = await client().responses.create({ model: 'gpt-4o', input: 'hi', background: true, stream: true })
    const types: string[] = []
    for await (const e of stream) types.push(e.type)
    expect(up.requests.at(-1)!.json()).not.toHaveProperty('background')
    expect(types.at(-1)).toBe('response.completed')
  })

  test('a Claude model, even where other foreign parameters are refused: answered, and said so', async () => {
    const { data: r, response } = await client().responses.create({ model: 'claude-haiku-4-5', input: 'hi', max_output_tokens: 100, background: true }).withResponse()
    expect(up.requests.at(-1)!.path).toContain('/messages')
    expect(up.requests.at(-1)!.json()).not.toHaveProperty('background')
    expect(r.status).toBe('completed')
    expect(compatOf(response.headers)).toContain('background')
  })

  test('background: false loses nothing, so nothing is named', async () => {
    const { response } = await client().responses.create({ model: 'gpt-4o', input: 'hi', background: false }).withResponse()
    expect(compatOf(response.headers)).not.toContain('background')
  })

  test('a value of the wrong shape is a 400 naming the field', async () => {
    for (const [field, value] of [['background', 'yes'], ['background_options', 'soon'], ['background_options', { completion_window: 2 }]] as const) {
      const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', input: 'hi', [field]: value }),
      })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toContain(field)
    }
  })
})
