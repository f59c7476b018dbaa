// IR → Anthropic wire, for each translation pitfall other gateways fell into.
import { describe, expect, test } from 'bun:test'
import type { GenerationRequest, Message } from '../../src/ir/types.ts'
import { FILES_BETA, toAnthropicMessages } from '../../src/providers/anthropic/request.ts'
import { thinkingPlan } from '../../src/providers/anthropic/thinking.ts'
import { adaptiveThinkingOf } from '../../src/config/catalog.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { claude, request, user } from './support.ts'

const wire = (over: Partial<GenerationRequest>, m = claude()) => toAnthropicMessages(request(over), m)
const weather = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }

const toolTurn = (ids: string[]): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text: '' }, ...ids.map((id, i) => ({ type: 'tool-call' as const, id, name: 'get_weather', arguments: `{"city":"c${i}"}` }))],
})
const toolResult = (id: string, content: string): Message => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, content }] })

describe('messages and tool results', () => {
  test("a temperature past Anthropic's 1 (OpenAI's range is 0-2) is a 400 naming it, before the call", () => {
    expect(() => wire({ temperature: 1.5 })).toThrow(/temperature: Claude-family models take 0 to 1; got 1.5/)
    expect(wire({ temperature: 1 }).body.temperature).toBe(1)
  })

  test("temperature and top_p together: the later Claude models refuse the pair, so top_p is left out and named; the 3s, Sonnet 4 and Opus 4 take both", () => {
    for (const id of ['claude-sonnet-4-5', 'claude-haiku-4-5-20251001', 'claude-opus-4-1', 'claude-sonnet-4-6', 'claude-opus-4-6']) {
      const out = wire({ temperature: 0.1, topP: 1 }, claude({ id, upstreamId: id }))
      expect({ id, temperature: out.body.temperature, top_p: out.body.top_p, leftOut: out.leftOut }).toEqual({ id, temperature: 0.1, top_p: undefined, leftOut: ['top_p'] })
      // either alone goes as it came
      expect(wire({ topP: 0.9 }, claude({ id, upstreamId: id })).body.top_p).toBe(0.9)
    }
    for (const id of ['claude-3-5-haiku-20241022', 'claude-3-7-sonnet-20250219', 'claude-sonnet-4-20250514', 'claude-opus-4', 'claude-sonnet-4-0']) {
      const out = wire({ temperature: 0.1, topP: 0.9 }, claude({ id, upstreamId: id }))
      expect({ id, temperature: out.body.temperature, top_p: out.body.top_p, leftOut: out.leftOut }).toEqual({ id, temperature: 0.1, top_p: 0.9, leftOut: [] })
    }
  })

  test('from Opus 4.7 on Claude takes no sampler ("`temperature` is deprecated for this model."): each asked for is left out and named, with or without thinking', () => {
    for (const id of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-5', 'claude-opus-5', 'claude-fable-5', 'claude-sonnet-5-5-20270101']) {
      const m = claude({ id, upstreamId: id, adaptiveThinking: adaptiveThinkingOf(id) })
      // an OpenAI client's temperature past 1 is not refused either: it goes nowhere
      const out = wire({ temperature: 1.5, topP: 0.97, topK: 40 }, m)
      expect({ id, body: [out.body.temperature, out.body.top_p, out.body.top_k], leftOut: out.leftOut }).toEqual({ id, body: [undefined, undefined, undefined], leftOut: ['temperature', 'top_p', 'top_k'] })
      const thought = wire({ temperature: 0.2, topP: 0.97, reasoning: { effort: 'high' } }, m)
      expect({ id, body: [thought.body.temperature, thought.body.top_p], thinking: thought.body.thinking, leftOut: thought.leftOut }).toEqual({ id, body: [undefined, undefined], thinking: { type: 'adaptive', display: 'summarized' }, leftOut: ['temperature', 'top_p'] })
    }
    // the models before keep what they take
    const before = claude({ id: 'claude-opus-4-6', upstreamId: 'claude-opus-4-6', adaptiveThinking: 'preferred' })
    expect(wire({ temperature: 0.2, topK: 40 }, before).body).toMatchObject({ temperature: 0.2, top_k: 40 })
    expect(wire({ temperature: 0.2, topP: 0.97, reasoning: { effort: 'high' } }, before).body.top_p).toBe(0.97)
  })

  test('a JSON schema reply: structured output from Opus 4.1 and Sonnet 4.5 on; before them a tool the model is made to call, chosen beside the client\'s own as it asked', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false }
    const responseFormat = { type: 'json_schema' as const, name: 'place', schema }
    for (const id of ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5-20251001', 'claude-opus-4-7', 'claude-sonnet-5']) {
      const out = wire({ responseFormat }, claude({ id, upstreamId: id, adaptiveThinking: adaptiveThinkingOf(id) }))
      expect({ id, format: (out.body.output_config as { format?: unknown }).format, tools: out.body.tools, replyTool: out.replyTool }).toEqual({ id, format: { type: 'json_schema', schema }, tools: undefined, replyTool: undefined })
      const carried = wire({ providerData: { anthropic: { output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } } } }, claude({ id, upstreamId: id, adaptiveThinking: adaptiveThinkingOf(id) }))
      expect({ id, config: carried.body.output_config, replyTool: carried.replyTool }).toEqual({ id, config: { format: { type: 'json_schema', schema: { type: 'object' } } }, replyTool: undefined })
    }
    for (const id of ['claude-sonnet-4-20250514', 'claude-opus-4', 'claude-3-7-sonnet-20250219', 'claude-3-5-haiku-latest']) {
      const m = claude({ id, upstreamId: id })
      const out = wire({ responseFormat }, m)
      expect({ id, config: out.body.output_config, choice: out.body.tool_choice, replyTool: out.replyTool }).toEqual({ id, config: undefined, choice: { type: 'tool', name: 'json_reply' }, replyTool: 'json_reply' })
      expect(out.body.tools).toEqual([{ name: 'json_reply', description: expect.stringContaining('(place)'), input_schema: schema }])
      expect(out.leftOut).toEqual(['output_config.format->tool'])
      // the client's tools: any of them or the reply; its named tool; none of its own, the reply
      expect(wire({ responseFormat, tools: [weather] }, m).body.tool_choice).toEqual({ type: 'any' })
      expect(wire({ responseFormat, tools: [weather], toolChoice: { type: 'tool', name: 'get_weather' } }, m).body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' })
      expect(wire({ responseFormat, tools: [weather], toolChoice: { type: 'none' } }, m).body.tool_choice).toEqual({ type: 'tool', name: 'json_reply' })
      // a Messages client's own format (carried as it came) goes the same way, the rest of its output_config kept
      const carried = wire({ providerData: { anthropic: { output_config: { format: { type: 'json_schema', schema }, task_budget: 5 } } } }, m)
      expect({ id, config: carried.body.output_config, replyTool: carried.replyTool, tools: (carried.body.tools as { name: string }[]).map((t) => t.name) }).toEqual({ id, config: { task_budget: 5 }, replyTool: 'json_reply', tools: ['json_reply'] })
      // fast mode carried beside it goes to a fallback only where it has it (the named model's own is its to refuse)
      const fast = { providerData: { anthropic: { speed: 'fast', output_config: { format: { type: 'json_schema', schema } } } } }
      const fellBack = toAnthropicMessages(request(fast), m, true)
      expect({ id, speed: fellBack.body.speed, leftOut: fellBack.leftOut }).toEqual({ id, speed: undefined, leftOut: ['output_config.format->tool', 'speed'] })
      expect(toAnthropicMessages(request(fast), m).body.speed).toBe('fast')
      // a reply that is no object has no tool to go through: a 400 naming the field, before the call
      expect(() => wire({ responseFormat: { type: 'json_schema', name: 'list', schema: { type: 'array', items: { type: 'string' } } } }, m)).toThrow(/^response_format: a JSON schema of type "array" has no counterpart on claude-/)
      // thinking forbids the forced choice: the reply's tool is offered, the model's to call
      const thought = wire({ responseFormat, reasoning: { effort: 'low' } }, m)
      expect({ id, choice: thought.body.tool_choice, leftOut: thought.leftOut }).toEqual({ id, choice: { type: 'auto' }, leftOut: ['output_config.format->tool'] })
    }
  })

  test('a forced tool choice goes as auto to the models that refuse it (Fable 5.1, Opus 5.5: "tool_choice: type \\"tool\\" and \\"any\\" are not supported for this model."), named; Fable 5 and the rest take it', () => {
    for (const id of ['claude-fable-5-1', 'claude-fable-5-2-20261001', 'claude-mythos-5-1', 'claude-opus-5-5', 'claude-sonnet-5-5']) {
      const m = claude({ id, upstreamId: id, adaptiveThinking: adaptiveThinkingOf(id) })
      for (const toolChoice of [{ type: 'required' as const }, { type: 'tool' as const, name: 'get_weather' }]) {
        const out = wire({ tools: [weather], toolChoice }, m)
        expect({ id, choice: out.body.tool_choice, tools: (out.body.tools as unknown[]).length, leftOut: out.leftOut }).toEqual({ id, choice: { type: 'auto' }, tools: 1, leftOut: ['tool_choice'] })
      }
      expect(wire({ tools: [weather], toolChoice: { type: 'none' } }, m).body.tool_choice).toEqual({ type: 'none' })
    }
    for (const id of ['claude-fable-5', 'claude-opus-5', 'claude-sonnet-5', 'claude-haiku-5-5', 'claude-opus-4-8', 'claude-fable-5-10']) {
      const out = wire({ tools: [weather], toolChoice: { type: 'required' } }, claude({ id, upstreamId: id, adaptiveThinking: adaptiveThinkingOf(id) }))
      expect({ id, choice: out.body.tool_choice, leftOut: out.leftOut }).toEqual({ id, choice: { type: 'any' }, leftOut: [] })
    }
  })

  test('system parts → system blocks; max_tokens defaults to the catalog output limit', () => {
    const { body } = wire({ system: [{ type: 'text', text: 'Be brief.', cacheControl: { type: 'ephemeral' } }] })
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }])
    expect(body.max_tokens).toBe(64_000)
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }])
  })

  test('invalid tool ids rewritten, the same mapping on tool_use and tool_result', () => {
    const { body } = wire({
      tools: [weather],
      messages: [user('weather?'), toolTurn(['functions.get_weather:0', 'call abc']), toolResult('functions.get_weather:0', 'sunny'), toolResult('call abc', 'rain')],
    })
    const [, assistant, results] = body.messages as { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[]
    const useIds = assistant.content.map((b) => b.id)
    expect(useIds).toEqual(['functions_get_weather_0', 'call_abc'])
    expect(results.content.map((b) => b.tool_use_id)).toEqual(useIds)
    for (const id of useIds) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
  })

  test('two ids that clean up alike stay distinct', () => {
    const { body } = wire({ tools: [weather], messages: [user('x'), toolTurn(['a.b', 'a:b']), toolResult('a:b', '2'), toolResult('a.b', '1')] })
    const [, assistant, results] = body.messages as { content: { id?: string; tool_use_id?: string; content?: string }[] }[]
    expect(assistant.content.map((b) => b.id)).toEqual(['a_b', 'a_b_2'])
    expect(results.content.map((b) => [b.tool_use_id, b.content])).toEqual([['a_b_2', '2'], ['a_b', '1']])
  })

  test('consecutive tool results merged into ONE user turn right after the tool_use turn, ahead of text', () => {
    const { body } = wire({
      tools: [weather],
      messages: [user('x'), toolTurn(['call_1', 'call_2']), toolResult('call_1', 'a'), toolResult('call_2', 'b'), user('and now?')],
    })
    const msgs = body.messages as { role: string; content: { type: string }[] }[]
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(msgs[2].content.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text'])
  })

  test('an assistant turn with empty text plus tool calls has no empty text block', () => {
    const { body } = wire({ tools: [weather], messages: [user('x'), toolTurn(['call_1']), toolResult('call_1', 'a')] })
    const assistant = (body.messages as { content: unknown[] }[])[1]
    expect(assistant.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'c0' } }])
  })

  test('tool-call arguments that are not a JSON object → 400 naming the message', () => {
    const bad: Message = { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'get_weather', arguments: '{not json' }] }
    expect(() => wire({ tools: [weather], messages: [user('x'), bad] })).toThrow(/messages\[1\]\.content\[0\]: tool call arguments must be a JSON object/)
  })

  test('tool result with an error flag and rich content', () => {
    const m: Message = {
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c1', isError: true, content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] }],
    }
    const { body } = wire({ messages: [user('x'), toolTurn(['c1']), m] })
    expect((body.messages as { content: unknown[] }[])[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'c1',
      is_error: true,
      content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }],
    })
  })
})

describe('media', () => {
  test('images: data → base64 source, https URL → url source', () => {
    const { body } = wire({
      messages: [{ role: 'user', content: [
        { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/' } },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' } },
        { type: 'text', text: 'what is this?' },
      ] }],
    })
    expect((body.messages as { content: unknown[] }[])[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'text', text: 'what is this?' },
    ])
  })

  test('a file document → {type:"file", file_id} and the files beta', () => {
    const { body, betas } = wire({
      betas: ['prompt-caching-2024-07-31'],
      messages: [{ role: 'user', content: [{ type: 'document', source: { kind: 'file', fileId: 'file_abc' }, title: 'report' }, { type: 'text', text: 'summarise' }] }],
    })
    expect((body.messages as { content: unknown[] }[])[0].content[0]).toEqual({ type: 'document', source: { type: 'file', file_id: 'file_abc' }, title: 'report' })
    expect(betas).toEqual(['prompt-caching-2024-07-31', FILES_BETA])
  })

  test('no file reference → no files beta', () => {
    expect(wire({}).betas).toEqual([])
  })

  test('PDF and text documents', () => {
    const { body } = wire({
      messages: [{ role: 'user', content: [
        { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' } },
        { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'plain words' } },
      ] }],
    })
    expect((body.messages as { content: unknown[] }[])[0].content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
    ])
  })
})

describe('tools and tool_choice', () => {
  test('required → any, named → tool, disableParallel → disable_parallel_tool_use', () => {
    expect(wire({ tools: [weather], toolChoice: { type: 'required' } }).body.tool_choice).toEqual({ type: 'any' })
    expect(wire({ tools: [weather], toolChoice: { type: 'tool', name: 'get_weather', disableParallel: true } }).body.tool_choice).toEqual({
      type: 'tool',
      name: 'get_weather',
      disable_parallel_tool_use: true,
    })
    expect(wire({ tools: [weather], parallelToolCalls: false }).body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    expect(wire({ tools: [weather] }).body.tool_choice).toBeUndefined()
    expect(wire({ tools: [weather] }).body.tools).toEqual([{ name: 'get_weather', input_schema: weather.parameters }])
  })

  test('tool_choice naming a tool that does not exist → 400', () => {
    const attempt = () => wire({ tools: [weather], toolChoice: { type: 'tool', name: 'get_time' } })
    expect(attempt).toThrow(UpstreamError)
    expect(attempt).toThrow(/get_time.*not among the request's tools \(get_weather\)/)
    expect(() => wire({ toolChoice: { type: 'required' } })).toThrow(/needs tools/)
  })

  test('stop → stop_sequences; user → metadata.user_id; providerData.anthropic merged as is', () => {
    const { body } = wire({ stop: ['END'], user: 'u-1', providerData: { anthropic: { service_tier: 'auto', top_k: 5 }, openai: { seed: 1 } } })
    expect(body.stop_sequences).toEqual(['END'])
    expect(body.metadata).toEqual({ user_id: 'u-1' })
    expect(body.service_tier).toBe('auto')
    expect(body.top_k).toBe(5)
    expect(body.seed).toBeUndefined()
  })

  test('response_format json is refused, not dropped', () => {
    expect(() => wire({ responseFormat: { type: 'json_object' } })).toThrow(/response_format json_object is not supported/)
  })
})

describe('thinking', () => {
  test('effort → budget; temperature, top_k and a forced tool choice are left out', () => {
    const { body } = wire({ reasoning: { effort: 'medium' }, maxTokens: 20_000, temperature: 0.2, topK: 3, topP: 0.5, tools: [weather], toolChoice: { type: 'tool', name: 'get_weather' } })
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 })
    expect(body.max_tokens).toBe(20_000)
    expect(body.temperature).toBeUndefined()
    expect(body.top_k).toBeUndefined()
    expect(body.top_p).toBeUndefined()
    expect(body.tool_choice).toEqual({ type: 'auto' })
  })

  test('a 500-token budget is raised to 1024; max_tokens raised above it keeping the answer room', () => {
    const plan = thinkingPlan(request({ reasoning: { budgetTokens: 500 } }), claude(), 800)
    expect(plan).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 }, maxTokens: 1824 })
  })

  test('budget ≥ max_tokens: max_tokens raised, capped by the model limit, budget kept below it', () => {
    expect(thinkingPlan(request({ reasoning: { effort: 'high' } }), claude(), 1000).maxTokens).toBe(17_384)
    const capped = thinkingPlan(request({ reasoning: { effort: 'xhigh' } }), claude({ maxOutputTokens: 8192 }), 4000)
    expect(capped).toEqual({ thinking: { type: 'enabled', budget_tokens: 8191 }, maxTokens: 8192 })
  })

  test('a model that takes no budget (Opus 4.7, the Claude 5 models) thinks adaptively: the effort as output_config.effort, sampling left out', () => {
    const opus = claude({ id: 'claude-opus-4-7', upstreamId: 'claude-opus-4-7', adaptiveThinking: 'only' })
    const { body, leftOut } = wire({ reasoning: { effort: 'high' }, maxTokens: 2000, temperature: 0.2, tools: [weather], toolChoice: { type: 'required' } }, opus)
    expect(body.thinking).toEqual({ type: 'adaptive', display: 'summarized' })
    expect(body.output_config).toEqual({ effort: 'high' })
    // no budget to make room for: max_tokens is what was asked
    expect(body.max_tokens).toBe(2000)
    expect(body.temperature).toBeUndefined()
    expect(body.tool_choice).toEqual({ type: 'auto' })
    expect(leftOut).toEqual(expect.arrayContaining(['temperature', 'tool_choice']))
    // a budget it would refuse goes as the effort nearest it, and is named; a json schema format stays beside the effort
    const budget = wire({ reasoning: { budgetTokens: 4000 }, responseFormat: { type: 'json_schema', name: 'o', schema: { type: 'object' } } }, opus)
    expect(budget.body.thinking).toEqual({ type: 'adaptive', display: 'summarized' })
    expect(budget.body.output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } }, effort: 'medium' })
    expect(budget.leftOut).toContain('thinking.budget_tokens->output_config.effort')
    expect(wire({ reasoning: { effort: 'minimal' } }, opus).body.output_config).toEqual({ effort: 'low' })
  })

  test("adaptive thinking is shown summarized, which from Opus 4.7 on is no longer the default (the thinking text came back empty), unless the client asked no summary", () => {
    const opus = claude({ id: 'claude-opus-4-7', upstreamId: 'claude-opus-4-7', adaptiveThinking: 'only' })
    for (const summary of [undefined, 'auto', 'concise', 'detailed'] as const) {
      expect(wire({ reasoning: { effort: 'low', ...(summary ? { summary } : {}) } }, opus).body.thinking).toEqual({ type: 'adaptive', display: 'summarized' })
    }
    expect(wire({ reasoning: { effort: 'low', summary: 'none' } }, opus).body.thinking).toEqual({ type: 'adaptive', display: 'omitted' })
    // the client's own display wins (a Messages client's thinking, carried as it came)
    expect(wire({ reasoning: { effort: 'low' }, providerData: { anthropic: { thinking: { type: 'adaptive', display: 'omitted' } } } }, opus).body.thinking).toEqual({ type: 'adaptive', display: 'omitted' })
    // a budget model's thinking is as it was
    expect(wire({ reasoning: { effort: 'low' } }).body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
  })

  test('a 4.6 model thinks adaptively on an effort, and keeps a budget it was given (it takes both)', () => {
    const sonnet = claude({ id: 'claude-sonnet-4-6', upstreamId: 'claude-sonnet-4-6', adaptiveThinking: 'preferred' })
    expect(wire({ reasoning: { effort: 'xhigh' } }, sonnet).body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(wire({ reasoning: { budgetTokens: 4000 } }, sonnet).body.thinking).toEqual({ type: 'enabled', budget_tokens: 4000 })
  })

  test('adaptive thinking the client gave as it is still leaves out what thinking forbids', () => {
    const { body, leftOut } = wire({ providerData: { anthropic: { thinking: { type: 'adaptive' } } }, temperature: 0.3, topK: 5 })
    expect(body.thinking).toEqual({ type: 'adaptive' })
    expect(body.temperature).toBeUndefined()
    expect(body.top_k).toBeUndefined()
    expect(leftOut).toEqual(expect.arrayContaining(['temperature', 'top_k']))
  })

  test('which Claude models think adaptively, by their id', () => {
    const cases: Record<string, string | undefined> = {
      'claude-opus-4-5': undefined, 'claude-sonnet-4-5-20250929': undefined, 'claude-opus-4-20250514': undefined, 'claude-3-7-sonnet': undefined,
      'claude-opus-4-6': 'preferred', 'claude-sonnet-4-6': 'preferred',
      'claude-opus-4-7': 'only', 'claude-opus-4-8': 'only', 'claude-sonnet-5': 'only', 'claude-opus-5-5': 'only', 'claude-haiku-5-5-20261001': 'only',
    }
    for (const [id, form] of Object.entries(cases)) expect([id, adaptiveThinkingOf(id)]).toEqual([id, form])
  })

  test('no thinking for effort none or a model without reasoning', () => {
    expect(wire({ reasoning: { effort: 'none' } }).body.thinking).toBeUndefined()
    expect(wire({ reasoning: { effort: 'high' } }, claude({ reasoning: false })).body.thinking).toBeUndefined()
  })

  test('reasoning parts echoed byte for byte: signed, signed with empty text, redacted; unsigned ones stay behind', () => {
    const assistant: Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me think…', signature: 'EqQBCkgIARABGAIiQL+/sig==' },
        { type: 'reasoning', text: '', signature: 'EmptySig==' },
        { type: 'reasoning', text: '', redacted: 'EmwKAhgBEgy3redacted' },
        { type: 'reasoning', text: 'openai summary, no signature' },
        { type: 'text', text: 'Answer.' },
      ],
    }
    const { body } = wire({ messages: [user('q'), assistant, user('more')] })
    expect((body.messages as { content: unknown[] }[])[1].content).toEqual([
      { type: 'thinking', thinking: 'Let me think…', signature: 'EqQBCkgIARABGAIiQL+/sig==' },
      { type: 'thinking', thinking: '', signature: 'EmptySig==' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3redacted' },
      { type: 'text', text: 'Answer.' },
    ])
  })
})
