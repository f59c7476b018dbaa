// Claude models through the chat surface: translated via the IR both ways, in front of a
// fake Anthropic upstream replaying recorded traffic, driven by the official `openai` SDK.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { chatFrames, fromAnthropicJson, fromAnthropicSse, startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }]
const weather: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }
const add: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } } }

describe('claude model, non-streaming', () => {
  for (const name of ['nonstream-text', 'nonstream-tool-use-sdk', 'nonstream-cache-read-and-write', 'nonstream-text-max-tokens']) {
    test(`${name}: same text, tool calls, finish reason and usage (prompt_tokens counts cache reads and writes)`, async () => {
      const want = fromAnthropicJson(fixtureJson(`anthropic/messages/${name}.json`))
      rig.up.script({ json: fixture(`anthropic/messages/${name}.json`) })
      const r = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, tools: [add] })
      expect(r.id).toBe(want.id)
      expect(r.object).toBe('chat.completion')
      const msg = r.choices[0]!.message
      expect(msg.content ?? '').toBe(want.text)
      expect((msg.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))).toEqual(want.toolCalls)
      expect(r.choices[0]!.finish_reason).toBe(want.finish as any)
      expect(r.usage!.prompt_tokens).toBe(want.usage.prompt_tokens)
      expect(r.usage!.completion_tokens).toBe(want.usage.completion_tokens)
      expect(r.usage!.prompt_tokens_details!.cached_tokens).toBe(want.usage.cached_tokens)
      const g = await rig.generation(r.id)
      expect(g.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
      expect(g.finish_reason).toBe(want.finish)
    })
  }

  test('the request is translated: system, max_tokens from the catalog, tool results merged, stop_sequences, tool_choice', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      stop: ['END'],
      tools: [weather, add],
      tool_choice: { type: 'function', function: { name: 'add' } },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
        { role: 'assistant', content: '', tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
        ] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: '3' },
      ],
    })
    const up = rig.up.requests.at(-1)!
    expect(up.path).toBe('/v1/messages')
    expect(up.headers['x-api-key']).toBe('sk-upstream-anthropic-secret')
    const sent = up.json()
    expect(JSON.stringify(sent.system)).toContain('Be brief.')
    expect(sent.max_tokens).toBe(64_000)
    expect(sent.stop_sequences).toEqual(['END'])
    expect(sent.tool_choice).toMatchObject({ type: 'tool', name: 'add' })
    expect(sent.messages[0].content[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } })
    // No empty text block beside the tool calls
    expect(sent.messages[1].content.map((b: any) => b.type)).toEqual(['tool_use', 'tool_use'])
    // consecutive tool results: one user turn right after the tool_use turn
    expect(sent.messages[2].role).toBe('user')
    expect(sent.messages[2].content.map((b: any) => b.tool_use_id)).toEqual(['call_1', 'call_2'])
    expect(sent.messages.length).toBe(3)
  })

  test('an invalid tool id is rewritten on both the tool_use and its tool_result', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      tools: [add],
      messages: [
        { role: 'user', content: 'add' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call:1.x', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] },
        { role: 'tool', tool_call_id: 'call:1.x', content: '3' },
      ],
    })
    const sent = rig.up.requests.at(-1)!.json()
    const useId = sent.messages[1].content[0].id
    expect(useId).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(sent.messages[2].content[0].tool_use_id).toBe(useId)
  })

  test('reasoning_effort becomes a thinking budget of at least 1024 and below max_tokens', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
    const r = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600 })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.thinking.type).toBe('enabled')
    expect(sent.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
    expect(sent.max_tokens).toBeGreaterThan(sent.thinking.budget_tokens)
    // the answer text comes through; the thinking as other gateways give it, beside it
    const want = fromAnthropicJson(fixtureJson('anthropic/messages/nonstream-thinking.json'))
    expect(r.choices[0]!.message.content).toBe(want.text)
    const block = fixtureJson('anthropic/messages/nonstream-thinking.json').content[0]
    const message = r.choices[0]!.message as any
    expect(message.reasoning_content).toBe(block.thinking)
    expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: block.thinking, signature: block.signature }])
  })

  test('a streamed reply gives the thinking as reasoning_content deltas, and the signed blocks whole in one delta before the finish', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-thinking.sse') })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600, stream: true })
    const deltas = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices[0]?.delta ?? {})
    const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('')
    const carrying = deltas.filter((d) => d.thinking_blocks)
    expect(reasoning.length).toBeGreaterThan(0)
    expect(carrying).toHaveLength(1)
    const blocks = carrying[0].thinking_blocks
    expect(blocks).toHaveLength(1)
    expect(blocks[0].thinking).toBe(reasoning)
    expect(blocks[0].signature.length).toBeGreaterThan(10)
    // the openai SDK's stream helper keeps a field's last delta: the blocks reach its final message whole
    rig.up.script({ sse: fixture('anthropic/messages/stream-thinking.sse') })
    const final = await rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600 }).finalChatCompletion()
    expect((final.choices[0]!.message as any).thinking_blocks).toEqual(blocks)
  })

  test('a stop sequence of whitespace only, which Anthropic refuses, is a 400 naming it before any call', async () => {
    const n = rig.up.requests.length
    for (const stop of ['\n', ['END', ' '], '']) {
      const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, max_tokens: 100, stop })
      expect(res.status).toBe(400)
      expect((await res.json()).error).toMatch(/^stop\[\d\]: Claude-family models take no stop sequence that is empty or whitespace only/)
    }
    expect(rig.up.requests.length).toBe(n)
  })

  // OpenAI takes a user turn of empty text; Claude refuses empty text, and with the turn left
  // out the conversation would end on the assistant's turn, which Claude goes on writing (a
  // prefill): the client would get more of the last answer, not an answer to its turn
  test('a last user turn of empty text only is a 400 naming it before any call, on chat and responses, never a continuation of the turn before', async () => {
    const n = rig.up.requests.length
    for (const empty of ['', [{ type: 'text' as const, text: '' }]]) {
      for (const messages of [[{ role: 'user' as const, content: empty }], [...ask, { role: 'assistant' as const, content: 'Paris.' }, { role: 'user' as const, content: empty }]]) {
        const chat = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages }).catch((e: Error) => e)
        expect(chat).toBeInstanceOf(OpenAI.BadRequestError)
        expect((chat as Error).message).toContain('messages: the last user turn holds only empty text (or whitespace)')
        const input = messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : [{ type: 'input_text' as const, text: '' }] }))
        const responses = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input }).catch((e: Error) => e)
        expect(responses).toBeInstanceOf(OpenAI.BadRequestError)
      }
    }
    expect(rig.up.requests.length).toBe(n)
    // an empty turn that another user turn follows, or one beside text, goes as before
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [...ask, { role: 'user', content: '' }] })
    expect(rig.up.requests.at(-1)!.json().messages).toEqual([{ role: 'user', content: [{ type: 'text', text: ask[0]!.content }] }])
  })

  // Claude refuses a text block of whitespace only where its message has no other text, and a
  // conversation that ends on an assistant turn (a prefill) whose text ends in whitespace: a
  // chat client keeps what the model said, "\n\n" before its tool calls included, and sends it back
  test('whitespace the model or client wrote goes to Claude in a form it takes: alone in a turn left out, a prefill trimmed at its end', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const call = { id: 'toolu_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      tools: [weather],
      messages: [
        { role: 'system', content: ' \n' },
        ...ask,
        { role: 'assistant', content: '\n\n', tool_calls: [call] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
        { role: 'user', content: [{ type: 'text', text: ' ' }, { type: 'text', text: 'And tomorrow?' }] },
        { role: 'assistant', content: 'Tomorrow it will be \n' },
      ],
    })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent).not.toHaveProperty('system')
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: ask[0]!.content }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }, { type: 'text', text: 'And tomorrow?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Tomorrow it will be' }] },
    ])
    // a last user turn of whitespace only is refused as one of empty text, before any call
    const n = rig.up.requests.length
    const r = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [...ask, { role: 'assistant', content: 'Paris.' }, { role: 'user', content: ' \n ' }] }).catch((e: Error) => e)
    expect(r).toBeInstanceOf(OpenAI.BadRequestError)
    expect((r as Error).message).toContain('messages: the last user turn holds only empty text (or whitespace)')
    expect(rig.up.requests.length).toBe(n)
  })

  test("a request with no turn left to send is a 400 before any call, not Claude's refusal of an empty list", async () => {
    const n = rig.up.requests.length
    for (const input of [[{ role: 'developer' as const, content: 'Be brief.' }], [{ role: 'user' as const, content: '' }, { role: 'assistant' as const, content: '\n\n' }]]) {
      const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', instructions: 'Answer in French.', input }).catch((e: Error) => e)
      expect(r).toBeInstanceOf(OpenAI.BadRequestError)
      expect((r as Error).message).toContain('messages: nothing to send as a user or assistant turn')
    }
    expect(rig.up.requests.length).toBe(n)
  })

  test("a tool whose parameters name no type (OpenAI takes `{}`) goes to Claude with the object root its input_schema needs", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'ping', parameters: {} } },
      { type: 'function', function: { name: 'find', parameters: { properties: { q: { type: 'string' } }, required: ['q'] } } },
      { type: 'function', function: { name: 'now' } },
      weather,
    ]
    await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, tools })
    expect(rig.up.requests.at(-1)!.json().tools.map((t: any) => t.input_schema)).toEqual([
      { type: 'object' },
      { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      { type: 'object', properties: {} },
      weather.function.parameters,
    ])
  })

  test('what thinking forbids (a forced tool choice, temperature, top_p below 0.95) is left out and named in x-switchyard-compat, streamed or not', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    for (const stream of [false, true]) {
      rig.up.script(stream ? { sse: fixture('anthropic/messages/stream-text.sse') } : { json: fixture('anthropic/messages/nonstream-thinking.json') })
      const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600, tools, tool_choice: 'required', temperature: 0.3, top_p: 0.5, stream })
      expect(res.status).toBe(200)
      await res.text()
      const sent = rig.up.requests.at(-1)!.json()
      expect(sent.thinking.type).toBe('enabled')
      expect(sent.tool_choice).toEqual({ type: 'auto' })
      expect(sent).not.toHaveProperty('temperature')
      expect(sent).not.toHaveProperty('top_p')
      expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(expect.arrayContaining(['tool_choice', 'temperature', 'top_p']))
    }
    // without thinking, each goes as it came and nothing is named; but temperature and top_p
    // together, which Claude since Opus 4.1 refuses: top_p is left out, and named
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const plain = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, max_tokens: 600, tools, tool_choice: 'required', temperature: 0.3 })
    expect(plain.headers.get('x-switchyard-compat')).toBeNull()
    expect(rig.up.requests.at(-1)!.json()).toMatchObject({ tool_choice: { type: 'any' }, temperature: 0.3 })
    const both = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, max_tokens: 600, temperature: 0.3, top_p: 0.5 })
    expect(both.headers.get('x-switchyard-compat')).toBe('top_p')
    expect(rig.up.requests.at(-1)!.json()).toMatchObject({ temperature: 0.3 })
    expect(rig.up.requests.at(-1)!.json()).not.toHaveProperty('top_p')
  })

  test('an OpenAI client\'s samplers go nowhere on Claude from Opus 4.7 on (each refused there: "`temperature` is deprecated for this model."), named in x-switchyard-compat', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const { data, response } = await rig.client.chat.completions
      .create({ model: 'claude-opus-4-7', messages: ask, max_tokens: 600, temperature: 0.7, top_p: 0.9 })
      .withResponse()
    expect(data.choices[0]!.message.content).toBe(fromAnthropicJson(fixtureJson('anthropic/messages/nonstream-text.json')).text)
    expect(response.headers.get('x-switchyard-compat')).toBe('temperature, top_p')
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.model).toBe('claude-opus-4-7')
    expect(sent).not.toHaveProperty('temperature')
    expect(sent).not.toHaveProperty('top_p')
  })

  test("what Claude has no place for (a message's name, a tool's strict, an image's detail) is named in x-switchyard-compat, not dropped without a word", async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }]
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const messages = [{ role: 'user', name: 'alice', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image_url', image_url: { url: png, detail: 'high' } }] }]
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages, tools, max_tokens: 100 })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(expect.arrayContaining(['messages[].name', 'tools[].strict', 'detail']))
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.tools[0]).not.toHaveProperty('strict')
    expect(sent.messages[0]).not.toHaveProperty('name')
    // none of them asked: nothing named
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const plain = await rig.post({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: png, detail: 'auto' } }] }], max_tokens: 100 })
    expect(plain.headers.get('x-switchyard-compat')).toBeNull()
  })

  test('inline files go as Claude takes them: a PDF as a document, text as a text source, an image as an image; another type or an image format Claude refuses is a 400 naming the part', async () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64')
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const file = (type: string, data: string) => ({ type: 'file', file: { filename: 'f', file_data: `data:${type};base64,${data}` } })
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const ok = await rig.post({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Read these.' }, file('text/csv', b64('a,b\n1,2')), file('image/png', png), file('application/pdf', b64('%PDF-1.4'))] }] })
    expect(ok.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json().messages[0].content
    expect(sent[1]).toEqual({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a,b\n1,2' }, title: 'f' })
    expect(sent[2]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } })
    expect(sent[3].source).toEqual({ type: 'base64', media_type: 'application/pdf', data: b64('%PDF-1.4') })
    const before = rig.up.requests.length
    for (const [part, message] of [
      [file('application/zip', b64('PK')), 'messages[0].content[1].file.file_data: a "application/zip" document cannot go to a Claude model'],
      [{ type: 'image_url', image_url: { url: `data:image/svg+xml;base64,${b64('<svg/>')}` } }, 'messages[0].content[1].image_url.url: "image/svg+xml" is not an image format the upstreams take'],
    ] as const) {
      const res = await rig.post({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Read it.' }, part] }] })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toStartWith(message)
    }
    expect(rig.up.requests.length).toBe(before)
  })

  test("a tool loop with reasoning_effort goes on: the turn after a tool call, whose thinking chat could not carry back, is sent without thinking, as Anthropic requires", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    const { response } = await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5', reasoning_effort: 'low', max_tokens: 600, tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
    }).withResponse()
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent).not.toHaveProperty('thinking')
    // left out, and said so, as the other parameters Claude could not take are
    expect(response.headers.get('x-switchyard-compat')?.split(/,\s*/)).toContain('thinking')
    expect(sent.max_tokens).toBe(600)
    expect(sent.messages.at(-2).content[0].type).toBe('tool_use')
    // a loop whose last assistant turn only answered keeps thinking
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5', reasoning_effort: 'low', max_tokens: 600, tools,
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'Weather in Paris?' }],
    })
    expect(rig.up.requests.at(-1)!.json().thinking?.type).toBe('enabled')
  })

  // Claude writes on from a conversation's last assistant turn (a prefill) only without thinking
  test('a prefill with reasoning_effort is sent without thinking, and says so', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const { response } = await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5', reasoning_effort: 'low', max_tokens: 600,
      messages: [{ role: 'user', content: 'Name a colour.' }, { role: 'assistant', content: 'The colour is ' }],
    }).withResponse()
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent).not.toHaveProperty('thinking')
    expect(sent.max_tokens).toBe(600)
    expect(sent.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The colour is' }] })
    expect(response.headers.get('x-switchyard-compat')?.split(/,\s*/)).toContain('thinking')
  })

  test('thinking_blocks sent back on the assistant turn go to Claude signed, first in the turn, and the loop keeps thinking', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    const signed = { type: 'thinking', thinking: 'Paris: ask the tool.', signature: 'EqQBsig==' }
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBredacted' }
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5', reasoning_effort: 'low', max_tokens: 600, tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, reasoning_content: 'Paris: ask the tool.', thinking_blocks: [signed, redacted], tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } as any,
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
    })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.thinking?.type).toBe('enabled')
    expect(sent.messages[1].content).toEqual([{ type: 'thinking', thinking: signed.thinking, signature: signed.signature }, { type: 'redacted_thinking', data: redacted.data }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }])
    // a block with an empty signature is no signed block: the turn goes as thinking lost
    rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
    await rig.client.chat.completions.create({
      model: 'claude-sonnet-4-5', reasoning_effort: 'low', max_tokens: 600, tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, thinking_blocks: [{ ...signed, signature: '' }], tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } as any,
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
    })
    const unsigned = rig.up.requests.at(-1)!.json()
    expect(unsigned.thinking).toBeUndefined()
    expect(unsigned.messages[1].content.map((b: any) => b.type)).toEqual(['tool_use'])
    // a block of another shape is a 400 naming it
    const bad = await rig.post({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b', thinking_blocks: [{ type: 'thinking', thinking: 'x' }] }, { role: 'user', content: 'c' }] })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toStartWith('messages[1].thinking_blocks')
  })
})

describe('claude model, streaming', () => {
  test('include_usage: text deltas, finish and usage-only chunk before [DONE]; role on the first delta; id on every chunk', async () => {
    const sse = fixture('anthropic/messages/stream-text.sse')
    const want = fromAnthropicSse(sse)
    rig.up.script({ sse })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true, stream_options: { include_usage: true } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/event-stream')
    const frames = chatFrames(await res.text())
    expect(frames.at(-1)).toBe('[DONE]')
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f))
    for (const c of chunks) {
      expect(c.id).toBe(want.id)
      expect(c.object).toBe('chat.completion.chunk')
      expect(c.created).toBeNumber()
    }
    expect(chunks[0].choices[0].delta.role).toBe('assistant')
    const usageChunk = chunks.at(-1)
    expect(usageChunk.choices).toEqual([])
    expect(usageChunk.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
    expect(usageChunk.usage.completion_tokens).toBe(want.usage.completion_tokens)
    const last = chunks.at(-2)
    expect(last.choices[0].delta).toEqual({})
    expect(last.choices[0].finish_reason).toBe(want.finish)
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(want.text)
  })

  test('tool use: stream(...).finalChatCompletion() carries the call and its arguments', async () => {
    for (const name of ['stream-tool-use', 'stream-tool-use-with-request', 'stream-tool-use-vercel']) {
      const sse = fixture(`anthropic/messages/${name}.sse`)
      const want = fromAnthropicSse(sse)
      rig.up.script({ sse })
      const tools = want.toolCalls.map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: { type: 'object' } } }))
      const final = await rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask, tools }).finalChatCompletion()
      const m = final.choices[0]!.message
      expect((m.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))).toEqual(want.toolCalls)
      expect(m.content ?? '').toBe(want.text)
      expect(final.choices[0]!.finish_reason).toBe(want.finish as any)
    }
  })

  test('cache read / write streams: usage as the provider counted it', async () => {
    for (const name of ['stream-cache-read', 'stream-cache-write']) {
      const sse = fixture(`anthropic/messages/${name}.sse`)
      const want = fromAnthropicSse(sse)
      rig.up.script({ sse })
      const stream = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, stream: true, stream_options: { include_usage: true } })
      let usage: OpenAI.CompletionUsage | undefined
      for await (const c of stream) if (c.usage) usage = c.usage
      expect(usage!.prompt_tokens).toBe(want.usage.prompt_tokens)
      expect(usage!.prompt_tokens_details!.cached_tokens).toBe(want.usage.cached_tokens)
      expect(usage!.completion_tokens).toBe(want.usage.completion_tokens)
      const g = await rig.generation(want.id)
      expect(g.usage.cache_read_input_tokens).toBe(want.usage.cached_tokens)
    }
  })

  test('overloaded `event: error` as the first event is an ordinary status, never a fake end_turn', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-error-overloaded-event.sse') })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true })
    expect(res.status).toBeGreaterThanOrEqual(500)
    expect(((await res.json()) as { error: string }).error).toContain('Overloaded')
  })

  test('an error after output ends the stream early without [DONE] or a finish reason', async () => {
    const head = fixture('anthropic/messages/stream-text.sse').split('\n\n').slice(0, 4).join('\n\n') + '\n\n'
    rig.up.script({ sse: head + fixture('anthropic/messages/stream-error-midstream-fragment.sse') })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true, stream_options: { include_usage: true } })
    expect(res.status).toBe(200)
    let body = ''
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        body += dec.decode(value)
      }
    } catch {}
    expect(body).toContain('replacement character')
    expect(body).not.toContain('[DONE]')
    expect(body).not.toContain('"finish_reason":"')
  })

  test('upstream 4xx keeps the provider message', async () => {
    rig.up.script({ status: 400, json: fixture('anthropic/messages/error-400-invalid-request.json') })
    const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toContain(fixtureJson('anthropic/messages/error-400-invalid-request.json').error.message)
  })
})

test('translated path: a client that disconnects mid-stream is billed for what was produced', async () => {
  const sse = fixture('anthropic/messages/stream-text.sse').replaceAll('msg_01PgicqXb8hKdXEPHm3LLTGF', 'msg_disconnect_14')
  const events = sse.split('\n\n')
  const upTo = events.findIndex((e) => e.includes('" think"'))
  rig.up.script({ sse: events.slice(0, upTo + 1).join('\n\n') + '\n\n', hold: true })
  const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true })
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes(' think')) seen += new TextDecoder().decode((await reader.read()).value)
  await reader.cancel()
  await rig.up.requests.at(-1)!.closed
  let g: any
  for (let i = 0; i < 50 && !g; i++) g = await rig.generation('msg_disconnect_14').catch(() => Bun.sleep(20).then(() => undefined))
  expect(g.error).toBe('client disconnected')
  const { countTokens } = await import('../../src/ir/tokens.ts')
  // message_start reported input 27 and output 1; the output is raised to what was produced
  expect(g.usage.prompt_tokens).toBe(27)
  expect(g.usage.completion_tokens).toBe(countTokens('The phrase "I think'))
  expect(g.usage.completion_tokens).toBeGreaterThan(1)
})
