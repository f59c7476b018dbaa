// Claude-family models and the mock through the responses surface: the IR path. The
// official openai SDK drives it (create and the stream helper); a Claude model on the fake
// Anthropic upstream replays recorded Messages traffic; threads continue across families
// and survive a restart.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { sealReasoning } from '../../src/surfaces/responses/reasoning.ts'
import { frames, startResponsesRig, types, WEATHER, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
beforeAll(async () => {
  // a burst limit no test here is about: one test's quick turns leave the next its burst whole
  rig = await startResponsesRig({ SWITCHYARD_KEY_BURST_RPS: '1000' })
})
afterAll(async () => {
  await rig.stop()
})

const TOOL_PROMPT = 'mock: tool get_weather {"city":"Oslo"}'

describe('the mock, both families, with the openai SDK', () => {
  for (const model of ['mock-gpt', 'mock-claude']) {
    test(`${model}: create → output_text, usage, record`, async () => {
      const r = await rig.client.responses.create({ model, input: 'hello there', instructions: 'be brief' })
      expect(r.id).toMatch(/^resp_/)
      expect(r.object).toBe('response')
      expect(r.status).toBe('completed')
      expect(r.output_text).toBe('hello there')
      expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' })
      expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens)
      expect((r as any).reasoning.summaries).toEqual([])
      const g = await rig.generation(r.id)
      expect(g).toMatchObject({ endpoint: 'openai.responses', status: 'completed', stream: false, model })
      expect(g.usage.prompt_tokens).toBe(r.usage!.input_tokens)
    })

    test(`${model}: function-tool round trip (requires_action → tool_outputs + previous_response_id → answer)`, async () => {
      const first: any = await rig.client.responses.create({ model, input: TOOL_PROMPT, tools: [WEATHER] })
      expect(first.status).toBe('requires_action')
      const calls = first.required_action.submit_tool_outputs.tool_calls
      expect(calls).toEqual([{ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }])
      expect(first.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: calls[0].id, name: 'get_weather' })])
      const second = await rig.client.responses.create({ model, previous_response_id: first.id, tool_outputs: [{ tool_call_id: calls[0].id, output: '3°C' }], tools: [WEATHER] } as any)
      expect(second.status).toBe('completed')
      expect(second.output_text).toBe('tool result: 3°C')
      expect(second.previous_response_id).toBe(first.id)
      // `call_id` is accepted as an alias, and a function_call_output item works the same
      const third = await rig.client.responses.create({ model, previous_response_id: first.id, tool_outputs: [{ call_id: calls[0].id, output: 'sunny' }], tools: [WEATHER] } as any)
      expect(third.output_text).toBe('tool result: sunny')
      const fourth = await rig.client.responses.create({ model, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: calls[0].id, output: 'rain' }], tools: [WEATHER] })
      expect(fourth.output_text).toBe('tool result: rain')
    })

    test(`${model}: responses.stream() → finalResponse(), text and tool call`, async () => {
      const s = rig.client.responses.stream({ model, input: 'stream me please' })
      let text = ''
      for await (const e of s) if (e.type === 'response.output_text.delta') text += e.delta
      const r = await s.finalResponse()
      expect(text).toBe('stream me please')
      expect(r.output_text).toBe('stream me please')
      const t = rig.client.responses.stream({ model, input: TOOL_PROMPT, tools: [WEATHER] })
      for await (const _ of t) {}
      const tr: any = await t.finalResponse()
      expect(tr.status).toBe('requires_action')
      expect(tr.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' })
    })
  }

  test('the two families give the same event grammar and the same final object shape', async () => {
    const shape = (v: unknown): unknown => (Array.isArray(v) ? v.map(shape) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : typeof v)
    for (const input of ['same words here', TOOL_PROMPT]) {
      const runs = await Promise.all(['mock-gpt', 'mock-claude'].map(async (model) => {
        const res = await rig.postResponses({ model, input, tools: [WEATHER], stream: true })
        return frames(await res.text())
      }))
      expect(types(runs[0]!)).toEqual(types(runs[1]!))
      expect(shape(runs[0]!.at(-1)!.data.response)).toEqual(shape(runs[1]!.at(-1)!.data.response))
    }
  })

  test('the event order for a tool call: requires_action then completed; sequence numbers 0..n; items bracketed', async () => {
    const res = await rig.postResponses({ model: 'mock-gpt', input: TOOL_PROMPT, tools: [WEATHER], stream: true }, { headers: { accept: 'application/json' } })
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/)
    const fs = frames(await res.text())
    expect(types(fs)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added',
      'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done', 'response.requires_action', 'response.completed',
    ])
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
    expect(fs.every((f) => f.event === f.data.type)).toBe(true)
    expect(fs.at(-1)!.data.response.status).toBe('requires_action')
    const g = await rig.generation(fs[0]!.data.response.id)
    expect(g).toMatchObject({ status: 'requires_action', stream: true, endpoint: 'openai.responses' })
  })

  test('incomplete: max_output_tokens cuts the output → response.incomplete with incomplete_details', async () => {
    const r: any = await rig.client.responses.create({ model: 'mock-gpt', input: 'one two three four five six seven eight nine ten', max_output_tokens: 3 })
    expect(r.status).toBe('incomplete')
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
    const res = await rig.postResponses({ model: 'mock-claude', input: 'one two three four five six seven eight nine ten', max_output_tokens: 3, stream: true })
    const fs = frames(await res.text())
    expect(types(fs).at(-1)).toBe('response.incomplete')
    expect(fs.at(-1)!.data.response.incomplete_details).toEqual({ reason: 'max_output_tokens' })
  })

  test('mid-stream failure: response.error, response.failed, response.completed (status failed); recorded failed', async () => {
    const res = await rig.postResponses({ model: 'mock-claude', input: 'mock: fail-midstream\nsome words to stream', stream: true })
    expect(res.status).toBe(200)
    const fs = frames(await res.text())
    expect(types(fs).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    expect(fs.at(-1)!.data.response.status).toBe('failed')
    expect(fs.at(-1)!.data.response.output[0].type).toBe('message')
    const g = await rig.generation(fs[0]!.data.response.id)
    expect(g.status).toBe('failed')
  })

})

describe('threads', () => {
  test('previous_response_id continues a thread across families; the history reaches the model', async () => {
    const a = await rig.client.responses.create({ model: 'mock-gpt', input: 'first words' })
    const b = await rig.client.responses.create({ model: 'mock-claude', previous_response_id: a.id, input: [{ role: 'user', content: 'mock: text ok' }] })
    expect(b.output_text).toBe('ok')
    // the mock echoes the last user message: continuing b with no new input reads it from the thread
    const c = await rig.client.responses.create({ model: 'mock-gpt', previous_response_id: b.id, input: 'again' })
    expect(c.output_text).toBe('again')
    expect(c.usage!.input_tokens).toBeGreaterThan(b.usage!.input_tokens)
  })

  test('conversation: a request with only a conversation continues from its latest stored response', async () => {
    const conv = 'conv-' + crypto.randomUUID()
    const first: any = await rig.client.responses.create({ model: 'mock-gpt', conversation: conv, input: TOOL_PROMPT, tools: [WEATHER] } as any)
    const call = first.required_action.submit_tool_outputs.tool_calls[0]
    const second = await rig.client.responses.create({ model: 'mock-gpt', conversation: conv, tool_outputs: [{ tool_call_id: call.id, output: 'cloudy' }], tools: [WEATHER] } as any)
    expect(second.output_text).toBe('tool result: cloudy')
    expect(second.previous_response_id).toBe(first.id)
  })

  // two turns at once would both continue from the same latest response, and the conversation
  // would keep only one of them: the second is a 409 while the first is in progress
  test('conversation: a second turn while one is in progress is a 409; once it has ended (or was saved) the next one goes', async () => {
    const conv = 'conv-' + crypto.randomUUID()
    const events = fixture('openai/responses/stream-text.sse').split('\n\n')
    rig.up.script({ sse: events.slice(0, 3).join('\n\n') + '\n\n', hold: true })
    const first = await rig.postResponses({ model: 'gpt-4.1', conversation: conv, input: 'slow one', stream: true })
    expect(first.status).toBe(200)
    const reader = first.body!.getReader()
    await reader.read()
    const busy = await rig.postResponses({ model: 'mock-gpt', conversation: conv, input: 'at once' })
    expect(busy.status).toBe(409)
    expect((await busy.json()).error).toStartWith(`conversation: a response of conversation "${conv}" is still in progress`)
    // another conversation, or the same one unstored, is not held; counting a turn's tokens holds nothing
    expect((await rig.postResponses({ model: 'mock-gpt', conversation: conv + '-b', input: 'elsewhere' })).status).toBe(200)
    expect((await rig.postResponses({ model: 'mock-gpt', conversation: conv, input: 'unstored', store: false })).status).toBe(200)
    const count = await fetch(`${rig.gw.url}/api/alpha/v1/responses/input_tokens`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', conversation: conv + '-b', input: 'how long?' }) })
    expect(count.status).toBe(200)
    expect((await rig.postResponses({ model: 'mock-gpt', conversation: conv + '-b', input: 'after counting' })).status).toBe(200)
    // a conversation and a previous_response_id together: OpenAI's 400 (the one continues from its own latest)
    const both = await rig.postResponses({ model: 'mock-gpt', conversation: conv + '-b', previous_response_id: 'resp_x', input: 'x' })
    expect(both.status).toBe(400)
    expect((await both.json()).error).toStartWith('previous_response_id, conversation: give one of them')
    await reader.cancel()
    let after: Response | undefined
    for (let i = 0; i < 40 && (after?.status ?? 409) === 409; i++) {
      await Bun.sleep(50)
      after = await rig.postResponses({ model: 'mock-gpt', conversation: conv, input: 'after it' })
    }
    expect(after!.status).toBe(200)
    // turns one after another go at once: each is let go when it is saved, before its reply ends
    for (let i = 0; i < 5; i++) expect((await rig.postResponses({ model: 'mock-gpt', conversation: conv, input: `turn ${i}` })).status).toBe(200)
  })

  test('store:false is not stored; another key cannot continue this key\'s thread (400 naming the id)', async () => {
    const r = await rig.client.responses.create({ model: 'mock-gpt', input: 'x', store: false })
    const res = await rig.postResponses({ model: 'mock-gpt', input: 'y', previous_response_id: r.id })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toContain(`previous_response_id: no stored response "${r.id}"`)
    const mine = await rig.client.responses.create({ model: 'mock-gpt', input: 'x' })
    const other = await rig.gw.services.keys.create({ name: 'other' })
    const res2 = await rig.postResponses({ model: 'mock-gpt', input: 'y', previous_response_id: mine.id }, { key: other.key })
    expect(res2.status).toBe(400)
    expect((await res2.json()).error).toContain(mine.id)
  })

  test('a continuation sent right after a stream ends finds the thread', async () => {
    const res = await rig.postResponses({ model: 'mock-gpt', input: TOOL_PROMPT, tools: [WEATHER], stream: true })
    const fs = frames(await res.text())
    const r = fs.at(-1)!.data.response
    const next = await rig.postResponses({ model: 'mock-gpt', previous_response_id: r.id, tool_outputs: [{ tool_call_id: r.output[0].call_id, output: 'ok' }], tools: [WEATHER] })
    expect(next.status).toBe(200)
    expect((await next.json()).output_text).toBe('tool result: ok')
  })

  test('threads survive a restart', async () => {
    const dataDir = tempDir()
    const gw = await startGateway({ dataDir, logLevel: 'silent' })
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    const first: any = await client.responses.create({ model: 'mock-claude', input: TOOL_PROMPT, tools: [WEATHER] })
    await gw.stop()
    const gw2 = await startGateway({ dataDir, logLevel: 'silent' })
    try {
      const client2 = new OpenAI({ apiKey: gw.key, baseURL: `${gw2.url}/api/alpha/v1`, maxRetries: 0 })
      const callId = first.required_action.submit_tool_outputs.tool_calls[0].id
      const second = await client2.responses.create({ model: 'mock-claude', previous_response_id: first.id, tool_outputs: [{ tool_call_id: callId, output: 'after restart' }], tools: [WEATHER] } as any)
      expect(second.output_text).toBe('tool result: after restart')
    } finally {
      await gw2.stop()
      cleanup(dataDir)
    }
  })
})

describe('a Claude model on the Anthropic upstream (recorded traffic)', () => {
  test('text stream: the responses grammar around the recorded Messages stream', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const s = rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'hi' })
    for await (const _ of s) {}
    const r = await s.finalResponse()
    expect(r.output_text.length).toBeGreaterThan(0)
    const up = rig.up.requests.at(-1)!
    expect(up.path).toBe('/v1/messages')
    expect(up.json()).toMatchObject({ model: 'claude-sonnet-4-5', stream: true })
    expect(JSON.stringify(up.json().messages)).toContain('"hi"')
  })

  test('thinking: a reasoning item whose encrypted_content carries the signed thinking back to Claude byte for byte', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-thinking.sse') })
    const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'think', reasoning: { effort: 'low' }, stream: true })
    const fs = frames(await res.text())
    const final = fs.at(-1)!.data.response
    const rs = final.output.find((o: any) => o.type === 'reasoning')
    expect(rs.summary).toEqual([])
    expect(rs.encrypted_content).toMatch(/^sy1\./)
    expect(final.reasoning.summaries).toEqual([])
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.thinking).toMatchObject({ type: 'enabled' })
    // replayed as items (Codex with store:false): the thinking block goes back signed
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const again = await rig.postResponses({ model: 'claude-sonnet-4-5', reasoning: { effort: 'low' }, store: false, input: [{ role: 'user', content: 'think' }, ...final.output, { role: 'user', content: 'more' }] })
    expect(again.status).toBe(200)
    const back = rig.up.requests.at(-1)!.json()
    const thinking = back.messages[1].content.find((b: any) => b.type === 'thinking')
    const want = frames(fixture('anthropic/messages/stream-thinking.sse'))
    const sig = want.filter((f) => f.data.delta?.type === 'signature_delta').map((f) => f.data.delta.signature).join('')
    const text = want.filter((f) => f.data.delta?.type === 'thinking_delta').map((f) => f.data.delta.thinking).join('')
    expect(thinking).toEqual({ type: 'thinking', thinking: text, signature: sig })
  })

  // Codex reads input_tokens_details.cache_write_tokens (OpenAI's own field) for what it shows of cost
  test("a Claude reply's cache reads and writes both show in input_tokens_details; input_tokens counts them all", async () => {
    const want = JSON.parse(fixture('anthropic/messages/nonstream-cache-read-and-write.json')).usage
    rig.up.script({ json: fixture('anthropic/messages/nonstream-cache-read-and-write.json') })
    const r = await (await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'hi' })).json()
    expect(r.usage.input_tokens_details).toEqual({ cached_tokens: want.cache_read_input_tokens, cache_write_tokens: want.cache_creation_input_tokens })
    expect(r.usage.input_tokens).toBe(want.input_tokens + want.cache_read_input_tokens + want.cache_creation_input_tokens)
  })

  test("a thinking turn's parallel calls sent back interleaved with their outputs stay one Claude turn, its thinking first", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const thought = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: sealReasoning({ type: 'reasoning', text: 'two cities', signature: 'sig-1' }) }
    const call = (id: string, city: string) => ({ type: 'function_call', call_id: id, name: 'get_weather', arguments: JSON.stringify({ city }) })
    const output = (id: string, text: string) => ({ type: 'function_call_output', call_id: id, output: text })
    const res = await rig.postResponses({
      model: 'claude-sonnet-4-5', reasoning: { effort: 'low' }, store: false, tools: [WEATHER],
      input: [{ role: 'user', content: 'Oslo and Bergen?' }, thought, call('toolu_a', 'Oslo'), output('toolu_a', 'rain'), call('toolu_b', 'Bergen'), output('toolu_b', 'sun')],
    })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.thinking).toMatchObject({ type: 'enabled' })
    expect(sent.messages.map((m: any) => [m.role, m.content.map((b: any) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['thinking', 'tool_use', 'tool_use']],
      ['user', ['tool_result', 'tool_result']],
    ])
    expect(sent.messages[2].content.map((b: any) => [b.tool_use_id, b.content])).toEqual([['toolu_a', 'rain'], ['toolu_b', 'sun']])
  })

  // the AI SDK with store on sends a stored reply's reasoning and text as item_reference
  test("item_reference to a stored reply's items: the items themselves reach Claude, signed thinking included, streamed or not", async () => {
    for (const stream of [false, true]) {
      if (stream) rig.up.script({ sse: fixture('anthropic/messages/stream-thinking.sse') })
      else rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
      const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'think', reasoning: { effort: 'low' }, stream })
      const first = stream ? frames(await res.text()).at(-1)!.data.response : await res.json()
      const [rs, msg] = first.output
      expect([rs.type, msg.type]).toEqual(['reasoning', 'message'])
      rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
      const again = await rig.postResponses({
        model: 'claude-sonnet-4-5', reasoning: { effort: 'low' },
        input: [{ role: 'user', content: 'think' }, { type: 'item_reference', id: rs.id }, { type: 'item_reference', id: msg.id }, { role: 'user', content: 'more' }],
      })
      expect(again.status).toBe(200)
      const sent = rig.up.requests.at(-1)!.json().messages
      expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user'])
      expect(sent[1].content.map((b: any) => b.type)).toEqual(['thinking', 'text'])
      expect(sent[1].content[0].signature).toBeTruthy()
      expect(sent[1].content[1].text).toBe(msg.content[0].text)
      // a GPT model on OpenAI's Responses API: the text goes as an item without the gateway's id (OpenAI's store
      // would look it up), the thinking sealed for Claude stays behind
      rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
      const gpt = await rig.postResponses({ model: 'gpt-5.2', input: [{ role: 'user', content: 'think' }, { type: 'item_reference', id: rs.id }, { type: 'item_reference', id: msg.id }, { role: 'user', content: 'more' }] })
      expect(gpt.status).toBe(200)
      const up = rig.up.requests.at(-1)!
      expect(up.path).toEndWith('/responses')
      expect(up.json().input).toEqual([{ type: 'message', role: 'user', content: 'think' }, { type: 'message', role: 'assistant', status: 'completed', content: msg.content }, { type: 'message', role: 'user', content: 'more' }])
    }
  })

  test("item_reference to a gateway item it cannot find is a 400 naming it, on a Claude model (another key's, one of a reply never stored); OpenAI's own store's is left out as before", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const made = await (await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'hi' })).json()
    const unstored = await (await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'hi', store: false })).json()
    const other = await rig.gw.services.keys.create({ name: 'reference elsewhere' })
    for (const [id, key] of [[made.output[0].id, other.key], [unstored.output[0].id, rig.gw.key]] as const) {
      const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id }] }, { key })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toContain(`input[1]: item_reference "${id}"`)
    }
    const openai = await rig.postResponses({ model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_68b1b2c0aa1181939fb11dd2f5c2ae0a0c3b4f1d9e2a5b6c' }] })
    expect(openai.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
    expect(openai.headers.get('x-switchyard-compat')).toContain('input.item_reference')
  })

  test('item references are bounded: the same item twice in the messages form is a 400, as in input', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const made = await (await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'hi' })).json()
    const ref = { type: 'item_reference', id: made.output[0].id }
    const res = await rig.postResponses({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }, ref, ref] })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toContain('duplicate item id')
  })


  test('calls of turns that each thought first stay turns of their own', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const thought = (n: number) => ({ type: 'reasoning', id: `rs_${n}`, summary: [], encrypted_content: sealReasoning({ type: 'reasoning', text: `step ${n}`, signature: `sig-${n}` }) })
    const res = await rig.postResponses({
      model: 'claude-sonnet-4-5', reasoning: { effort: 'low' }, store: false, tools: [WEATHER],
      input: [
        { role: 'user', content: 'Oslo, then Bergen' },
        thought(1), { type: 'function_call', call_id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Oslo"}' }, { type: 'function_call_output', call_id: 'toolu_a', output: 'rain' },
        thought(2), { type: 'function_call', call_id: 'toolu_b', name: 'get_weather', arguments: '{"city":"Bergen"}' }, { type: 'function_call_output', call_id: 'toolu_b', output: 'sun' },
      ],
    })
    expect(res.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().messages.map((m: any) => m.content.map((b: any) => b.type))).toEqual([
      ['text'], ['thinking', 'tool_use'], ['tool_result'], ['thinking', 'tool_use'], ['tool_result'],
    ])
  })
})
