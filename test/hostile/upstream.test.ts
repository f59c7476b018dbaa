// An upstream that misbehaves: the gateway keeps its key, its books and its clients' streams
// whatever the provider (or whatever sits at its base URL) answers.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let elsewhere: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  elsewhere = await startFakeUpstream()
  elsewhere.script({ json: { id: 'chatcmpl-elsewhere', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'from elsewhere' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } })
  gw = await startGateway({
    env: { OPENAI_API_KEY: 'sk-upstream-openai-secret', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-ant-upstream-secret', ANTHROPIC_BASE_URL: up.url },
  })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
  await elsewhere.stop()
})
afterEach(() => {
  up.requests.length = 0
  elsewhere.requests.length = 0
})

const post = (key: string, path: string, body: unknown) =>
  fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

test('a redirect is not followed: the key and the prompt never reach where it points; the client gets a 502 saying why', async () => {
  for (const status of [301, 302, 307, 308]) {
    up.script(() => new Response(null, { status, headers: { location: `${elsewhere.url}/v1/messages` } }))
    const claude = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    const err = await claude.messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'secret prompt' }] }).then(
      () => null,
      (e) => e as { status: number; error: unknown; headers: Headers },
    )
    expect(err?.status).toBe(502)
    expect(JSON.stringify(err?.error)).toContain(`answered a redirect (HTTP ${status}), which the gateway does not follow`)
    expect(JSON.stringify(err?.error)).not.toContain(elsewhere.url)
    const chat = await post(gw.key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'secret prompt' }] })
    expect(chat.status).toBe(502)
    expect(chat.headers.get('x-request-id')).toBeTruthy()
  }
  expect(elsewhere.requests.length).toBe(0)
})

test('usage no reply can have (1e308, negative) is counted by the gateway instead: the key is charged a sane cost and served on', async () => {
  const { key, record } = await gw.services.keys.create({ name: 'absurd', credits: 1 })
  const reply = (usage: string, id = 'chatcmpl-absurd') =>
    `{"id":"${id}","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":${usage}}`
  for (const [i, usage] of ['{"prompt_tokens":1e308,"completion_tokens":1e308,"total_tokens":1e308}', '{"prompt_tokens":-5,"completion_tokens":3,"total_tokens":-2}'].entries()) {
    up.script({ json: reply(usage, `chatcmpl-absurd-${i}`) })
    const r = await post(key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello there' }] })
    expect(r.status).toBe(200)
    await r.arrayBuffer()
    // the gateway's count runs in the token workers: the record follows the reply by a few ms
    let row = await gw.services.recorder.get(`chatcmpl-absurd-${i}`, record.id)
    // (a deadline generous for a busy machine: the first count waits for the token worker's tables)
    for (const until = Date.now() + 15_000; !row && Date.now() < until; ) {
      await Bun.sleep(20)
      row = await gw.services.recorder.get(`chatcmpl-absurd-${i}`, record.id)
    }
    expect(row).toBeDefined()
    // the gateway's own count of the prompt and the reply: a few tokens, marked as counted
    expect(row!.promptTokens).toBeGreaterThan(0)
    expect(row!.promptTokens).toBeLessThan(50)
    expect(row!.completionTokens).toBeLessThan(50)
    expect(row!.cost).toBeGreaterThan(0)
    expect(row!.cost!).toBeLessThan(0.001)
  }
  await gw.services.recorder.settled()
  const spent = (await gw.services.keys.get(record.id))?.spent ?? NaN
  expect(spent).toBeLessThan(0.002)
  // and the key is still served
  up.script({ json: reply('{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}') })
  expect((await post(key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] })).status).toBe(200)
})

test('a JSON reply cut short is a 502 on every pass-through surface, never a 200 the client cannot parse', async () => {
  up.script({ json: '{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hel' })
  const cases: [string, unknown][] = [
    ['/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
    ['/api/alpha/v1/responses', { model: 'gpt-4o', input: 'hi' }],
    ['/api/beta/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }],
  ]
  for (const [path, body] of cases) {
    const r = await post(gw.key, path, body)
    expect(r.status).toBe(502)
    expect(((await r.json()) as { error: string }).error).toContain('a JSON reply cut short')
  }
})

test("an error body that inflates to hundreds of MB is read only for its message", async () => {
  // an error object, 256 MiB of spaces and a stray byte at the very end, gzipped to a few hundred
  // KB: read whole, the body is not JSON (its message would be the raw text); read for its
  // message, it is the object
  const inflated = new Uint8Array(256 * 1024 * 1024).fill(0x20)
  inflated.set(new TextEncoder().encode('{"error":{"message":"busy","type":"server_error"}}'))
  inflated[inflated.length - 1] = 0x78
  const bomb = Bun.gzipSync(inflated)
  up.script(() => new Response(bomb, { status: 400, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }))
  const r = await post(gw.key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
  expect(r.status).toBe(400)
  expect(r.headers.get('x-request-id')).toBeTruthy()
  expect(await r.json()).toEqual({ error: 'busy' })
})

test('a reply that inflates past what any reply holds is not read whole: a 502 says so, on the pass-through and the translated path', async () => {
  // a chat reply padded with 130 MiB of spaces (still valid JSON): gzipped to a few hundred KB
  // with its length declared, and plain with none (chunked)
  const reply = new TextEncoder().encode('{"id":"chatcmpl-big","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}')
  const padded = new Uint8Array(130 * 1024 * 1024).fill(0x20)
  padded.set(reply)
  const bomb = Bun.gzipSync(padded)
  const chunked = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (let at = 0; at < padded.length; at += 4 * 1024 * 1024) c.enqueue(padded.subarray(at, at + 4 * 1024 * 1024))
        c.close()
      },
    })
  const gzipped = () => new Response(bomb, { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
  const plain = () => new Response(chunked(), { headers: { 'content-type': 'application/json' } })
  for (const model of ['gpt-4o', 'claude-haiku-4-5']) {
    for (const answer of [gzipped, plain]) {
      up.script(answer)
      const r = await post(gw.key, '/api/alpha/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] })
      expect(r.status).toBe(502)
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect(JSON.stringify(await r.json())).toContain('sent a reply larger than 134217728 bytes')
    }
  }
  // a reply of ordinary size, compressed or not, is read as before
  up.script(() => new Response(Bun.gzipSync(reply), { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }))
  const ok = await post(gw.key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
  expect(((await ok.json()) as any).choices[0].message.content).toBe('ok')
})

test('a stream event that never ends is cut at its bound with an in-band error, translated and passed through', async () => {
  // message_start, then one event of 70 MiB with no blank line after it, in 1 MiB reads
  const start = fixture('anthropic/messages/stream-text.sse').split('\n\n')[0] + '\n\n'
  const endless = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(start + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'))
          const mib = new Uint8Array(1024 * 1024).fill(0x61)
          for (let i = 0; i < 70; i++) c.enqueue(mib)
          c.close()
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
  for (const [path, body] of [
    ['/api/alpha/v1/chat/completions', { model: 'claude-haiku-4-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }],
    ['/api/beta/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }],
  ] as const) {
    up.script(endless)
    const r = await post(gw.key, path, body)
    expect(r.status).toBe(200)
    const text = await r.text()
    expect(text.length).toBeLessThan(1024 * 1024)
    expect(text).toContain('SSE event of more than')
  }
})

test('a GPT upstream that sends no usage, translated to messages: the client is told the gateway\'s count, as the record holds, never 0 tokens', async () => {
  const answer = 'The capital of the UK is London.'
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-nousage', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  up.script({ sse: chunk({ role: 'assistant', content: '' }) + chunk({ content: answer }) + chunk({}, 'stop') + 'data: [DONE]\n\n' })
  const claude = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
  const final = await claude.messages.stream({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'What is the capital of the UK?' }] }).finalMessage()
  expect(final.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual([answer])
  expect(final.usage.output_tokens).toBeGreaterThan(5)
  expect(final.usage.input_tokens).toBeGreaterThan(5)
  let row = await gw.services.recorder.get(final.id)
  for (const until = Date.now() + 15_000; !row && Date.now() < until; ) row = (await Bun.sleep(20), await gw.services.recorder.get(final.id))
  expect(row!.completionTokens).toBe(final.usage.output_tokens)
  expect(row!.promptTokens).toBe(final.usage.input_tokens)
  expect(Boolean(row!.usageCounted)).toBe(true)

  up.script({ json: { id: 'chatcmpl-nousage-json', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] } })
  const msg = await claude.messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'What is the capital of the UK?' }] })
  expect(msg.usage.output_tokens).toBe(final.usage.output_tokens)
  expect(msg.usage.input_tokens).toBeGreaterThan(5)
})

test("a Claude upstream that counts the prompt at its start and says 0 at its end: the start's count is the client's and the record's, not the gateway's", async () => {
  const sse = fixture('anthropic/messages/stream-text.sse').replace(/"usage":\s*\{\s*"output_tokens":\s*(\d+)\s*\}/, '"usage":{"input_tokens":0,"output_tokens":$1}')
  expect(sse).toContain('"usage":{"input_tokens":0,')
  up.script({ sse })
  const r = await post(gw.key, '/api/alpha/v1/chat/completions', { model: 'claude-haiku-4-5', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })
  const text = await r.text()
  const usage = JSON.parse(text.split('\n').filter((l) => l.includes('"usage":{')).at(-1)!.slice(6)).usage
  expect(usage.prompt_tokens).toBe(27)
  const id = JSON.parse(text.split('\n')[0]!.slice(6)).id
  let row = await gw.services.recorder.get(id)
  for (const until = Date.now() + 15_000; !row && Date.now() < until; ) row = (await Bun.sleep(20), await gw.services.recorder.get(id))
  expect(row!.promptTokens).toBe(27)
  expect(Boolean(row!.usageCounted)).toBe(false)
})

test("what an upstream sends after its stream's end is not relayed, in the same read or a later one", async () => {
  const extra = (sse: string, event: string) => sse.trimEnd() + '\n\n' + event
  const cases: [string, unknown, string, string][] = [
    ['/api/alpha/v1/chat/completions', { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }, fixture('openai/chat/stream-text-include-usage.sse'), 'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"AFTER-END"}}]}\n\n'],
    ['/api/alpha/v1/responses', { model: 'gpt-4o', stream: true, input: 'hi' }, fixture('openai/responses/stream-text.sse'), 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"AFTER-END"}\n\n'],
    ['/api/beta/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }, fixture('anthropic/messages/stream-text.sse'), 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"AFTER-END"}}\n\n'],
  ]
  for (const [path, body, sse, after] of cases) {
    const whole = extra(sse, after)
    // event by event (later reads), then all in one read
    for (const reply of [{ sse: whole }, () => new Response(whole, { headers: { 'content-type': 'text/event-stream' } })]) {
      up.script(reply as never)
      const r = await post(gw.key, path, body)
      expect(r.status).toBe(200)
      const text = await r.text()
      expect(text.length).toBeGreaterThan(100)
      expect(text).not.toContain('AFTER-END')
    }
  }
})

test("a Responses stream's error event is the failure: first, or after the opening snapshot, an ordinary status; later, with no end after it, the record says the upstream's word", async () => {
  const error = 'event: error\ndata: {"type":"error","code":"server_error","message":"boom at the upstream"}\n\n'
  const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_err1","object":"response","status":"in_progress","output":[]}}\n\n'
  for (const sse of [error, created + error]) {
    up.script({ sse })
    const first = await post(gw.key, '/api/alpha/v1/responses', { model: 'gpt-4o', stream: true, input: 'hi' })
    expect(first.status).toBeGreaterThanOrEqual(500)
    expect(((await first.json()) as { error: string }).error).toContain('boom at the upstream')
  }

  const { key, record } = await gw.services.keys.create({ name: 'error-event' })
  const added = 'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_err1","type":"message","status":"in_progress","content":[],"role":"assistant"}}\n\n'
  up.script({ sse: created + added + error })
  const later = await post(key, '/api/alpha/v1/responses', { model: 'gpt-4o', stream: true, input: 'hi' })
  expect(later.status).toBe(200)
  expect(await later.text()).toContain('boom at the upstream')
  let rows: { error: string | null }[] = []
  for (let i = 0; i < 100 && rows.length === 0; i++) {
    await gw.services.recorder.flush()
    rows = (await gw.services.storage.sql.all('SELECT error FROM generations WHERE api_key_id = ?', [record.id])) as { error: string | null }[]
    if (rows.length === 0) await Bun.sleep(20)
  }
  expect(rows.length).toBe(1)
  expect(rows[0]!.error).toContain('boom at the upstream')
})

test('a Responses stream that stalls after response.created is billed for its prompt, as a chat stream that stalls is', async () => {
  const stalling = await startGateway({
    yaml: `providers:\n  openai:\n    base_url: ${up.url}\n    api_key: sk-upstream-openai-secret\n    timeout_ms: 300\n    max_retries: 0\n`,
    env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' },
  })
  try {
    const { key, record } = await stalling.services.keys.create({ name: 'stalled', credits: 1 })
    const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_stall","object":"response","status":"in_progress","output":[]}}\n\n'
    up.script({ sse: created, hold: true })
    const r = await fetch(`${stalling.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, input: 'a prompt the upstream has read' }),
    })
    expect(r.status).toBe(200)
    expect(await r.text()).toContain('error')
    let rows: { prompt_tokens: number; cost: number | null }[] = []
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      await stalling.services.recorder.flush()
      rows = (await stalling.services.storage.sql.all('SELECT prompt_tokens, cost FROM generations WHERE api_key_id = ?', [record.id])) as typeof rows
      if (rows.length === 0) await Bun.sleep(20)
    }
    expect(rows.length).toBe(1)
    expect(rows[0]!.prompt_tokens).toBeGreaterThan(0)
    expect(rows[0]!.cost).toBeGreaterThan(0)
  } finally {
    await stalling.stop()
  }
})
