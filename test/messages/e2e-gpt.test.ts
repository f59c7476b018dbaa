// GPT models through the messages surface: translated via the IR both ways, in front of a
// fake OpenAI upstream replaying recorded chat traffic, driven by @anthropic-ai/sdk.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { fromOpenAISse } from '../chat/e2e-helpers.ts'
import { messageFrames, startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

/** Anthropic's wire: a block starts only once the one before it stopped, and takes deltas only while open. */
function expectOneBlockAtATime(frames: { event: string | null; data: any }[]) {
  const open = new Set<number>()
  for (const f of frames) {
    if (f.event === 'content_block_start') {
      expect([...open]).toEqual([])
      open.add(f.data.index)
    } else if (f.event === 'content_block_delta') expect(open.has(f.data.index)).toBe(true)
    else if (f.event === 'content_block_stop') expect(open.delete(f.data.index)).toBe(true)
  }
}

/** A `$ref` with a keyword beside it anywhere in a schema: what OpenAI's strict mode refuses. */
const refBeside = (s: unknown): boolean =>
  Array.isArray(s) ? s.some(refBeside) : typeof s === 'object' && s !== null && (('$ref' in s && Object.keys(s).length > 1) || Object.values(s).some(refBeside))

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris and in Tokyo?' }]
const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } }

describe('gpt model, non-streaming', () => {
  test('text: an Anthropic message with a msg_ id, end_turn and usage whose input excludes cached tokens', async () => {
    const want = fixtureJson('openai/chat/nonstream-text.json')
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const r = await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask })
    expect(r.type).toBe('message')
    expect(r.role).toBe('assistant')
    expect(r.id.startsWith('msg_')).toBe(true)
    expect(r.content).toEqual([{ type: 'text', text: want.choices[0].message.content }] as any)
    expect(r.stop_reason).toBe('end_turn')
    const cached = want.usage.prompt_tokens_details?.cached_tokens ?? 0
    expect(r.usage.input_tokens).toBe(want.usage.prompt_tokens - cached)
    expect(r.usage.cache_read_input_tokens).toBe(cached)
    expect(r.usage.output_tokens).toBe(want.usage.completion_tokens)
    const g = await rig.generation(r.id)
    expect(g.endpoint).toBe('anthropic.messages')
    expect(g.finish_reason).toBe('end_turn')
    expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
  })

  // OpenAI says a refusal in `refusal` and ends with `stop`; read as an answer, a structured-output
  // client would take its text for JSON
  test("a refusal: its text, with Anthropic's stop_reason refusal, streamed or not", async () => {
    const said = "I'm sorry, I can't help with that."
    const base = { id: 'chatcmpl-refused-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } }
    rig.up.script({ json: { ...base, choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: said }, logprobs: null, finish_reason: 'stop' }] } })
    const r = await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask })
    expect(r.content).toEqual([{ type: 'text', text: said }] as any)
    expect(r.stop_reason).toBe('refusal')
    const chunk = (delta: object, finish: string | null = null, usage: object | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-refused-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage })}\n\n`
    rig.up.script({ sse: chunk({ role: 'assistant', content: null, refusal: '' }) + chunk({ refusal: "I'm sorry, " }) + chunk({ refusal: "I can't help with that." }) + chunk({}, 'stop') + chunk({}, null, base.usage) + 'data: [DONE]\n\n' })
    const final = await rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask }).finalMessage()
    expect(final.content).toEqual([{ type: 'text', text: said }] as any)
    expect(final.stop_reason).toBe('refusal')
    // an answer is still an answer
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    expect((await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask })).stop_reason).toBe('end_turn')
  })

  // the Anthropic SDK's structured output helper sends output_config.format: for a GPT model,
  // OpenAI's json_schema response format, and the SDK parses the reply's JSON text
  test("messages.parse with output_config.format: OpenAI's json_schema response format upstream, the parsed output back", async () => {
    const { jsonSchemaOutputFormat } = await import('@anthropic-ai/sdk/helpers/json-schema')
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } as const
    const base = { id: 'chatcmpl-json-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }
    rig.up.script({ json: { ...base, choices: [{ index: 0, message: { role: 'assistant', content: '{"city":"Paris"}', refusal: null }, logprobs: null, finish_reason: 'stop' }] } })
    const m = await rig.anthropic.messages.parse({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: jsonSchemaOutputFormat(schema) } } as any)
    expect((m as any).parsed_output).toEqual({ city: 'Paris' })
    expect(rig.up.requests.at(-1)!.json().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } })
  })

  // from 1.17 the SDK's helper keeps a field's description beside the `$ref` to a shared
  // definition; OpenAI's strict mode refuses any keyword beside a `$ref` with a 400
  test("messages.parse with a shared definition described where it is used: strict upstream with no keyword beside a $ref, each description kept", async () => {
    const { jsonSchemaOutputFormat } = await import('@anthropic-ai/sdk/helpers/json-schema')
    const address = { type: 'object', description: 'A postal address', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } as const
    const schema = {
      type: 'object',
      properties: { home: { $ref: '#/$defs/address', description: 'Where they live' }, work: { $ref: '#/$defs/address', description: 'Where they work' } },
      required: ['home', 'work'],
      additionalProperties: false,
      $defs: { address },
    } as const
    const refused = fixture('openai/chat/error-400-ref-keywords.handwritten.json')
    const answer = { id: 'chatcmpl-json-2', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 }, choices: [{ index: 0, message: { role: 'assistant', content: '{"home":{"city":"Paris"},"work":{"city":"Lyon"}}', refusal: null }, logprobs: null, finish_reason: 'stop' }] }
    rig.up.script((req) => {
      const js = req.json().response_format?.json_schema
      return js?.strict === true && refBeside(js.schema) ? { status: 400, json: refused } : { json: answer }
    })
    const m = await rig.anthropic.messages.parse({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: jsonSchemaOutputFormat(schema) } } as any)
    expect((m as any).parsed_output).toEqual({ home: { city: 'Paris' }, work: { city: 'Lyon' } })
    const sent = rig.up.requests.at(-1)!.json().response_format.json_schema
    expect(sent.strict).toBe(true)
    expect(sent.schema.properties.home).toEqual({ ...address, description: 'Where they live' })
    expect(sent.schema.properties.work).toEqual({ ...address, description: 'Where they work' })
  })

  test('a recursive definition described where it is used: written out once, its own use inside it a bare $ref', async () => {
    const { jsonSchemaOutputFormat } = await import('@anthropic-ai/sdk/helpers/json-schema')
    const node = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node', description: 'A child' } } }, required: ['name', 'children'], additionalProperties: false }
    const schema = { type: 'object', properties: { root: { $ref: '#/$defs/node', description: 'The top' } }, required: ['root'], additionalProperties: false, $defs: { node } } as const
    rig.up.script({ json: { id: 'chatcmpl-json-3', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 }, choices: [{ index: 0, message: { role: 'assistant', content: '{"root":{"name":"a","children":[]}}', refusal: null }, logprobs: null, finish_reason: 'stop' }] } })
    const m = await rig.anthropic.messages.parse({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: jsonSchemaOutputFormat(schema as any) } } as any)
    expect((m as any).parsed_output).toEqual({ root: { name: 'a', children: [] } })
    const sent = rig.up.requests.at(-1)!.json().response_format.json_schema
    expect(sent.strict).toBe(true)
    const top = sent.schema.properties.root
    expect(top.description).toBe('The top')
    expect(top.properties.children.items.$ref).toBe('#/$defs/node')
    expect(top.properties.children.items.properties).toBeUndefined()
    expect(refBeside(sent.schema)).toBe(false)
    expect(sent.schema.$defs.node.properties.children.items.description).toBe('A child')
  })

  test("a document's context and citations, which chat has no place for, are named in x-switchyard-compat; a document of chunks keeps them apart", async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const doc = { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'chunk A' }, { type: 'text', text: 'chunk B' }] }, title: 'Q3 report', context: 'internal', citations: { enabled: true } }
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: [doc, { type: 'text', text: 'Summarise.' }] }] })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(expect.arrayContaining(['document.context', 'document.citations']))
    expect(JSON.stringify(rig.up.requests.at(-1)!.json().messages)).toContain('chunk A\\n\\nchunk B')
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const plain = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: [{ ...doc, context: undefined, citations: undefined }, { type: 'text', text: 'Summarise.' }] }] })
    expect(plain.headers.get('x-switchyard-compat')).toBeNull()
    // an image among a document's blocks, and a search result's citations, have no place either: named
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const png = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const found = { type: 'search_result', source: 'https://ex.com', title: 'SR', content: [{ type: 'text', text: 'alpha' }], citations: { enabled: true } }
    const mixed = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: [{ ...doc, context: undefined, citations: undefined, source: { type: 'content', content: [{ type: 'text', text: 'chunk A' }, png] } }, found, { type: 'text', text: 'Summarise.' }] }] })
    expect(mixed.status).toBe(200)
    expect(mixed.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(['document.source.content[].image', 'search_result.citations'])
  })

  test('tool calls: tool_use blocks with parsed input and stop_reason tool_use', async () => {
    const want = fixtureJson('openai/chat/nonstream-tool-calls.json')
    rig.up.script({ json: fixture('openai/chat/nonstream-tool-calls.json') })
    const r = await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, tools: [weather] })
    const calls = want.choices[0].message.tool_calls
    const uses = r.content.filter((b) => b.type === 'tool_use') as any[]
    expect(uses.map((u) => ({ id: u.id, name: u.name, input: u.input }))).toEqual(calls.map((c: any) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) })))
    expect(r.stop_reason).toBe('tool_use')
  })

  test('the request is translated: system, tools (input_schema → parameters), tool_choice any → required, parallel_tool_calls false, metadata.user_id → safety_identifier, tool_result turns', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.anthropic.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 300,
      system: [{ type: 'text', text: 'Be brief.' }],
      tools: [weather],
      tool_choice: { type: 'any' },
      metadata: { user_id: 'user-7' },
      parallel_tool_calls: false,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }, { type: 'text', text: 'And now?' }] },
      ],
    } as any)
    const sent = rig.up.requests.at(-1)!
    expect(sent.path).toBe('/chat/completions')
    const b = sent.json()
    expect(b.model).toBe('gpt-4o-mini')
    expect(b.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
    expect(b.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', parameters: weather.input_schema } })
    expect(b.tool_choice).toBe('required')
    expect(b.parallel_tool_calls).toBe(false)
    // Anthropic's user_id is said for abuse detection, which is OpenAI's safety_identifier (`user`
    // is deprecated for it); OpenAI refuses metadata without store: true, so it travels alone
    expect(b.safety_identifier).toBe('user-7')
    expect(b).not.toHaveProperty('user')
    expect(b).not.toHaveProperty('metadata')
    const tool = b.messages.find((m: any) => m.role === 'tool')
    expect(tool).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' })
    expect(b.messages.at(-1)).toMatchObject({ role: 'user' })
  })

  // Claude Code's user_id is a JSON text of about 150 characters; OpenAI refuses a `user` over 64
  // ("Invalid 'user': string too long"), so every Claude Code request to a GPT model failed
  test("Claude Code's long metadata.user_id goes as a safety_identifier of at most 64 characters, the same for the same id", async () => {
    const userId = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '7b0a5a8e-8d1c-4c3b-9a55-0b1f6f4a2c11', session_id: '5d3c2b1a-0f9e-4d8c-b7a6-958473625140' })
    expect(userId.length).toBeGreaterThan(128)
    const sent: any[] = []
    for (let i = 0; i < 2; i++) {
      rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
      const r = await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, metadata: { user_id: userId }, messages: ask })
      expect(r.type).toBe('message')
      sent.push(rig.up.requests.at(-1)!.json())
    }
    expect(sent[0]).not.toHaveProperty('user')
    expect(sent[0].safety_identifier).toMatch(/^[0-9a-f]{64}$/)
    expect(sent[1].safety_identifier).toBe(sent[0].safety_identifier)
    expect(sent[0].safety_identifier).not.toContain(userId.slice(0, 20))
  })

  test("a failed tool's result (is_error) says so in the tool message's text, which is all chat has for it", async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const turn = (result: Record<string, unknown>) => rig.anthropic.messages.create({
      model: 'gpt-4o-mini', max_tokens: 300, tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', ...result }] },
      ],
    } as any)
    const toolMessage = () => rig.up.requests.at(-1)!.json().messages.find((m: any) => m.role === 'tool')
    await turn({ content: 'geo service unreachable', is_error: true })
    expect(toolMessage()).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: 'Error: geo service unreachable' })
    await turn({ content: [{ type: 'text', text: 'timed out' }, { type: 'text', text: 'after 30 s' }], is_error: true })
    expect(toolMessage().content).toEqual([{ type: 'text', text: 'Error:' }, { type: 'text', text: 'timed out' }, { type: 'text', text: 'after 30 s' }])
    await turn({ content: 'sunny' })
    expect(toolMessage().content).toBe('sunny')
  })

  test("the SDK's toolRunner: a message thread, which only Anthropic holds, is a 400 saying how to go on; without one the loop runs with the whole conversation each turn", async () => {
    const tools = [{ ...weather, run: async (input: { location: string }) => `sunny in ${input.location}` }]
    const ask = [{ role: 'user' as const, content: 'Weather in Paris?' }]
    const threaded = await (async () => {
      for await (const _ of rig.anthropic.beta.messages.toolRunner({ model: 'gpt-4o-mini', max_tokens: 300, tools, messages: ask, max_iterations: 3 } as any)) return 'a turn'
      return 'no turn'
    })().catch((e: Error) => e.message)
    expect(threaded).toContain('thread: message threads are held by Anthropic')
    rig.up.script({ sse: fixture('openai/chat/stream-tool-call-single.sse') }, { sse: fixture('openai/chat/stream-text-include-usage.sse') })
    const sent = rig.up.requests.length
    const turns: string[] = []
    for await (const m of rig.anthropic.beta.messages.toolRunner({ model: 'gpt-4o-mini', max_tokens: 300, tools, messages: ask, max_iterations: 3, thread: false, stream: true } as any)) {
      turns.push((await (m as any).finalMessage()).stop_reason)
    }
    expect(turns).toEqual(['tool_use', 'end_turn'])
    // the second turn carried the whole conversation: the question, the call and its result
    const second = rig.up.requests[sent + 1]!.json().messages
    expect(second.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool'])
  })

  test('an error object sent with status 200 is a failure (tried again, then a 502 with its message), never an empty message', async () => {
    const error = { json: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota' } } }
    rig.up.script(error, { json: fixture('openai/chat/nonstream-text.json') })
    const ok = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: ask })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { content: unknown[] }).content.length).toBeGreaterThan(0)
    rig.up.script(error)
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: ask })
    expect(res.status).toBe(502)
    expect(JSON.stringify(await res.json())).toContain('answered an error with status 200: You exceeded your current quota')
  })

  test("sampling a reasoning model refuses (Claude Code's temperature on o3) is left out and named in x-switchyard-compat, streamed or not; gpt-4o keeps it", async () => {
    for (const stream of [false, true]) {
      rig.up.script(stream ? { sse: fixture('openai/chat/stream-text-include-usage.sse') } : { json: fixture('openai/chat/nonstream-text.json') })
      const res = await rig.postMessages({ model: 'o3', max_tokens: 100, messages: ask, temperature: 0.5, top_p: 0.9, stream })
      expect(res.status).toBe(200)
      await res.text()
      const sent = rig.up.requests.at(-1)!.json()
      expect(sent).not.toHaveProperty('temperature')
      expect(sent).not.toHaveProperty('top_p')
      expect(sent.max_completion_tokens).toBe(100)
      expect(res.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(expect.arrayContaining(['temperature', 'top_p']))
    }
    // its default is no change, and is not named
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const one = await rig.postMessages({ model: 'o3', max_tokens: 100, messages: ask, temperature: 1 })
    expect(one.headers.get('x-switchyard-compat')).toBeNull()
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const plain = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 100, messages: ask, temperature: 0.5, top_p: 0.9 })
    expect(plain.headers.get('x-switchyard-compat')).toBeNull()
    expect(rig.up.requests.at(-1)!.json()).toMatchObject({ temperature: 0.5, top_p: 0.9 })
  })

  test('Anthropic-only parameters for a GPT model are a 400 naming each (reject mode)', async () => {
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 2000, messages: ask, top_k: 5, stop_sequences: ['x'], thinking: { type: 'enabled', budget_tokens: 1024 } })
    expect(res.status).toBe(400)
    const msg = (await res.json()).error
    for (const p of ['top_k', 'stop_sequences', 'thinking']) expect(msg).toContain(p)
  })

  test('unknown parameters are a 400 naming them; max_tokens is required', async () => {
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 10, messages: ask, frobnicate: 1 })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toContain('frobnicate')
    const res2 = await rig.postMessages({ model: 'gpt-4o-mini', messages: ask })
    expect(res2.status).toBe(400)
    expect((await res2.json()).error).toContain('max_tokens')
  })
})

describe('gpt model, streaming', () => {
  for (const name of ['stream-text-include-usage', 'stream-parallel-tool-calls', 'stream-tool-call-single', 'stream-cached-tokens-length']) {
    test(`${name}: exactly Anthropic's event sequence; the SDK's stream helper builds the message`, async () => {
      const sse = fixture(`openai/chat/${name}.sse`)
      const want = fromOpenAISse(sse)
      rig.up.script({ sse })
      const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 1000, stream: true, messages: ask, tools: [weather] })
      expect(res.status).toBe(200)
      const frames = messageFrames(await res.text())
      // every frame has its event line, and it names the data's type
      for (const f of frames) expect(f.event).toBe(f.data.type)
      expect(frames[0]!.event).toBe('message_start')
      expect(frames[0]!.data.message).toMatchObject({ role: 'assistant', content: [], model: expect.any(String) })
      // the prompt's size as the stream begins, where Anthropic says it (LangChain reads it only
      // there): the gateway's count, as OpenAI says it only at the end
      expect(frames[0]!.data.message.usage.input_tokens).toBeGreaterThan(0)
      expect(frames.at(-1)!.event).toBe('message_stop')
      expect(frames.at(-2)!.event).toBe('message_delta')
      // blocks: start, deltas, stop, with indexes in order, one open at a time (as Anthropic
      // streams them, parallel tool calls too), and never a delta to a block not started
      const open = new Set<number>()
      let next = 0
      for (const f of frames) {
        if (f.event === 'content_block_start') {
          expect(f.data.index).toBe(next++)
          expect([...open]).toEqual([])
          open.add(f.data.index)
        } else if (f.event === 'content_block_delta') expect(open.has(f.data.index)).toBe(true)
        else if (f.event === 'content_block_stop') {
          expect(open.delete(f.data.index)).toBe(true)
        }
      }
      expect(open.size).toBe(0)
      // usage in message_delta repeats the input counters
      const md = frames.at(-2)!.data
      expect(md.usage.output_tokens).toBe(want.usage.completion_tokens)
      expect(md.usage.input_tokens).toBe(want.usage.prompt_tokens - want.usage.cached_tokens)
      expect(md.usage.cache_read_input_tokens).toBe(want.usage.cached_tokens)

      rig.up.script({ sse })
      const final = await rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ask, tools: [weather] }).finalMessage()
      expect(final.content.filter((b) => b.type === 'text').map((b: any) => b.text).join('')).toBe(want.text)
      const uses = final.content.filter((b) => b.type === 'tool_use') as any[]
      expect(uses.map((u) => ({ id: u.id, name: u.name, input: u.input }))).toEqual(want.toolCalls.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) })))
      expect(final.stop_reason as string).toBe(({ stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as Record<string, string>)[want.finish]!)
      // the upstream's own count replaces it at the end, and is what the record keeps
      expect(final.usage.input_tokens).toBe(want.usage.prompt_tokens - want.usage.cached_tokens)
      const g = await rig.generation(final.id)
      expect(g.endpoint).toBe('anthropic.messages')
      expect(g.stream).toBe(true)
      expect(g.usage.completion_tokens).toBe(want.usage.completion_tokens)
    })
  }

  test("parallel tool calls whose argument pieces come interleaved: each call's input whole, one block open at a time", async () => {
    // the recording, its two calls' pieces alternated: chat numbers each piece by call, and an
    // upstream may interleave them (OpenAI sends one call after the other)
    const recorded = fixture('openai/chat/stream-parallel-tool-calls.sse')
    const want = fromOpenAISse(recorded)
    const events = recorded.split('\n\n').filter((e) => e.startsWith('data: '))
    const of = (i: number) => events.filter((e) => e.includes(`"tool_calls":[{"index":${i},`))
    const [first, second] = [of(0), of(1)]
    expect(first.length).toBeGreaterThan(2)
    expect(second.length).toBeGreaterThan(2)
    const rest = events.filter((e) => !first.includes(e) && !second.includes(e))
    const alternated = Array.from({ length: Math.max(first.length, second.length) - 1 }, (_, i) => [first[i + 1], second[i + 1]]).flat().filter((e) => e !== undefined)
    const sse = [rest[0], first[0], second[0], ...alternated, ...rest.slice(1)].join('\n\n') + '\n\n'
    rig.up.script({ sse })
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 1000, stream: true, messages: ask, tools: [weather] })
    const frames = messageFrames(await res.text())
    expectOneBlockAtATime(frames)
    rig.up.script({ sse })
    const final = await rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ask, tools: [weather] }).finalMessage()
    const uses = final.content.filter((b) => b.type === 'tool_use') as any[]
    expect(uses.map((u) => ({ id: u.id, name: u.name, input: u.input }))).toEqual(want.toolCalls.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) })))
    expect(final.stop_reason).toBe('tool_use')
  })

  test('text a compatible server sends beside an open call: its own block after the call, never inside it', async () => {
    const chunk = (delta: object, finish: string | null = null, usage: object | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-beside', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], usage })}\n\n`
    const call = (index: number, args: string, head?: string) => ({ index, ...(head ? { id: head, type: 'function', function: { name: 'get_weather', arguments: args } } : { function: { arguments: args } }) })
    const sse = chunk({ role: 'assistant', tool_calls: [call(0, '{"location":', 'call_p')] }) +
      chunk({ content: 'Checking ' }) +
      chunk({ content: 'both.', tool_calls: [call(0, '"Paris"}')] }) +
      chunk({ tool_calls: [call(1, '{"location":"Tokyo"}', 'call_t')] }) +
      chunk({}, 'tool_calls') + chunk({}, null, { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 }) + 'data: [DONE]\n\n'
    rig.up.script({ sse })
    const frames = messageFrames(await (await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 1000, stream: true, messages: ask, tools: [weather] })).text())
    expectOneBlockAtATime(frames)
    rig.up.script({ sse })
    const final = await rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ask, tools: [weather] }).finalMessage()
    expect(final.content.map((b: any) => (b.type === 'text' ? b.text : [b.id, b.input]))).toEqual([['call_p', { location: 'Paris' }], 'Checking both.', ['call_t', { location: 'Tokyo' }]])
    expect(final.stop_reason).toBe('tool_use')
  })
})

// Claude takes tool names of 128 characters, OpenAI of 64: Claude Code's MCP tools
// (`mcp__{server}__{tool}`) are often longer, and OpenAI would refuse the whole request
describe('gpt model, tool names and call ids past OpenAI’s limits', () => {
  const long = `mcp__github-enterprise-server__${'list_pull_request_review_comments_'.repeat(2)}all` // 102 characters
  const other = `mcp__github-enterprise-server__${'list_pull_request_review_comments_'.repeat(2)}one` // the same 99 first ones
  const tools = [long, other].map((name) => ({ name, description: 'a tool', input_schema: { type: 'object' as const, properties: { n: { type: 'number' } } } }))
  const history = [
    { role: 'user' as const, content: 'comments?' },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'call_before', name: long, input: { n: 1 } }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'call_before', content: 'none' }] },
  ]
  // the fake model calls the first tool under the name it was given
  const calling = (stream: boolean) => (req: { json(): any }) => {
    const name = req.json().tools[0].function.name
    const call = { id: 'call_next', type: 'function', function: { name, arguments: '{"n":2}' } }
    const usage = { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 }
    const head = { id: 'chatcmpl-long', created: 1, model: 'gpt-4o-mini' }
    if (!stream) return { json: { ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }], usage } }
    const chunk = (choices: object[], u: object | null = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices, usage: u })}\n\n`
    return { sse: chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...call }] }, finish_reason: null }]) + chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]) + chunk([], usage) + 'data: [DONE]\n\n' }
  }

  test('the names go upstream short, one apiece and the same on every turn; the call comes back under the client’s name', async () => {
    for (const stream of [false, true]) {
      rig.up.script(calling(stream))
      const params = { model: 'gpt-4o-mini', max_tokens: 200, tools, tool_choice: { type: 'tool' as const, name: long }, messages: history }
      const r = stream ? await rig.anthropic.messages.stream(params).finalMessage() : await rig.anthropic.messages.create(params)
      const sent = rig.up.requests.at(-1)!.json()
      const names = sent.tools.map((t: any) => t.function.name)
      expect(names.every((n: string) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true)
      expect(new Set(names).size).toBe(2)
      expect(sent.tool_choice).toEqual({ type: 'function', function: { name: names[0] } })
      expect(sent.messages[1].tool_calls[0].function.name).toBe(names[0])
      expect(r.content).toEqual([{ type: 'tool_use', id: 'call_next', name: long, input: { n: 2 } }] as any)
    }
    // the same short names on a second request: a conversation's turns agree
    expect(rig.up.requests.at(-1)!.json().tools).toEqual(rig.up.requests.at(-2)!.json().tools)
  })

  test("a history call under a name OpenAI refuses (`search.docs`) goes upstream under one it takes, in the call and among the tools", async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const r = await rig.anthropic.messages.create({
      model: 'gpt-4o-mini', max_tokens: 200, tools: [weather],
      messages: [ask[0]!, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search.docs', input: { q: 'x' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' }] }],
    })
    expect(r.type).toBe('message')
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.messages[1].tool_calls[0].function.name).toMatch(/^search_docs_[0-9a-f]{8}$/)
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(['get_weather'])
  })

  // a turn of Claude's signed thinking alone (its text cut, or a turn that only thought) has
  // nothing chat carries; OpenAI refuses an assistant message with no content and no calls
  test('an assistant turn of thinking alone stays behind', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.anthropic.messages.create({
      model: 'gpt-4o-mini', max_tokens: 200,
      messages: [ask[0]!, { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'c2ln' }] }, { role: 'user', content: 'Well?' }],
    })
    expect(rig.up.requests.at(-1)!.json().messages.map((m: any) => m.role)).toEqual(['user', 'user'])
  })

  // OpenAI refuses a history call id past 40 characters; another agent's or gateway's ids may be longer
  test('a call id past 40 characters goes upstream short, the same in the call and in its result', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    const id = `toolu_${'0123456789'.repeat(5)}`
    await rig.anthropic.messages.create({
      model: 'gpt-4o-mini', max_tokens: 200, tools: [weather],
      messages: [ask[0]!, { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { location: 'Paris' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'sunny' }] }],
    })
    const sent = rig.up.requests.at(-1)!.json().messages
    const callId = sent[1].tool_calls[0].id
    expect(callId.length).toBeLessThanOrEqual(40)
    expect(sent[2]).toMatchObject({ role: 'tool', tool_call_id: callId, content: 'sunny' })
    expect(sent[1].tool_calls[0].function.name).toBe('get_weather')
  })
})
