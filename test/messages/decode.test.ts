// messagesToIR: every part of a messages-style body lands in its IR field; what the IR has
// no field for rides in providerData.anthropic for Claude-family models only.
import { describe, expect, test } from 'bun:test'
import { body, CLAUDE, decode, GPT } from './helpers.ts'
import { messagesToIR } from '../../src/surfaces/messages/params.ts'

const fTool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }

describe('messagesToIR', () => {
  test('system string and blocks with cache_control; role "system" messages stay in place', () => {
    expect(decode(body({ system: 'be brief' })).ir.system).toEqual([{ type: 'text', text: 'be brief' }])
    const { ir } = decode(body({
      system: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: 'env: x' }],
    }))
    expect(ir.system).toEqual([{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cacheControl: { type: 'ephemeral', ttl: '1h' } }])
    expect(ir.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'system', content: [{ type: 'text', text: 'env: x' }] },
    ])
  })

  test('media sources → MediaSource', () => {
    const { ir } = decode(body({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'url', url: 'https://x/a.png' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'T' },
          { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain' } },
          { type: 'document', source: { type: 'file', file_id: 'file_1' } },
        ],
      }],
    }))
    expect(ir.messages[0]!.content).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, cacheControl: { type: 'ephemeral' } },
      { type: 'image', source: { kind: 'url', url: 'https://x/a.png' } },
      { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, title: 'T' },
      { type: 'document', source: { kind: 'url', url: 'https://x/a.pdf' } },
      { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'plain' } },
      { type: 'document', source: { kind: 'file', fileId: 'file_1' } },
    ])
  })

  test('tool_use → tool-call (arguments = JSON of input); tool_result → tool-result with isError and parts', () => {
    const { ir } = decode(body({
      tools: [fTool],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: [{ type: 'text', text: 'checking' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '3°C' }, { type: 'image', source: { type: 'url', url: 'https://x/m.png' } }], is_error: true },
            { type: 'text', text: 'and?' },
          ],
        },
      ],
    }))
    expect(ir.messages[1]!.content).toEqual([
      { type: 'text', text: 'checking' },
      { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    ])
    expect(ir.messages[2]!.content).toEqual([
      { type: 'tool-result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '3°C' }, { type: 'image', source: { kind: 'url', url: 'https://x/m.png' } }], isError: true },
      { type: 'text', text: 'and?' },
    ])
  })

  test('a role "tool" message naming its call is that call’s result', () => {
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] }
    const { ir } = decode(body({ messages: [{ role: 'user', content: 'a' }, call, { role: 'tool', tool_call_id: 'call_1', content: 'out' }] }))
    expect(ir.messages[2]).toEqual({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: 'out' }] })
  })

  test('thinking and redacted_thinking → reasoning parts, byte for byte; a web search with its result is a search holding both blocks; other server blocks are not IR parts', () => {
    const { ir } = decode(body({
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: 'Eq+/=sig' },
            { type: 'redacted_thinking', data: 'R3d/+=' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'server_tool_use', id: 'srvtoolu_2', name: 'code_execution', input: { code: '1' } },
            { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'code_execution_result' } },
            // a paused turn's search, its result never come
            { type: 'server_tool_use', id: 'srvtoolu_3', name: 'web_search', input: { query: 'r' } },
            { type: 'text', text: 'done' },
          ],
        },
      ],
    }))
    expect(ir.messages[1]!.content).toEqual([
      { type: 'reasoning', text: '', signature: 'Eq+/=sig' },
      { type: 'reasoning', text: '', redacted: 'R3d/+=' },
      { type: 'web-search', id: 'srvtoolu_1', query: 'q', sources: [], status: 'completed', providerData: { anthropic: { input: { query: 'q' }, content: [] } } },
      { type: 'text', text: 'done' },
    ])
  })

  test('tools: input_schema → parameters; other own fields → providerData.anthropic', () => {
    const { ir } = decode(body({
      tools: [{ ...fTool, cache_control: { type: 'ephemeral' }, defer_loading: true, strict: true, input_examples: [{ city: 'Oslo' }] }],
    }))
    expect(ir.tools).toEqual([{
      name: 'get_weather',
      description: 'Weather',
      parameters: fTool.input_schema,
      strict: true,
      cacheControl: { type: 'ephemeral' },
      providerData: { anthropic: { defer_loading: true, strict: true, input_examples: [{ city: 'Oslo' }] } },
    }])
  })

  test('server tools: the whole tool list is carried for Claude; dropped for OpenAI', () => {
    const tools = [fTool, { type: 'web_search_20250305', name: 'web_search', max_uses: 2 }]
    const claude = decode(body({ tools })).ir
    expect(claude.tools?.map((t) => t.name)).toEqual(['get_weather'])
    expect(claude.providerData?.anthropic?.tools).toEqual(tools)
    const gpt = decode(body({ tools }, GPT)).ir
    expect(gpt.tools?.map((t) => t.name)).toEqual(['get_weather'])
    expect(gpt.providerData).toBeUndefined()
  })

  test('tool_choice in every spelling', () => {
    const cases: [unknown, unknown][] = [
      ['auto', { type: 'auto' }],
      ['none', { type: 'none' }],
      ['any', { type: 'required' }],
      [{ type: 'any', disable_parallel_tool_use: true }, { type: 'required', disableParallel: true }],
      [{ type: 'tool', name: 'get_weather' }, { type: 'tool', name: 'get_weather' }],
      [{ type: 'function', function: { name: 'get_weather' } }, { type: 'tool', name: 'get_weather' }],
      [{ type: 'none' }, { type: 'none' }],
    ]
    for (const [tool_choice, want] of cases) expect(decode(body({ tools: [fTool], tool_choice }, GPT)).ir.toolChoice).toEqual(want as never)
  })

  test('parallel_tool_calls: false → parallelToolCalls false and disableParallel', () => {
    const { ir } = decode(body({ tools: [fTool], parallel_tool_calls: false }, GPT))
    expect(ir.parallelToolCalls).toBe(false)
    expect(ir.toolChoice).toEqual({ type: 'auto', disableParallel: true })
  })

  test('scalars: max_tokens, temperature, top_p, top_k, stop_sequences, stream, betas, metadata.user_id → user', () => {
    const { ir } = decode(body({
      max_tokens: 100, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['END'], stream: true,
      betas: ['files-api-2025-04-14'], metadata: { user_id: '{"device_id":"d"}' },
    }))
    expect(ir).toMatchObject({
      model: CLAUDE, maxTokens: 100, temperature: 0.2, topP: 0.9, topK: 40, stop: ['END'], stream: true,
      betas: ['files-api-2025-04-14'], user: '{"device_id":"d"}', metadata: { user_id: '{"device_id":"d"}' },
    })
  })

  test('thinking: enabled → reasoning.budgetTokens; reasoning_effort → effort; adaptive carried for Claude', () => {
    expect(decode(body({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 } })).ir.reasoning).toEqual({ budgetTokens: 2048 })
    expect(decode(body({ reasoning_effort: 'low' }, 'o3')).ir.reasoning).toEqual({ effort: 'low' })
    // a GPT model that does not reason would refuse an effort: left out, and named
    const plain = decode(body({ reasoning_effort: 'low' }, GPT))
    expect(plain.ir.reasoning).toBeUndefined()
    expect(plain.rules.compat).toContain('reasoning_effort')
    messagesToIR(plain.body as never, plain.model, plain.rules)
    expect(plain.rules.compat.filter((c) => c === 'reasoning_effort')).toHaveLength(1)
    const thought = decode(body({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 } }, GPT), 'translate')
    expect(thought.ir.reasoning).toBeUndefined()
    expect(thought.rules.compat).toContain('thinking')
    const adaptive = decode(body({ thinking: { type: 'adaptive' } })).ir
    expect(adaptive.reasoning).toBeUndefined()
    expect(adaptive.providerData?.anthropic?.thinking).toEqual({ type: 'adaptive' })
  })

  test('Anthropic-only parameters ride in providerData.anthropic', () => {
    const extras = {
      cache_control: { type: 'ephemeral' }, context_management: { edits: [] }, output_config: { effort: 'high' },
      container: 'ctr_1', mcp_servers: [{ type: 'url', url: 'https://m', name: 'm' }], service_tier: 'auto', inference_geo: 'us',
    }
    const { ir } = decode(body(extras))
    expect(ir.providerData).toEqual({ anthropic: extras })
  })

  test('translate mode for an OpenAI model: removed parameters are gone, counterparts merged', () => {
    const { ir, rules } = decode(body({ output_config: { effort: 'max' }, cache_control: { type: 'ephemeral' }, container: 'c' }, 'gpt-5'), 'translate')
    expect(rules.removed.sort()).toEqual(['cache_control', 'container'])
    // both APIs call their top effort `max`
    expect(ir.reasoning).toEqual({ effort: 'max' })
    expect(ir.providerData).toBeUndefined()
  })

  test("translate mode for an OpenAI model: output_config's JSON schema format is the structured output it asks for, not lost with the rest", () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } }
    const { ir, rules } = decode(body({ output_config: { effort: 'low', format: { type: 'json_schema', schema } } }, 'gpt-5'), 'translate')
    expect(ir.reasoning).toEqual({ effort: 'low' })
    // an optional property, which OpenAI's strict mode refuses: made to fit (required and nullable, the object closed)
    const fitted = { type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false }
    expect(ir.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema: fitted, strict: true })
    expect(rules.compat).toEqual(['output_config->reasoning_effort+response_format'])
    const closed = { type: 'object', properties: { a: { type: 'array', items: { type: 'object', properties: { b: { type: 'string' } }, required: ['b'], additionalProperties: false } } }, required: ['a'], additionalProperties: false }
    expect(decode(body({ output_config: { format: { type: 'json_schema', schema: closed } } }, 'gpt-5'), 'translate').ir.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema: closed, strict: true })
    // an object left open on purpose deep inside cannot fit: sent without strict, as it came
    const openInside = { ...closed, properties: { a: { type: 'array', items: { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: true } } } }
    expect(decode(body({ output_format: { type: 'json_schema', schema: openInside } }, 'gpt-5'), 'translate').ir.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema: openInside, strict: false })
  })
})
