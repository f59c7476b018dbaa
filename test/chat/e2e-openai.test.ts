// GPT models through the chat surface: the pass-through path in front of a fake OpenAI
// upstream replaying recorded traffic, driven by the official `openai` SDK.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { chatFrames, fromOpenAISse, startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'What is the capital of the UK?' }]

describe('gpt model, non-streaming (chat.completions.create)', () => {
  for (const name of ['nonstream-text', 'nonstream-tool-calls', 'nonstream-tool-calls-sdk', 'nonstream-reasoning-tokens']) {
    test(`${name}: the client gets the text, tool calls, finish reason and usage the provider produced`, async () => {
      const rec = fixtureJson(`openai/chat/${name}.json`)
      rig.up.script({ json: fixture(`openai/chat/${name}.json`) })
      const model = name.includes('reasoning') ? 'o3-mini' : 'gpt-4o'
      const r = await rig.client.chat.completions.create({ model, messages: ask, prompt_cache_key: 'tenant-a' } as any)
      expect(r.id).toBe(rec.id)
      expect(r.choices[0]!.message.content).toBe(rec.choices[0].message.content)
      expect(r.choices[0]!.message.tool_calls).toEqual(rec.choices[0].message.tool_calls)
      expect(r.choices[0]!.finish_reason).toBe(rec.choices[0].finish_reason)
      expect(r.usage).toEqual(rec.usage)
      // prompt-cache scoping is internal: never forwarded; the model goes up as the upstream id
      const sent = rig.up.requests.at(-1)!.json()
      expect(sent.prompt_cache_key).toBeUndefined()
      expect(sent.model).toBe(model)
      const g = await rig.generation(r.id)
      expect(g.endpoint).toBe('openai.chat.completions')
      expect(g.stream).toBe(false)
      expect(g.finish_reason).toBe(rec.choices[0].finish_reason)
      expect(g.usage.prompt_tokens).toBe(rec.usage.prompt_tokens)
      expect(g.usage.completion_tokens).toBe(rec.usage.completion_tokens)
      expect(g.usage.cache_read_input_tokens).toBe(rec.usage.prompt_tokens_details.cached_tokens)
    })
  }
})

test("a conversation begun with a Claude model goes on with a GPT one: the thinking its assistant turns carry, which OpenAI's schema refuses, stays behind", async () => {
  rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
  const messages = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b', reasoning_content: 'thought', thinking_blocks: [{ type: 'thinking', thinking: 'thought', signature: 'sig' }] },
    { role: 'user', content: 'c' },
  ]
  await rig.client.chat.completions.create({ model: 'gpt-4o', messages } as any)
  expect(rig.up.requests.at(-1)!.json().messages).toEqual([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }])
})

describe('gpt model, streaming', () => {
  test('include_usage: every text delta, the finish and the usage chunk before [DONE]', async () => {
    const sse = fixture('openai/chat/stream-text-include-usage.sse')
    const want = fromOpenAISse(sse)
    rig.up.script({ sse })
    const stream = await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true, stream_options: { include_usage: true } })
    let text = ''
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | undefined | null
    let ids = new Set<string>()
    for await (const c of stream) {
      ids.add(c.id)
      text += c.choices[0]?.delta.content ?? ''
      finish = c.choices[0]?.finish_reason ?? finish
      if (c.usage) usage = c.usage
    }
    expect(text).toBe(want.text)
    expect(finish).toBe('stop')
    expect(usage!.prompt_tokens).toBe(want.usage.prompt_tokens)
    expect(usage!.completion_tokens).toBe(want.usage.completion_tokens)
    expect([...ids]).toEqual([want.id])
    const g = await rig.generation(want.id)
    expect(g.stream).toBe(true)
    expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
  })

  test('without include_usage the client never sees usage, yet the record has it', async () => {
    const sse = fixture('openai/chat/stream-text-include-usage.sse')
    const want = fromOpenAISse(sse)
    rig.up.script({ sse })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    expect(res.headers.get('content-type')).toStartWith('text/event-stream')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const body = await res.text()
    expect(body).not.toContain('usage')
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(rig.up.requests.at(-1)!.json().stream_options).toEqual({ include_usage: true })
    const g = await rig.generation(want.id)
    expect(g.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
    expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
  })

  test('an upstream that sends no usage at all (include_usage ignored) is billed on the estimate, never recorded as free', async () => {
    const recorded = fixture('openai/chat/stream-text-include-usage.sse')
    const want = fromOpenAISse(recorded)
    const sse = recorded.split('\n\n').filter((e) => !e.includes('"usage":{')).join('\n\n')
    expect(sse).not.toContain('prompt_tokens')
    rig.up.script({ sse })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    expect((await res.text()).endsWith('data: [DONE]\n\n')).toBe(true)
    const g = await rig.generation(want.id)
    expect(g.finish_reason).toBe('stop')
    // the o200k count of the prompt sent (this test's, not the recording's) and of the text relayed
    expect(g.usage.prompt_tokens).toBeGreaterThan(0)
    expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(want.usage.completion_tokens - 2)
    expect(g.usage.counted_by_gateway).toBe(true)
    expect(g.cost).toBeGreaterThan(0)

    // a JSON reply without usage: its output is counted from the text it holds, not its whole body
    const json = fixtureJson('openai/chat/nonstream-text.json')
    const { usage: _, ...bare } = json
    rig.up.script({ json: bare })
    const r = await rig.post({ model: 'gpt-4o-mini', messages: ask })
    expect(r.status).toBe(200)
    const j = await rig.generation(json.id)
    expect(j.usage.counted_by_gateway).toBe(true)
    expect(j.usage.prompt_tokens).toBeGreaterThan(0)
    expect(j.usage.completion_tokens).toBeGreaterThan(0)
    expect(j.usage.completion_tokens).toBeLessThanOrEqual(json.usage.completion_tokens + 2)
  })

  test('lines ended by CR alone, or by CRLF, cut anywhere between reads: the same stream and record as LF', async () => {
    // SSE allows all three line ends; a CR at the end of a read may be a CRLF's first half
    const recorded = fixture('openai/chat/stream-text-include-usage.sse')
    const want = fromOpenAISse(recorded)
    for (const end of ['\r', '\r\n']) {
      const bytes = new TextEncoder().encode(recorded.replaceAll('\n', end))
      rig.up.script(() => new Response(new ReadableStream({
        start(c) {
          for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.slice(i, i + 7))
          c.close()
        },
      }), { headers: { 'content-type': 'text/event-stream' } }))
      const stream = await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true, stream_options: { include_usage: true } })
      let text = ''
      let usage: unknown
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? ''
        if (chunk.usage) usage = chunk.usage
      }
      expect(text).toBe(want.text)
      expect(usage).toMatchObject({ prompt_tokens: want.usage.prompt_tokens, completion_tokens: want.usage.completion_tokens })
      const g = await rig.generation(want.id)
      expect(g.finish_reason).toBe('stop')
      expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
    }
  })

  test('cached tokens and finish length come through (stream-cached-tokens-length)', async () => {
    const sse = fixture('openai/chat/stream-cached-tokens-length.sse')
    const want = fromOpenAISse(sse)
    rig.up.script({ sse })
    const stream = await rig.client.chat.completions.create({ model: 'gpt-4o', messages: ask, stream: true, stream_options: { include_usage: true }, max_tokens: 100 })
    let last: OpenAI.ChatCompletionChunk | undefined
    let finish: string | null = null
    for await (const c of stream) {
      last = c
      finish = c.choices[0]?.finish_reason ?? finish
    }
    expect(finish).toBe('length')
    expect(last!.choices).toEqual([])
    expect(last!.usage!.prompt_tokens_details!.cached_tokens).toBe(want.usage.cached_tokens)
    const g = await rig.generation(want.id)
    expect(g.usage.cache_read_input_tokens).toBe(want.usage.cached_tokens)
    expect(g.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
  })

  test('parallel tool calls: stream(...).finalChatCompletion() has both calls with their arguments', async () => {
    const sse = fixture('openai/chat/stream-parallel-tool-calls.sse')
    const want = fromOpenAISse(sse)
    rig.up.script({ sse })
    const tools: OpenAI.ChatCompletionTool[] = want.toolCalls.map((t) => ({ type: 'function', function: { name: t.name, parameters: { type: 'object' } } }))
    const final = await rig.client.chat.completions.stream({ model: 'gpt-4o', messages: ask, tools }).finalChatCompletion()
    const calls = final.choices[0]!.message.tool_calls!.map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))
    expect(calls).toEqual(want.toolCalls)
    expect(want.toolCalls.length).toBe(2)
    expect(final.choices[0]!.finish_reason).toBe('tool_calls')
  })

  test('single tool call and tool call after tool results stream as recorded', async () => {
    for (const name of ['stream-tool-call-single', 'stream-tool-call-after-tool-results']) {
      const sse = fixture(`openai/chat/${name}.sse`)
      rig.up.script({ sse })
      const res = await rig.post({ model: 'gpt-4o', messages: ask, stream: true, stream_options: { include_usage: true } })
      expect(await res.text()).toBe(sse)
    }
  })

  test('chunks are relayed as they arrive, not buffered: the client reads while the upstream still holds the stream open', async () => {
    rig.up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n', hold: true })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    let got = ''
    while (chatFrames(got).length < 3) got += dec.decode((await reader.read()).value)
    expect(chatFrames(got).map((f) => JSON.parse(f).choices[0].delta.content)).toEqual(['', 'The', ' capital'])
    await reader.cancel()
    // the gateway hangs up on the upstream when the client goes away
    await Promise.race([rig.up.requests.at(-1)!.closed, Bun.sleep(2000).then(() => Promise.reject(new Error('upstream was not aborted')))])
  })

  test('a client that disconnects mid-stream is billed for what was relayed', async () => {
    // a fresh id: the recording's own id was already recorded by the tests above
    const sse = fixture('openai/chat/stream-text-include-usage.sse').replaceAll('chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc', 'chatcmpl-disconnect-14')
    rig.up.script({ sse: sse.split('\n\n').slice(0, 3).join('\n\n') + '\n\n', hold: true })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes(' capital')) seen += new TextDecoder().decode((await reader.read()).value)
    const id = JSON.parse(chatFrames(seen)[0]!).id
    await reader.cancel()
    await rig.up.requests.at(-1)!.closed
    let g: any
    for (let i = 0; i < 50 && !g; i++) g = await rig.generation(id).catch(() => Bun.sleep(20).then(() => undefined))
    expect(id).toBe('chatcmpl-disconnect-14')
    expect(g.id).toBe(id)
    expect(g.stream).toBe(true)
    expect(g.error).toBe('client disconnected')
    expect(g.finish_reason).toBeNull()
    // the upstream never sent its usage: the relayed text and the prompt are counted
    const { countTokens } = await import('../../src/ir/tokens.ts')
    expect(g.usage.completion_tokens).toBe(countTokens('The capital'))
    expect(g.usage.prompt_tokens).toBe(countTokens(ask[0]!.content))
    expect(g.cost).toBeGreaterThan(0)
  })

  test('a client that gives up on a JSON request before the upstream answers: the upstream call is aborted, and recorded as 499', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json'), waitMs: 5000 })
    const gone = new AbortController()
    setTimeout(() => gone.abort(), 200)
    const err = await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask }, { signal: gone.signal }).catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    await Promise.race([rig.up.requests.at(-1)!.closed, Bun.sleep(2000).then(() => Promise.reject(new Error('upstream was not aborted')))])
    // its prompt is counted in the token worker first (billed: the upstream had it), which may
    // still be loading its tables; the earlier tests' dropped streams are counted the same way,
    // so the newest record may be one of theirs
    const dropped = (g: any) => g.http_status === 499 && g.stream === false
    let found: any
    for (let i = 0; i < 250 && !found; i++) {
      const r = await fetch(`${rig.gw.url}/api/v1/generations?limit=5`, { headers: { authorization: `Bearer ${rig.gw.key}` } })
      found = ((await r.json()) as { data: any[] }).data.find(dropped)
      if (!found) await Bun.sleep(20)
    }
    expect(found).toMatchObject({ http_status: 499, error: 'client disconnected', stream: false })
    expect(found.usage.prompt_tokens).toBeGreaterThan(0)
    // the call the client left is no upstream failure (the metrics take the same status)
    expect(found.attempts.map((a: { status: number }) => a.status)).toEqual([499])
  })

  test('a mid-stream failure ends the stream without [DONE]', async () => {
    rig.up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse'), dropAfterEvents: 4 })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    expect(res.status).toBe(200)
    let body = ''
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      body += dec.decode(value)
    }
    expect(body).toContain('"content":"The"')
    expect(body).not.toContain('[DONE]')
    expect(body).not.toContain('"finish_reason":"stop"')
    // the last frame says what failed, in OpenAI's in-band error shape
    const last = JSON.parse(body.trim().split('\n\n').at(-1)!.slice('data: '.length))
    expect(last.error.code).toBe(502)
    // the reset said as the gateway says it, never the fetch client's advice ("pass verbose: true")
    expect(last.error.message).toMatch(/^upstream connection closed mid-stream/)
    expect(last.error.message).not.toContain('verbose')
    const stream = await (async () => {
      rig.up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse'), dropAfterEvents: 4 })
      return rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true })
    })()
    await expect((async () => { for await (const _ of stream); })()).rejects.toThrow(/upstream/)
  })

  test('an upstream that closes cleanly before its terminator has failed: the stream ends with an in-band 502, and the record says why', async () => {
    const sse = fixture('openai/chat/stream-text-include-usage.sse').replaceAll('chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc', 'chatcmpl-closed-early-1')
    // the first four events, then a clean end of the body: no finish, no usage, no [DONE]
    rig.up.script({ body: sse.split('\n\n').slice(0, 4).join('\n\n') + '\n\n', headers: { 'content-type': 'text/event-stream' } })
    const res = await rig.post({ model: 'gpt-4o-mini', messages: ask, stream: true })
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).toContain('"content":"The"')
    expect(body).not.toContain('[DONE]')
    const last = JSON.parse(body.trim().split('\n\n').at(-1)!.slice('data: '.length))
    expect(last.error.code).toBe(502)
    expect(last.error.message).toBe('upstream stream ended early')
    let g: any
    for (let i = 0; i < 50 && !g; i++) g = await rig.generation('chatcmpl-closed-early-1').catch(() => Bun.sleep(20).then(() => undefined))
    expect(g).toMatchObject({ stream: true, error: 'upstream stream ended early', finish_reason: null })
    // no usage came: what was relayed is counted
    expect(g.usage.completion_tokens).toBeGreaterThan(0)
  })
})

describe('gpt model, upstream errors before any output are ordinary statuses', () => {
  test('a 200 that is an HTML page or an error object is no reply: tried again, then a 502 saying what it was, never a success', async () => {
    const html = { headers: { 'content-type': 'text/html' }, body: '<html>gateway error page</html>' }
    const error = { json: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota' } } }
    for (const bad of [html, error]) {
      const n = rig.up.requests.length
      rig.up.script(bad, { json: fixture('openai/chat/nonstream-text.json') })
      const ok = await rig.post({ model: 'gpt-4o', messages: ask })
      expect(ok.status).toBe(200)
      expect(((await ok.json()) as { choices: unknown[] }).choices).toHaveLength(1)
      expect(rig.up.requests.length - n).toBe(2)
      rig.up.script(bad)
      const res = await rig.post({ model: 'gpt-4o', messages: ask })
      expect(res.status).toBe(502)
      expect(((await res.json()) as { error: string }).error).toMatch(bad === html ? /text\/html that is not a JSON reply/ : /an error with status 200: You exceeded your current quota/)
    }
  })

  test('400 from upstream keeps its message', async () => {
    rig.up.script({ status: 400, json: fixture('openai/chat/error-400-unsupported-value.json') })
    const res = await rig.post({ model: 'gpt-4o', messages: ask })
    expect(res.status).toBe(400)
    const msg = fixtureJson('openai/chat/error-400-unsupported-value.json').error.message
    expect(((await res.json()) as { error: string }).error).toContain(msg)
  })
  test('401 from upstream is the gateway\'s credentials problem, never our key in the body', async () => {
    rig.up.script({ status: 401, json: fixture('openai/chat/error-401-invalid-api-key.json') })
    const res = await rig.post({ model: 'gpt-4o', messages: ask, stream: true })
    expect(res.status).toBeGreaterThanOrEqual(500)
    const text = await res.text()
    expect(text).not.toContain('sk-upstream-openai-secret')
    expect(JSON.parse(text).error).toBeString()
  })
  test('429 passes Retry-After on', async () => {
    rig.up.script({ status: 429, headers: { 'retry-after': '7' }, json: { error: { message: 'Rate limit reached for requests', type: 'requests' } } })
    const res = await rig.post({ model: 'gpt-4o', messages: ask, stream: true })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('7')
  })
  test('a stream whose upstream fails before the first event is an ordinary status, not a 200', async () => {
    rig.up.script({ sse: 'data: {"id":"x"', dropAfterEvents: 0 })
    const res = await rig.post({ model: 'gpt-4o', messages: ask, stream: true })
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: string }).error).toBeString()
  })
})
