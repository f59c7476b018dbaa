// Claude models through the messages surface: the pass-through path. The validated body
// goes to the fake Anthropic upstream as is and its recorded bytes come back as they were,
// with a tap that reads id, usage and stop reason for the record; driven by @anthropic-ai/sdk.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { fromAnthropicSse } from '../chat/e2e-helpers.ts'
import { messageFrames, startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }]

describe('claude model, non-streaming pass-through', () => {
  for (const name of ['nonstream-text', 'nonstream-tool-use-sdk', 'nonstream-thinking', 'nonstream-cache-read-and-write']) {
    test(`${name}: the recorded reply reaches the SDK unchanged and is recorded with its id and usage`, async () => {
      const want = fixtureJson(`anthropic/messages/${name}.json`)
      rig.up.script({ json: fixture(`anthropic/messages/${name}.json`) })
      const r = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
      expect(r).toEqual(want)
      const up = rig.up.requests.at(-1)!
      expect(up.path).toBe('/v1/messages')
      expect(up.json()).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
      const g = await rig.generation(r.id)
      expect(g.endpoint).toBe('anthropic.messages')
      expect(g.stream).toBe(false)
      expect(g.finish_reason).toBe(want.stop_reason)
      // Anthropic's input_tokens excludes the cache buckets; the record keeps them apart
      expect(g.usage.cache_read_input_tokens).toBe(want.usage.cache_read_input_tokens ?? 0)
      expect(g.usage.cache_creation_input_tokens).toBe(want.usage.cache_creation_input_tokens ?? 0)
      expect(g.usage.completion_tokens).toBe(want.usage.output_tokens)
    })
  }
})

// the Anthropic SDK reads `request-id` (the name Anthropic sends), not `x-request-id`
test("the Anthropic SDK sees the request's id: the reply's _request_id and an error's requestID", async () => {
  rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
  const r = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
  expect(r._request_id).toBeTruthy()
  const err = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', messages: ask } as any).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.requestID).toBe(err.headers.get('x-request-id'))
})

describe('claude model, streaming pass-through', () => {
  for (const name of ['stream-text', 'stream-tool-use-with-request', 'stream-thinking', 'stream-cache-read']) {
    test(`${name}: bytes relayed as recorded; the SDK's stream helper builds the message; record from the tap`, async () => {
      const sse = fixture(`anthropic/messages/${name}.sse`)
      const want = fromAnthropicSse(sse)
      rig.up.script({ sse })
      const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 1024, stream: true, messages: ask })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/event-stream')
      expect(await res.text()).toBe(sse)

      rig.up.script({ sse })
      const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask }).finalMessage()
      expect(final.id).toBe(want.id)
      expect(final.content.filter((b) => b.type === 'text').map((b: any) => b.text).join('')).toBe(want.text)
      const g = await rig.generation(final.id)
      expect(g.endpoint).toBe('anthropic.messages')
      expect(g.stream).toBe(true)
      expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
      expect(g.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
      expect(g.usage.cache_read_input_tokens).toBe(want.usage.cached_tokens)
    })
  }

  test('thinking signatures arrive byte for byte', async () => {
    const sse = fixture('anthropic/messages/stream-thinking.sse')
    rig.up.script({ sse })
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: ask }).finalMessage()
    const thinking = final.content.find((b) => b.type === 'thinking') as any
    const sigs = messageFrames(sse).filter((f) => f.data.delta?.type === 'signature_delta').map((f) => f.data.delta.signature).join('')
    expect(thinking.signature).toBe(sigs)
  })
})

describe('server tools pass through', () => {
  test('server_tool_use (input streamed as input_json_delta) and its result block reach the SDK, streamed and as JSON', async () => {
    const sse = fixture('anthropic/messages/stream-web-search.handwritten.sse')
    rig.up.script({ sse })
    const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools }).finalMessage()
    expect(final.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text'])
    expect((final.content[0] as any).input).toEqual({ query: 'weather in Paris today' })
    expect((final.content[1] as any).tool_use_id).toBe('srvtoolu_01HandwrittenA')
    expect(rig.up.requests.at(-1)!.json().tools).toEqual(tools)
    const g = await rig.generation(final.id)
    expect(g.usage.completion_tokens).toBe(41)

    rig.up.script({ json: JSON.stringify(final) })
    const plain = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools })
    expect(plain.content).toEqual(final.content)
  })
})

describe('gateway parameters a Claude upstream does not take are spelled in its own terms', () => {
  const add = { name: 'add', input_schema: { type: 'object' as const, properties: { a: { type: 'number' }, b: { type: 'number' } } } }
  const twoCalls = () => {
    const m = fixtureJson('anthropic/messages/nonstream-tool-use-sdk.json')
    m.content.push({ ...m.content[0], id: 'toolu_second' })
    return m
  }

  test('pause_on_call_tools_start: the reply stops at the first tool_use; the parameter never goes upstream', async () => {
    rig.up.script({ json: twoCalls() })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 500, tools: [add], pause_on_call_tools_start: true, messages: ask })
    expect(res.status).toBe(200)
    const m = await res.json()
    expect(m.content.map((b: any) => b.id)).toEqual(['toolu_018oomXF9jsqQiLqv1VatVRr'])
    expect(m.stop_reason).toBe('tool_use')
    expect(rig.up.requests.at(-1)!.json().pause_on_call_tools_start).toBeUndefined()
  })

  test('parallel_tool_calls: false → tool_choice.disable_parallel_tool_use upstream', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-tool-use-sdk.json') })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 500, tools: [add], parallel_tool_calls: false, messages: ask })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.parallel_tool_calls).toBeUndefined()
    expect(sent.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    const m = await res.json()
    expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'add', input: { a: 1, b: 2 } })
  })

  test("the gateway's own parameters keep the pass-through: citations, search results and a server tool's history reach Claude as they came", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const doc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The sky is blue.' }, title: 'Sky', context: 'a note', citations: { enabled: true } }
    const found = { type: 'search_result', source: 'https://ex.com', title: 'SR', content: [{ type: 'text', text: 'alpha' }], citations: { enabled: true } }
    const history = [
      { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'weather' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [] },
      { type: 'text', text: 'Sunny', citations: [{ type: 'char_location', cited_text: 'x', document_index: 0, document_title: 'Sky', start_char_index: 0, end_char_index: 1 }] },
    ]
    const messages = [
      { role: 'user', content: [doc, found, { type: 'text', text: 'What colour is the sky?' }] },
      { role: 'assistant', content: history },
      { role: 'user', content: 'And tomorrow?' },
    ]
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 500, tools: [add], parallel_tool_calls: false, reasoning_effort: 'low', temperature: 0.5, messages })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.messages).toEqual(messages)
    expect(sent.parallel_tool_calls).toBeUndefined()
    expect(sent.reasoning_effort).toBeUndefined()
    // the effort is a budget for this model, with room kept for the answer; thinking forbids temperature, named
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
    expect(sent.max_tokens).toBe(2548)
    expect(sent.temperature).toBeUndefined()
    expect(sent.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    expect(res.headers.get('x-switchyard-compat')).toContain('temperature')
  })

  test('reasoning_effort on a tool loop turn whose thinking was not sent back goes without thinking, as Anthropic requires', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const messages = [
      { role: 'user', content: 'add 1 and 2' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3' }] },
    ]
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 1000, tools: [add], reasoning_effort: 'high', messages })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.thinking).toBeUndefined()
    expect(sent.max_tokens).toBe(1000)
    // a model that thinks adaptively keeps its effort, which needs no thinking block
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.postMessages({ model: 'claude-opus-4-7', max_tokens: 1000, tools: [add], reasoning_effort: 'high', messages })
    const adaptive = rig.up.requests.at(-1)!.json()
    expect(adaptive.thinking).toBeUndefined()
    expect(adaptive.output_config).toEqual({ effort: 'high' })
  })

  test('reasoning_effort on a prefill (the last turn the assistant\'s, for Claude to write on from) goes without thinking, which Claude refuses beside one', async () => {
    for (const prefill of ['{"colour":', [{ type: 'text', text: '{"colour":' }]]) {
      rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
      const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 1000, reasoning_effort: 'high', messages: [{ role: 'user', content: 'A colour as JSON' }, { role: 'assistant', content: prefill }] })
      expect(res.status).toBe(200)
      const sent = rig.up.requests.at(-1)!.json()
      expect(sent.thinking).toBeUndefined()
      expect(sent.messages.at(-1).content).toEqual(prefill)
    }
  })

  test("reasoning_effort beside the client's own thinking budget goes unused, and is named", async () => {
    const messages = [{ role: 'user', content: 'think' }]
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const budget = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2000 }, reasoning_effort: 'low', messages })
    expect(rig.up.requests.at(-1)!.json()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2000 }, max_tokens: 3000 })
    expect(budget.headers.get('x-switchyard-compat')).toBe('reasoning_effort')
    // adaptive thinking takes it as its depth, unless output_config names one
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const depth = await rig.postMessages({ model: 'claude-opus-4-7', max_tokens: 3000, thinking: { type: 'adaptive' }, reasoning_effort: 'low', messages })
    expect(rig.up.requests.at(-1)!.json().output_config).toEqual({ effort: 'low' })
    expect(depth.headers.get('x-switchyard-compat')).toBeNull()
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const named = await rig.postMessages({ model: 'claude-opus-4-7', max_tokens: 3000, thinking: { type: 'adaptive' }, output_config: { effort: 'max' }, reasoning_effort: 'low', messages })
    expect(rig.up.requests.at(-1)!.json().output_config).toEqual({ effort: 'max' })
    expect(named.headers.get('x-switchyard-compat')).toBe('reasoning_effort')
  })
})

describe('failures on the pass-through path', () => {
  const events = fixture('anthropic/messages/stream-text.sse').split('\n\n')
  // the message's opening: message_start, an empty text block's start, a ping
  const opening = events.slice(0, 3).join('\n\n') + '\n\n'
  // and the reply's first text
  const start = events.slice(0, 4).join('\n\n') + '\n\n'

  test('an upstream error event mid-stream is relayed in band and ends the stream: no message_stop after it', async () => {
    rig.up.script({ sse: start + fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    const frames = messageFrames(await res.text())
    expect(frames.at(-1)!.event).toBe('error')
    expect(frames.at(-1)!.data.error.type).toBe('overloaded_error')
    expect(frames.filter((f) => f.event === 'error')).toHaveLength(1)
    expect(frames.some((f) => f.event === 'message_stop' || f.event === 'message_delta')).toBe(false)
    const id = frames[0]!.data.message.id
    const g = await rig.generation(id)
    expect(g.finish_reason).toBeNull()
  })

  test('an error as the FIRST event is an ordinary status, and retried (commit late)', async () => {
    const n = rig.up.requests.length
    rig.up.script({ sse: fixture('anthropic/messages/stream-error-overloaded-event.sse') }, { sse: fixture('anthropic/messages/stream-text.sse') })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(fixture('anthropic/messages/stream-text.sse'))
    expect(rig.up.requests.length - n).toBe(2)

    rig.up.script({ sse: fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const failed = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(failed.status).toBe(503)
    expect((await failed.json()).error).toContain('Overloaded')
  })

  test('an error right after the opening (the message begun, an empty block, a ping) is an ordinary status, retried: the client sees only the answer that served', async () => {
    const n = rig.up.requests.length
    const overloaded = opening + fixture('anthropic/messages/stream-error-overloaded-event.sse')
    rig.up.script({ sse: overloaded }, { sse: fixture('anthropic/messages/stream-text.sse') })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(fixture('anthropic/messages/stream-text.sse'))
    expect(rig.up.requests.length - n).toBe(2)

    rig.up.script({ sse: overloaded })
    const failed = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(failed.status).toBe(503)
    expect((await failed.json()).error).toContain('Overloaded')
  })

  test('a cut right after the opening commits it: the upstream took the request, so the stream begins, fails in band, and its prompt is billed', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse'), dropAfterEvents: 2 })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    const frames = messageFrames(await res.text())
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'error'])
    const g = await rig.generation(frames[0]!.data.message.id)
    expect(g.usage.prompt_tokens).toBe(27)
  })

  test('an upstream that pings on after the opening is held no further than 64 KiB: the stream commits, and the client has its status while the upstream still pings', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    const enc = new TextEncoder()
    const ping = 'event: ping\ndata: {"type": "ping"}\n\n'
    rig.up.script(
      () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(enc.encode(opening))
              // 100 KiB of pings, then nothing until the client has its status
              for (let i = 0; i < 100; i++) c.enqueue(enc.encode(ping.repeat(Math.ceil(1024 / ping.length))))
              void released.then(() => {
                c.enqueue(enc.encode(events.slice(3).join('\n\n')))
                c.close()
              })
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    )
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    release()
    const frames = messageFrames(await res.text())
    expect(frames[0]!.event).toBe('message_start')
    expect(frames.at(-1)!.event).toBe('message_stop')
  }, 10_000)

  test("a last event the upstream ends without its blank line gets one: the SDK's stream helper needs message_stop", async () => {
    // this recording ends so: `data: {"type":"message_stop"}` and the connection's close
    const sse = fixture('anthropic/messages/stream-tool-use.sse')
    expect(sse.endsWith('}')).toBe(true)
    rig.up.script({ sse })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(await res.text()).toBe(sse + '\n\n')
    rig.up.script({ sse })
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: ask }).finalMessage()
    expect(final.stop_reason).toBe('tool_use')
  })

  test('a 200 that is a JSON error body, not an event stream, is an ordinary status naming what it said, and retried', async () => {
    const n = rig.up.requests.length
    const notSse = { headers: { 'content-type': 'application/json' }, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }
    rig.up.script(notSse, { sse: fixture('anthropic/messages/stream-text.sse') })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(res.status).toBe(200)
    expect(rig.up.requests.length - n).toBe(2)
    await res.text()
    rig.up.script(notSse)
    const failed = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: ask })
    expect(failed.status).toBe(502)
    expect((await failed.json()).error).toContain('not an event stream: Overloaded')
  })

  test('an upstream 429 keeps its Retry-After', async () => {
    rig.up.script({ status: 429, headers: { 'retry-after': '30' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: ask })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('30')
  })
})

describe('headers and Claude Code request shapes', () => {
  test('beta tokens from the header (both spellings) and the body betas go upstream as anthropic-beta; body betas never reach the body', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await rig.postMessages(
      { model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask, betas: ['effort-2025-11-24'] },
      { path: '/api/beta/v1/messages?beta=true', headers: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14', 'beta-beta': 'context-management-2025-06-27' } },
    )
    expect(res.status).toBe(200)
    const up = rig.up.requests.at(-1)!
    expect(up.headers['anthropic-beta']!.split(',').sort()).toEqual(['claude-code-20250219', 'context-management-2025-06-27', 'effort-2025-11-24', 'interleaved-thinking-2025-05-14'])
    expect(up.json().betas).toBeUndefined()
    expect(up.headers['x-api-key']).not.toBe(rig.gw.key)
  })

  test('every beta the installed SDK declares and those Claude Code sends pass through the SDK to the upstream; an oversized or malformed anthropic-beta is a 400 naming the header', async () => {
    const declared = readFileSync(join(import.meta.dir, '../../node_modules/@anthropic-ai/sdk/resources/beta/beta.d.ts'), 'utf8')
    const union = /export type AnthropicBeta = ([^;]*);/.exec(declared)![1]!
    const sdk = [...union.matchAll(/'([^']+)'/g)].map((m) => m[1]!)
    expect(sdk.length).toBeGreaterThan(20)
    const claudeCode = ['claude-code-20250219', 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14', 'fine-grained-tool-streaming-2025-05-14', 'context-1m-2025-08-07', 'context-management-2025-06-27', 'structured-outputs-2025-11-13', 'web-search-2025-03-05', 'tool-search-tool-2025-10-19', 'advanced-tool-use-2025-11-20', 'effort-2025-11-24', 'prompt-caching-scope-2026-01-05', 'redact-thinking-2026-02-12']
    const all = [...new Set([...sdk, ...claudeCode])]
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.anthropic.beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask, betas: all })
    expect(rig.up.requests.at(-1)!.headers['anthropic-beta']!.split(',').sort()).toEqual(all.sort())
    const refused: Record<string, string>[] = [
      { 'anthropic-beta': 'a'.repeat(101) },
      { 'anthropic-beta': 'files-api-2025-04-14, bad token' },
      { 'anthropic-beta': 'x;y' },
      { 'anthropic-beta': Array.from({ length: 200 }, (_, i) => `b${i}`).join(',') },
      { 'anthropic-beta': Array.from({ length: 100 }, (_, i) => `${'t'.repeat(60)}-${i}`).join(',') },
      { 'beta-beta': 'ok,' + 'é' },
    ]
    for (const headers of refused) {
      const before = rig.up.requests.length
      const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask }, { headers })
      expect(res.status).toBe(400)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      // answered as a bad anthropic-version is (the test below)
      expect((await res.json()).error).toContain(Object.keys(headers)[0]!)
      expect(rig.up.requests.length).toBe(before)
    }
    const bodyBetas = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask, betas: ['fine', 'not fine'] })
    expect(bodyBetas.status).toBe(400)
    expect((await bodyBetas.json()).error).toContain('betas')
  })

  test('any anthropic-version date is accepted (2026-10-21 from SDK 1.x, 2023-06-01 from Claude Code); a non-date is a 400 naming the header', async () => {
    for (const v of ['2026-10-21', '2023-06-01']) {
      rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
      expect((await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask }, { headers: { 'anthropic-version': v } })).status).toBe(200)
    }
    const bad = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask }, { headers: { 'anthropic-version': 'latest' } })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toContain('anthropic-version')
  })

  test("Claude Code's body (role system after the user turn, adaptive thinking, context_management, output_config, defer_loading tools, metadata.user_id as a JSON string) passes through unchanged", async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      stream: true,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
      metadata: { user_id: JSON.stringify({ device_id: 'd', account_uuid: 'a', session_id: 's' }) },
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330.fc3; cc_entrypoint=sdk-cli;' },
        { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
      ],
      tools: [
        { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
        { name: 'DeferredToolPlaceholder', description: 'later', input_schema: { type: 'object', properties: {} }, defer_loading: true },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'system', content: [{ type: 'text', text: '<env>linux</env>', cache_control: { type: 'ephemeral' } }] },
      ],
    }
    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const res = await rig.postMessages(body, { path: '/api/beta/v1/messages?beta=true' })
    expect(res.status).toBe(200)
    await res.text()
    expect(rig.up.requests.at(-1)!.json()).toEqual(body)
  })

  test('the unified /api/v1/messages route answers the same, with Bearer', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await fetch(`${rig.gw.url}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: ask }),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(fixtureJson('anthropic/messages/nonstream-text.json'))
  })
})

describe('count_tokens', () => {
  test("Claude models: the upstream's own count, with the Claude Code path ?beta=true", async () => {
    rig.up.script({ json: { input_tokens: 4242 } })
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5', messages: ask, tools: [{ name: 'Bash', input_schema: { type: 'object' } }] }, { path: '/api/beta/v1/messages/count_tokens?beta=true' })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ input_tokens: 4242 })
    const up = rig.up.requests.at(-1)!
    expect(up.path).toBe('/v1/messages/count_tokens')
    expect(up.json().max_tokens).toBeUndefined()
    expect(up.json().tools[0].name).toBe('Bash')
  })

  test('GPT models: counted by the tokenizer, through the SDK', async () => {
    const r = await rig.anthropic.messages.countTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello world' }] })
    expect(r.input_tokens).toBe(2)
    const more = await rig.anthropic.messages.countTokens({ model: 'gpt-4o-mini', system: 'You are terse.', messages: [{ role: 'user', content: 'hello world' }] })
    expect(more.input_tokens).toBeGreaterThan(2)
  })

  test('bad bodies are 400s naming the field', async () => {
    const res = await rig.postMessages({ model: 'claude-sonnet-4-5' }, { path: '/api/beta/v1/messages/count_tokens' })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toContain('messages')
  })
})
