// responses/input_tokens: the openai SDK's responses.inputTokens.count, on either family. A
// GPT model's prompt is counted by the tokenizer (o200k, GPT's own); a Claude model with an
// upstream gets Anthropic's own count. A continued thread counts its history, and only the
// key that stored it can name it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
let other: string
const client = (key = gw.key) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
const count = (body: Record<string, unknown>, key = gw.key) =>
  fetch(`${gw.url}/api/alpha/v1/responses/input_tokens`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

beforeAll(async () => {
  up = await startFakeUpstream()
  // only Claude models have an upstream here: GPT models are the mock's, counted by the tokenizer
  gw = await startGateway({ env: { ANTHROPIC_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: up.url } })
  other = (await gw.services.keys.create({ name: 'other' })).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

describe('responses/input_tokens', () => {
  test('a GPT model: the tokenizer counts the input, the instructions and the tools', async () => {
    const r = await client().responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'hello world' })
    expect(r).toEqual({ object: 'response.input_tokens', input_tokens: 2 })
    const more = await client().responses.inputTokens.count({
      model: 'gpt-4o-mini', input: 'hello world', instructions: 'You are terse.',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }],
    })
    expect(more.input_tokens).toBeGreaterThan(r.input_tokens + 4)
  })

  test("a Claude model: Anthropic's own count, asked of the upstream", async () => {
    up.script({ json: { input_tokens: 4242 } })
    const r = await client().responses.inputTokens.count({ model: 'claude-haiku-4-5', input: 'hello world' })
    expect(r.input_tokens).toBe(4242)
    const sent = up.requests.at(-1)!
    expect(sent.path).toBe('/v1/messages/count_tokens')
    expect(JSON.stringify(sent.json().messages)).toContain('hello world')
  })

  test('a continued thread counts its history; another key cannot name it', async () => {
    const first = await client().responses.create({ model: 'mock-gpt', input: 'mock: text a long answer with several words in it' })
    const alone = await client().responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'next' })
    const after = await client().responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'next', previous_response_id: first.id })
    expect(after.input_tokens).toBeGreaterThan(alone.input_tokens + 5)
    const res = await count({ model: 'gpt-4o-mini', input: 'next', previous_response_id: first.id }, other)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toContain('previous_response_id')
  })

  test("a file named by id is read with the caller's key and counted, on both count routes; another key's id is the 400 a request gets", async () => {
    const words = Array.from({ length: 2_000 }, (_, i) => `word${i % 50}`).join(' ')
    const form = new FormData()
    form.set('purpose', 'user_data')
    form.set('file', new File([words], 'notes.txt', { type: 'text/plain' }))
    const up = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: form })
    const fileId = ((await up.json()) as { id: string }).id
    const withFile = { model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: 'read it' }, { type: 'input_file', file_id: fileId }] }] }
    const r = await count(withFile)
    expect(r.status).toBe(200)
    expect(((await r.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(2_000)
    const theirs = await count(withFile, other)
    expect(theirs.status).toBe(400)
    expect(((await theirs.json()) as { error: string }).error).toContain('no such file')
    const messages = (key: string, id: string) =>
      fetch(`${gw.url}/api/beta/v1/messages/count_tokens`, {
        method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'read it' }, { type: 'document', source: { type: 'file', file_id: id } }] }] }),
      })
    const m = await messages(gw.key, fileId)
    expect(m.status).toBe(200)
    expect(((await m.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(2_000)
    const missing = await messages(gw.key, 'file-nope')
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as { error: string }).error).toContain('no such file')
  })

  test('personality is accepted; bad bodies are 400s naming the field', async () => {
    const ok = await count({ model: 'gpt-4o-mini', input: 'hello world', personality: 'pragmatic' })
    expect(await ok.json()).toEqual({ object: 'response.input_tokens', input_tokens: 2 })
    for (const [body, field] of [[{ input: 'hi' }, 'model'], [{ model: 'gpt-4o-mini', input: 7 }, 'input'], [{ model: 'gpt-4o-mini', input: 'hi', personality: 3 }, 'personality'], [{ model: 'gpt-4o-mini', input: 'hi', bogus: 1 }, 'bogus']] as const) {
      const res = await count(body)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toContain(field)
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
  })
})
