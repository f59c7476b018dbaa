import { describe, expect, test } from 'bun:test'
import { decode, rejection, user } from './helpers.ts'

const gpt = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', messages: user(), ...extra })
const claude = (extra: Record<string, unknown> = {}) => ({ model: 'claude-sonnet-4-5', messages: user(), ...extra })

describe('every 400 names its field', () => {
  test('Claude-family model with OpenAI-only parameters lists every one', () => {
    const m = rejection(claude({ max_completion_tokens: 10, logit_bias: { '1': 1 }, n: 1, seed: 1, user: 'u', parallel_tool_calls: false, store: true, frequency_penalty: 0, response_format: { type: 'json_object' } }))
    for (const p of ['max_completion_tokens', 'logit_bias', 'n', 'seed', 'user', 'parallel_tool_calls', 'store', 'response_format', 'frequency_penalty']) expect(m).toContain(p)
    expect(m).toContain('Claude-family')
  })
  test('Claude-family model with legacy functions', () => {
    const m = rejection(claude({ functions: [{ name: 'f' }], function_call: 'auto' }))
    expect(m).toContain('functions')
    expect(m).toContain('function_call')
  })
  test('OpenAI-family model with Anthropic parameters lists every one', () => {
    const m = rejection(gpt({ top_k: 5, stop_sequences: ['x'], cache_control: { type: 'ephemeral' }, thinking: { type: 'enabled', budget_tokens: 2000 } }))
    for (const p of ['top_k', 'stop_sequences', 'cache_control', 'thinking']) expect(m).toContain(p)
    expect(m).toContain('OpenAI-family')
  })
  test('stream not boolean', () => {
    for (const v of ['true', 1, {}, []]) expect(rejection(gpt({ stream: v }))).toStartWith('stream: must be a boolean')
  })
  test('missing messages', () => {
    expect(rejection({ model: 'gpt-4o' })).toBe('messages: required')
  })
  test('empty messages', () => {
    expect(rejection(gpt({ messages: [] }))).toStartWith('messages:')
  })
  test('missing model / unknown model / wrong surface', () => {
    expect(rejection({ messages: user() })).toBe('model: required')
    expect(rejection(gpt({ model: 42 }))).toStartWith('model: expected a string')
    expect(rejection(gpt({ model: 'no-such-model' }))).toStartWith('model: unknown model "no-such-model"')
    const m = rejection(gpt({ model: 'gpt-5-codex' }))
    expect(m).toStartWith('model: gpt-5-codex is not served on the chat surface')
    expect(m).toContain('/api/alpha/v1/responses')
  })
  test('invalid response_format shapes', () => {
    expect(rejection(gpt({ response_format: 'json' }))).toStartWith('response_format: expected an object')
    expect(rejection(gpt({ response_format: { type: 'xml' } }))).toStartWith('response_format.type:')
    expect(rejection(gpt({ response_format: { type: 'json_schema' } }))).toBe('response_format.json_schema: required')
    expect(rejection(gpt({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }))).toBe('response_format.json_schema.name: required')
    expect(rejection(gpt({ response_format: { type: 'json_schema', json_schema: { name: 3 } } }))).toStartWith('response_format.json_schema.name:')
    expect(rejection(gpt({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: 'x' } } }))).toStartWith('response_format.json_schema.schema:')
    expect(rejection(gpt({ response_format: { type: 'json_schema', json_schema: { name: 'a', strict: 'yes' } } }))).toStartWith('response_format.json_schema.strict:')
  })
  test('invalid tools', () => {
    expect(rejection(gpt({ tools: {} }))).toStartWith('tools: expected an array')
    expect(rejection(gpt({ tools: [{ type: 'retrieval' }] }))).toStartWith('tools[0].type:')
    expect(rejection(gpt({ tools: [{ type: 'function' }] }))).toBe('tools[0].function: required')
    expect(rejection(gpt({ tools: [{ type: 'function', function: { name: 'has space' } }] }))).toStartWith('tools[0].function.name:')
    expect(rejection(gpt({ tools: [{ type: 'function', function: { name: 'x'.repeat(65) } }] }))).toStartWith('tools[0].function.name:')
    expect(rejection(gpt({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }))).toStartWith('tools[0].function.parameters:')
    expect(rejection(gpt({ tools: [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'f' } }] }))).toStartWith('tools[1].function.name: duplicate')
  })
  test('tool_choice must name an existing tool', () => {
    const tools = [{ type: 'function', function: { name: 'get_weather' } }]
    expect(rejection(gpt({ tools, tool_choice: { type: 'function', function: { name: 'other' } } }))).toStartWith('tool_choice.function.name: "other" is not among the tools')
    expect(rejection(gpt({ tools, tool_choice: 'sometimes' }))).toStartWith('tool_choice:')
    expect(rejection(gpt({ tool_choice: 'required' }))).toStartWith('tool_choice:')
  })
  test('max_tokens / max_completion_tokens outside 1..context window', () => {
    expect(rejection(gpt({ max_tokens: 0 }))).toStartWith('max_tokens:')
    expect(rejection(gpt({ max_tokens: 1.5 }))).toStartWith('max_tokens:')
    expect(rejection(gpt({ max_tokens: 128_001 }))).toBe('max_tokens: 128001 exceeds the context window of gpt-4o (128000 tokens)')
    expect(rejection(gpt({ max_completion_tokens: -1 }))).toStartWith('max_completion_tokens:')
    expect(rejection(gpt({ max_completion_tokens: 10 ** 9 }))).toStartWith('max_completion_tokens: 1000000000 exceeds')
    expect(rejection(claude({ max_tokens: 200_001 }))).toStartWith('max_tokens: 200001 exceeds the context window of claude-sonnet-4-5')
    expect(decode(gpt({ max_tokens: 128_000 })).ir.maxTokens).toBe(128_000)
  })
  test('unknown top-level parameters are listed', () => {
    expect(rejection(gpt({ foo: 1, bar: 2 }))).toBe('Unknown parameters: foo, bar')
    expect(rejection(gpt({ input: 'x' }))).toBe('Unknown parameter: input')
  })
  test('other value rules', () => {
    expect(rejection(gpt({ temperature: 2.5 }))).toStartWith('temperature:')
    expect(rejection(gpt({ top_p: 0 }))).toStartWith('top_p:')
    expect(rejection(gpt({ frequency_penalty: -3 }))).toStartWith('frequency_penalty:')
    expect(rejection(gpt({ presence_penalty: 3 }))).toStartWith('presence_penalty:')
    expect(rejection(gpt({ stop: 5 }))).toStartWith('stop: expected a string or an array of at most 64 strings')
    // a provider-owned value set: GPT models get any effort as it is, a translation must know it
    expect(() => decode(gpt({ reasoning_effort: 'extreme' }))).not.toThrow()
    expect(rejection(claude({ reasoning_effort: 'extreme' }))).toStartWith('reasoning_effort: "extreme" cannot be translated')
    // `max`, OpenAI's top effort as Anthropic's, is one the translation knows
    expect(() => decode(claude({ reasoning_effort: 'max' }))).not.toThrow()
    expect(rejection(gpt({ stream_options: { include_usage: 'yes' } }))).toStartWith('stream_options.include_usage:')
    expect(rejection(gpt({ stream_options: { other: true } }))).toStartWith('stream_options')
    expect(rejection(gpt({ metadata: { a: 1 } }))).toStartWith('metadata')
    expect(rejection('just a string')).toStartWith('Request body: expected a JSON object')
  })
})

describe('messages, roles and content parts', () => {
  test('roles', () => {
    expect(rejection(gpt({ messages: [{ role: 'robot', content: 'x' }] }))).toStartWith('messages[0].role: expected one of')
    expect(rejection(gpt({ messages: [{ content: 'x' }] }))).toBe('messages[0].role: required')
    expect(rejection(gpt({ messages: ['hi'] }))).toStartWith('messages[0]: expected a message object')
    expect(rejection(gpt({ messages: [{ role: 'system', content: 'x' }] }))).toBe('messages: at least one message with role "user" is required')
  })
  test('content shapes', () => {
    expect(rejection(gpt({ messages: [{ role: 'user' }] }))).toBe('messages[0].content: required')
    expect(rejection(gpt({ messages: [{ role: 'user', content: 5 }] }))).toStartWith('messages[0].content: expected a string or an array')
    expect(rejection(gpt({ messages: [{ role: 'user', content: [{ type: 'video' }] }] }))).toStartWith('messages[0].content[0].type: expected one of')
    expect(rejection(gpt({ messages: [{ role: 'user', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'text' }] }] }))).toBe('messages[1].content[1].text: required')
    expect(rejection(gpt({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }, ...user()] }))).toStartWith('messages[0].content[0].type:')
  })
  test('images: https or data URL, detail auto|high|low', () => {
    const img = (image_url: unknown) => gpt({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url }] }] })
    expect(rejection(img({ url: 'http://example.com/a.png' }))).toStartWith('messages[0].content[0].image_url.url:')
    expect(rejection(img({ url: 'https://example.com/a.png', detail: 'ultra' }))).toStartWith('messages[0].content[0].image_url.detail:')
    expect(rejection(img({}))).toBe('messages[0].content[0].image_url.url: required')
    expect(rejection(img({ url: 'data:image/png,notbase64' }))).toStartWith('messages[0].content[0].image_url.url: expected a base64 data URL')
  })
  test('tool messages need tool_call_id; assistant tool_calls are checked', () => {
    expect(rejection(gpt({ messages: [...user(), { role: 'tool', content: 'x' }] }))).toBe('messages[1].tool_call_id: required')
    const bad = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: {} } }] }
    expect(rejection(gpt({ messages: [...user(), bad] }))).toStartWith('messages[1].tool_calls[0].function.arguments:')
  })
  test("each tool message answers a call of the assistant message before it, and each call is answered before the conversation goes on, as OpenAI requires (Claude's refusal would name its own indices)", () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })
    const asks = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map(call) })
    const answer = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'r' })
    for (const model of [gpt, claude]) {
      expect(rejection(model({ messages: [...user(), answer('c1')] }))).toBe('messages[1].tool_call_id: "c1" answers no tool call of the assistant message before it')
      expect(rejection(model({ messages: [...user(), asks('c1'), answer('c2')] }))).toBe('messages[2].tool_call_id: "c2" answers no tool call of the assistant message before it')
      // a call of an earlier turn is not this one's
      expect(rejection(model({ messages: [...user(), asks('c1'), answer('c1'), ...user(), answer('c1')] }))).toStartWith('messages[4].tool_call_id: "c1" answers no tool call')
      expect(rejection(model({ messages: [...user(), asks('c1', 'c2'), answer('c2'), ...user()] }))).toBe('messages[1].tool_calls: "c1" has no tool message answering it before messages[3]')
      expect(rejection(model({ messages: [...user(), asks('c1', 'c2'), ...user()] }))).toBe('messages[1].tool_calls: "c1", "c2" have no tool message answering them before messages[2]')
      // answered in any order, one answer given twice, and a last turn of calls not answered yet: as OpenAI takes them
      expect(() => decode(model({ messages: [...user(), asks('c1', 'c2'), answer('c2'), answer('c1'), answer('c1'), ...user()] }))).not.toThrow()
      expect(() => decode(model({ messages: [...user(), asks('c1')] }))).not.toThrow()
    }
  })
  test('null-valued optional parameters count as absent (the official API does so)', () => {
    const { ir } = decode(gpt({ temperature: null, tools: null, stream: null }))
    expect(ir.temperature).toBeUndefined()
    expect(ir.stream).toBe(false)
  })
})

describe('wire → IR', () => {
  test('system/developer → system; images; tool calls; merged tool results; stop; effort', () => {
    const { ir } = decode(claude({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'and kind' }] },
        { role: 'user', content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ] },
        { role: 'assistant', content: '', tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } },
        ] },
        { role: 'tool', tool_call_id: 'call_1', content: 'one' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'two' }] },
      ],
      tools: [{ type: 'function', function: { name: 'a', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'b' } }],
      tool_choice: { type: 'function', function: { name: 'a' } },
      stop: 'END',
      reasoning_effort: 'high',
      max_tokens: 100,
    }))
    expect(ir.system).toEqual([{ type: 'text', text: 'be brief' }, { type: 'text', text: 'and kind' }])
    expect(ir.messages[0]!.content[1]).toEqual({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=', at: 'messages[2].content[1].image_url.url' }, detail: 'low' })
    // IR message 0 is wire message 2 (the system ones went to system): the source says where it was sent
    expect(ir.messages[0]!.content[2]).toEqual({ type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg', at: 'messages[2].content[2].image_url.url' }, detail: undefined })
    // No empty text part beside tool calls
    expect(ir.messages[1]!.content.map((p) => p.type)).toEqual(['tool-call', 'tool-call'])
    expect(ir.messages[2]).toEqual({ role: 'tool', content: [
      { type: 'tool-result', toolCallId: 'call_1', content: 'one' },
      { type: 'tool-result', toolCallId: 'call_2', content: 'two' },
    ] })
    expect(ir.tools!.map((t) => t.name)).toEqual(['a', 'b'])
    expect(ir.tools![1]!.parameters).toEqual({ type: 'object', properties: {} })
    expect(ir.toolChoice).toEqual({ type: 'tool', name: 'a' })
    expect(ir.stop).toEqual(['END'])
    expect(ir.reasoning).toEqual({ effort: 'high' })
    expect(ir.maxTokens).toBe(100)
  })
  // joined, 'one-a' and 'one-b' read as 'one-aone-b'; a part's cache breakpoint was lost
  test('a tool message of several text parts keeps them apart; a lone part with a breakpoint keeps it', () => {
    const { ir } = decode(claude({
      messages: [
        ...user(),
        { role: 'assistant', content: null, tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'call_2', type: 'function', function: { name: 'a', arguments: '{}' } },
        ] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'one-a' }, { type: 'text', text: 'one-b' }] },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'a' } }],
    }))
    expect(ir.messages[2]!.content).toEqual([
      { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'one-a' }, { type: 'text', text: 'one-b' }] },
      { type: 'tool-result', toolCallId: 'call_2', content: [{ type: 'text', text: 'two', cacheControl: { type: 'ephemeral' } }] },
    ])
  })
  test('legacy function messages pair with their call', () => {
    const { ir } = decode(gpt({
      messages: [...user(), { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: 'done' }],
      functions: [{ name: 'f' }],
    }))
    const call = ir.messages[1]!.content[0] as { id: string }
    expect(ir.messages[2]!.content[0]).toEqual({ type: 'tool-result', toolCallId: call.id, content: 'done' })
    expect(ir.tools![0]!.name).toBe('f')
  })
  test('Anthropic extensions for Claude models; stream_options; prompt_cache_key is dropped', () => {
    const { ir } = decode(claude({ top_k: 5, stop_sequences: ['A'], stop: ['B'], thinking: { type: 'enabled', budget_tokens: 2048 }, stream: true, stream_options: { include_usage: true }, prompt_cache_key: 'tenant-secret' }))
    expect(ir.topK).toBe(5)
    expect(ir.stop).toEqual(['B', 'A'])
    expect(ir.reasoning).toEqual({ budgetTokens: 2048 })
    expect(ir.includeUsage).toBe(true)
    expect(JSON.stringify(ir)).not.toContain('tenant-secret')
  })
  test('official OpenAI parameters ride to OpenAI-family upstreams only', () => {
    const { ir } = decode(gpt({ verbosity: 'low', logprobs: true, seed: 3, modalities: ['text'] }))
    expect(ir.providerData).toEqual({ openai: { verbosity: 'low', logprobs: true, seed: 3, modalities: ['text'] } })
  })
})
