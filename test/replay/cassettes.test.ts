// Cassettes end to end, through the official SDKs: a gateway recording against fake upstreams
// (chat, responses and messages; JSON and streamed; a tool round trip on each family; the
// translated paths) writes every exchange; with the upstreams gone, a gateway with no provider
// keys replaying the same directory gives the SDKs the same bytes and the same events, and
// records the generations as replayed at no cost. A changed request gets a 424 that names the
// field; the cassettes hold none of the secrets the gateway was configured with.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, tempDir, type Gateway } from '../helpers/server.ts'
import { anthropicReply, cassetteLines, clients, filesUnder, gatewayOn, openaiReply, RawBodies, recordOf, SECRETS } from './rig.ts'

type Clients = ReturnType<typeof clients>
const user = (content: string) => ({ role: 'user' as const, content })
const capital: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_capital', parameters: { type: 'object', properties: { country: { type: 'string' } } } } }
const weather: Anthropic.Tool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }

async function events<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const e of stream) out.push(e)
  return out
}

/** One run of the exchanges the tests record and replay: what the SDKs made of each answer, in order. */
async function run(c: Clients): Promise<unknown[]> {
  const out: unknown[] = []
  const gpt = 'gpt-4o-mini'
  const claude = 'claude-sonnet-4-5'
  // chat, JSON and streamed
  out.push(await c.openai.chat.completions.create({ model: gpt, messages: [user('Say hi')] }))
  out.push(await events(await c.openai.chat.completions.create({ model: gpt, messages: [user('Say hi')], stream: true, stream_options: { include_usage: true } })))
  // responses
  out.push(await c.openai.responses.create({ model: gpt, input: 'Say hi' }))
  out.push(await events(await c.openai.responses.create({ model: gpt, input: 'Say hi', stream: true })))
  // messages
  out.push(await c.anthropic.messages.create({ model: claude, max_tokens: 256, messages: [user('Say hi')] }))
  out.push(await events(await c.anthropic.messages.create({ model: claude, max_tokens: 256, messages: [user('Say hi')], stream: true })))

  // a tool round trip on chat: the call streamed, the tool's result sent back
  const ask = [user('What is the capital of France?')]
  const call = await events(await c.openai.chat.completions.create({ model: gpt, messages: ask, tools: [capital], stream: true }))
  out.push(call)
  const deltas = call.flatMap((ch) => ch.choices[0]?.delta.tool_calls ?? [])
  const id = deltas.find((d) => d.id)!.id!
  const args = deltas.map((d) => d.function?.arguments ?? '').join('')
  out.push(
    await c.openai.chat.completions.create({
      model: gpt,
      tools: [capital],
      messages: [...ask, { role: 'assistant', tool_calls: [{ id, type: 'function', function: { name: 'get_capital', arguments: args } }] }, { role: 'tool', tool_call_id: id, content: 'Paris' }],
    }),
  )
  // and on messages: the tool use whole, the answer to its result streamed
  const q = [user('What is the weather in Paris?')]
  const use = await c.anthropic.messages.create({ model: claude, max_tokens: 256, tools: [weather], messages: q })
  out.push(use)
  const tu = use.content.find((b) => b.type === 'tool_use')!
  out.push(
    await events(
      await c.anthropic.messages.create({
        model: claude,
        max_tokens: 256,
        tools: [weather],
        stream: true,
        messages: [...q, { role: 'assistant', content: use.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: tu.type === 'tool_use' ? tu.id : '', content: 'sunny' }] }],
      }),
    ),
  )

  // the translated paths: a Claude model on chat and responses, a GPT model on messages
  out.push(await c.openai.chat.completions.create({ model: claude, messages: [user('Say hi')] }))
  out.push(await events(await c.openai.chat.completions.create({ model: claude, messages: [user('Say hi')], stream: true })))
  out.push(await events(await c.openai.responses.create({ model: claude, input: 'Say hi', stream: true })))
  out.push(await events(await c.anthropic.messages.create({ model: gpt, max_tokens: 256, messages: [user('Say hi')], stream: true })))
  return out
}

/** The run's last four answers are the gateway's own translations. */
const TRANSLATED = 10
/**
 * What the gateway stamps on an answer it makes itself: the time it made it, and (responses)
 * the ids it mints for the response and its items.
 */
const stamped = (s: string) => s.replace(/"(created|created_at)":\s*\d+/g, '"$1":0').replace(/\b(resp|msg)_[0-9a-f]{32}(?:[0-9a-f]{4})?\b/g, '$1_minted')

let openai: FakeUpstream
let anthropic: FakeUpstream
let dir: string
const recorded: { out: unknown[]; bodies: string[]; upstreamCalls: number; gatewayKey: string; ids: string[] } = { out: [], bodies: [], upstreamCalls: 0, gatewayKey: '', ids: [] }
let replay: Gateway
const replayed: { out: unknown[]; bodies: string[] } = { out: [], bodies: [] }

/** The reply ids of the JSON answers (chat, responses, messages): their records are looked up. */
const idsOf = (out: unknown[]) => out.filter((o) => !Array.isArray(o)).map((o) => (o as { id: string }).id)

beforeAll(async () => {
  dir = tempDir('switchyard-cassettes-')
  ;[openai, anthropic] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  openai.script(openaiReply)
  anthropic.script(anthropicReply)
  const rec = await gatewayOn({ openai, anthropic }, `  mode: record\n  dir: ${dir}`)
  const raw = new RawBodies()
  recorded.out = await run(clients(rec, raw))
  recorded.bodies = await raw.all()
  recorded.upstreamCalls = openai.requests.length + anthropic.requests.length
  recorded.gatewayKey = rec.key
  recorded.ids = idsOf(recorded.out)
  // the recording run's records are priced as usual
  for (const id of recorded.ids) expect((await recordOf(rec, id)).replayed).toBeUndefined()
  expect((await recordOf(rec, recorded.ids[0]!)).cost).toBeGreaterThan(0)
  await rec.stop()
  // no upstream from here on, and no key for one
  await Promise.all([openai.stop(), anthropic.stop()])
  replay = await gatewayOn({ openai, anthropic }, `  mode: replay\n  dir: ${dir}`, { keys: false })
  const raw2 = new RawBodies()
  replayed.out = await run(clients(replay, raw2))
  replayed.bodies = await raw2.all()
})

afterAll(async () => {
  await replay?.stop()
  if (!process.env.KEEP) cleanup(dir)
  else console.log('kept', dir)
})

describe('cassettes', () => {
  test('a replay with no upstream and no key gives the SDKs the same bytes and the same events', async () => {
    expect(recorded.upstreamCalls).toBe(14)
    expect(replayed.bodies.length).toBe(14)
    // the gateway's own answers (the translated ones) carry the time it made them: the rest is the same
    const same = (i: number, s: string) => (i < TRANSLATED ? s : stamped(s))
    for (const [i, body] of replayed.bodies.entries()) expect({ i, body: same(i, body) }).toEqual({ i, body: same(i, recorded.bodies[i]!) })
    for (const [i, out] of replayed.out.entries()) expect({ i, out: JSON.parse(same(i, JSON.stringify(out))) }).toEqual({ i, out: JSON.parse(same(i, JSON.stringify(recorded.out[i]))) })
  })

  test('the replayed generations are recorded as usual, marked replayed, at no cost', async () => {
    for (const id of recorded.ids) {
      const g = await recordOf(replay, id)
      expect(g.replayed).toBe(true)
      expect(g.cost).toBe(0)
      expect(g.unpriced).toBe(false)
      expect(g.usage.total_tokens).toBeGreaterThan(0)
    }
  })

  test('one file per model, one line per exchange, each with its match key, request and response', async () => {
    const files = filesUnder(dir).map((f) => f.slice(dir.length + 1)).sort()
    expect(files).toEqual(['claude-sonnet-4-5.jsonl', 'gpt-4o-mini.jsonl'])
    const lines = [...cassetteLines(join(dir, 'gpt-4o-mini.jsonl')), ...cassetteLines(join(dir, 'claude-sonnet-4-5.jsonl'))]
    expect(lines.length).toBe(14)
    for (const e of lines) {
      expect(e.key).toMatch(/^[0-9a-f]{64}$/)
      expect(e.request.path).toMatch(/^\/(v1\/)?(chat\/completions|responses|messages)$/)
      expect(e.response.status).toBe(200)
      expect(['json', 'text', 'events'].filter((k) => k in e.response).length).toBe(1)
    }
    // JSON is kept as JSON when it can be written back to the same bytes (OpenAI's indented, escaped layout too)
    expect(lines.filter((e) => e.response.json).map((e) => e.request.path)).toContain('/chat/completions')
    // a stream is its events, each with the time it had arrived
    const stream = lines.find((e) => e.response.events)!
    expect(stream.response.headers['content-type']).toContain('text/event-stream')
    expect(stream.response.events.every((ev: { ms: number; text: string }) => typeof ev.ms === 'number' && ev.text.length > 0)).toBe(true)
    // volatile fields are not part of the request as kept
    expect(lines.some((e) => JSON.stringify(e.request.body).includes('stream_options'))).toBe(false)
  })

  test('the cassettes hold none of the secrets the gateway was configured with', () => {
    const text = filesUnder(dir).map((f) => readFileSync(f, 'utf8')).join('\n')
    for (const secret of [...Object.values(SECRETS), recorded.gatewayKey]) expect(text).not.toContain(secret)
    expect(text).not.toMatch(/authorization|x-api-key/i)
  })

  test("a changed request is a 424 naming the cassette file, its match key and the field that differs from the nearest recording, but neither the recording's key nor the server's directory", async () => {
    const c = clients(replay, new RawBodies())
    const err = await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [user('Say hello')] }).catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err.status).toBe(424)
    const message = String(err.error?.error ?? err.message)
    expect(message).toContain('gpt-4o-mini.jsonl')
    expect(message).toMatch(/match key [0-9a-f]{64}; the nearest recorded differs at body\.messages\.0\.content/)
    // the recording may be another key's: its match key (a hash of its whole request) would let a short secret in it be guessed back
    expect(message.match(/[0-9a-f]{64}/g)).toHaveLength(1)
    expect(message).not.toContain(dir)

    // on messages too, in the error shape the SDK reads
    const miss = await c.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [user('Say hi')] }).catch((e) => e)
    expect(miss.status).toBe(424)
    expect(String(miss.message)).toContain('differs at body.max_tokens')
  })
})
