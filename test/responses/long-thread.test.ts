// A long thread continued through the pass-through path: its history is read a row at a time
// and the upstream body is encoded item by item and streamed with its length declared, so a
// continuation of tens of MiB never holds the request thread for the whole of it. The upstream
// must still get exactly the body a single JSON.stringify would have given.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { encodeJson } from '../../src/providers/json-body.ts'
import { NO_LIMITS } from '../batches/helpers.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

describe('the encoding', () => {
  test('a small body is one string, exactly JSON.stringify', async () => {
    const body = { model: 'gpt-4o', input: [{ role: 'user', content: 'hi' }, { role: 'user', content: 'again' }] }
    expect(await encodeJson(body)).toBe(JSON.stringify(body))
  })

  test('a long conversation is parts that join to exactly JSON.stringify, with its UTF-8 length', async () => {
    const big = 'wörd '.repeat(300_000)
    const body = { model: 'gpt-4o', stream: true, input: [{ role: 'user', content: big }, { role: 'assistant', content: [{ type: 'output_text', text: big }] }, { role: 'user', content: '"input":[] \u0000' }], store: false }
    const out = await encodeJson(body)
    if (typeof out === 'string') throw new Error('expected parts')
    expect(out.parts.join('')).toBe(JSON.stringify(body))
    expect(out.length).toBe(Buffer.byteLength(JSON.stringify(body)))
    // Anthropic's and chat's bodies hold their conversation in `messages`
    const chat = { model: 'claude-sonnet-4-5', messages: body.input, max_tokens: 10 }
    const c = await encodeJson(chat)
    expect(typeof c === 'string' ? c : c.parts.join('')).toBe(JSON.stringify(chat))
  })
})

describe('over HTTP, on a fake OpenAI upstream', () => {
  let g: Gateway
  let up: FakeUpstream
  beforeAll(async () => {
    up = await startFakeUpstream()
    up.script(() => ({ json: { ...fixtureJson('openai/responses/nonstream-text.json'), id: `resp_${crypto.randomUUID().replaceAll('-', '')}` } }))
    g = await startGateway({ env: { ...NO_LIMITS, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url } })
  })
  afterAll(async () => {
    await g.stop()
    await up.stop()
  })

  test('a thread of three 2 MiB turns continues: the upstream gets the whole history, whole and with its length', async () => {
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const turn = (i: number) => `turn ${i} ` + 'é'.repeat(1024 * 1024)
    let prev: string | undefined
    for (let i = 0; i < 3; i++) prev = (await openai.responses.create({ model: 'gpt-4o', input: turn(i), ...(prev ? { previous_response_id: prev } : {}) })).id
    const r = await openai.responses.create({ model: 'gpt-4o', input: 'and now?', previous_response_id: prev })
    expect(r.status).toBe('completed')
    const sent = up.requests.at(-1)!
    expect(Number(sent.headers['content-length'])).toBe(Buffer.byteLength(sent.body))
    const body = sent.json()
    const texts = (body.input as { content: unknown }[]).map((it) => (typeof it.content === 'string' ? it.content : JSON.stringify(it.content)))
    for (let i = 0; i < 3; i++) expect(texts).toContain(turn(i))
    expect(texts.at(-1)).toBe('and now?')
    expect(body.store).toBe(false)
  }, 30_000)
})
