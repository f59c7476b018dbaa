// IR → OpenAI chat wire.
import { describe, expect, test } from 'bun:test'
import type { GenerationRequest, Message, ReasoningEffort } from '../../src/ir/types.ts'
import { toOpenAIChat } from '../../src/providers/openai/request.ts'
import { request, user } from './support.ts'

const wire = (over: Partial<GenerationRequest>, reasoning = true) => toOpenAIChat(request(over), { upstreamId: 'gpt-4o-2024-08-06', reasoning }).body
const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }

describe('openai chat request', () => {
  test('system → system message; single text → string content; upstream model id', () => {
    expect(wire({ system: [{ type: 'text', text: 'Be brief.' }] })).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }],
    })
  })

  test('images and PDFs', () => {
    const body = wire({
      messages: [{ role: 'user', content: [
        { type: 'text', text: 'look' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' }, detail: 'low' },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
        { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, title: 'spec.pdf' },
      ] }],
    })
    expect((body.messages as { content: unknown }[])[0].content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
      { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ])
  })

  test('a document URL is refused with a 400, not dropped', () => {
    expect(() => wire({ messages: [{ role: 'user', content: [{ type: 'document', source: { kind: 'url', url: 'https://x/a.pdf' } }] }] })).toThrow(/messages\[0\]\.content\[0\]: a document URL/)
  })

  test('tool calls and results; Anthropic-style results inside a user turn become tool messages first', () => {
    const assistant: Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking', signature: 'sig' },
        { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'get_weather', arguments: '' },
      ],
    }
    const results: Message = {
      role: 'user',
      content: [
        { type: 'tool-result', toolCallId: 'toolu_1', content: 'sunny' },
        { type: 'tool-result', toolCallId: 'toolu_2', content: [{ type: 'text', text: 'rain' }] },
        { type: 'text', text: 'thanks' },
      ],
    }
    const body = wire({ tools: [weather], messages: [user('weather?'), assistant, results] })
    expect(body.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'rain' },
      { role: 'user', content: 'thanks' },
    ])
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: weather.parameters, strict: true } }])
  })

  // Anthropic joins consecutive messages of one side into a turn, so a messages-style client may
  // split one; apart, the first message's calls would reach OpenAI with their answers not next
  test('a turn split over messages: consecutive assistant messages go as one, and the answers come first in the user-side turn after them', () => {
    const call = (id: string): Message => ({ role: 'assistant', content: [{ type: 'tool-call', id, name: 'get_weather', arguments: '{}' }] })
    const body = wire({
      tools: [weather],
      messages: [
        user('weather?'),
        call('t1'),
        { role: 'assistant', content: [{ type: 'text', text: 'and' }, { type: 'tool-call', id: 't2', name: 'get_weather', arguments: '{}' }] },
        { role: 'user', content: [{ type: 'text', text: 'here:' }, { type: 'tool-result', toolCallId: 't1', content: 'sunny' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't2', content: 'rain' }] },
        user('thanks'),
      ],
    })
    expect(body.messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: 'and', tool_calls: [
        { id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
        { id: 't2', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 't1', content: 'sunny' },
      { role: 'tool', tool_call_id: 't2', content: 'rain' },
      { role: 'user', content: 'here:' },
      { role: 'user', content: 'thanks' },
    ])
  })

  // a tool that failed and said nothing: the model still reads that it failed, in a word, not a
  // mark waiting for a message that never came
  test('a failed tool result with no content says Error alone', () => {
    const results: Message = {
      role: 'user',
      content: [
        { type: 'tool-result', toolCallId: 'toolu_1', content: '', isError: true },
        { type: 'tool-result', toolCallId: 'toolu_2', content: [], isError: true },
      ],
    }
    const body = wire({ messages: [user('look'), results] })
    expect((body.messages as unknown[]).slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error' },
    ])
  })

  // a screenshot tool answers with an image alone: the tool message must still say something,
  // and the images that follow must say whose they are
  test('tool results of media: a tool message that points to them, the media of each call under its name', () => {
    const png = { type: 'image' as const, source: { kind: 'base64' as const, mediaType: 'image/png', data: 'iVBOR' } }
    const results: Message = {
      role: 'user',
      content: [
        { type: 'tool-result', toolCallId: 'toolu_1', content: [png] },
        { type: 'tool-result', toolCallId: 'toolu_2', content: [{ type: 'text', text: 'page 2' }, png], isError: true },
      ],
    }
    const body = wire({ messages: [user('look'), results] })
    expect((body.messages as unknown[]).slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: '(the result is the media in the next user message)' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: page 2' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Media of the result of tool call toolu_1:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'text', text: 'Media of the result of tool call toolu_2:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
        ],
      },
    ])
  })

  test('tool_choice, parallel calls, effort, response format, stop, max tokens', () => {
    const body = wire({
      tools: [weather],
      toolChoice: { type: 'tool', name: 'get_weather', disableParallel: true },
      reasoning: { effort: 'high' },
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      stop: ['END'],
      maxTokens: 99,
      temperature: 0.3,
    })
    expect(body).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      reasoning_effort: 'high',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      max_completion_tokens: 99,
    })
    // a model that does not reason takes stop sequences (a reasoning one refuses them: below)
    expect(wire({ stop: ['END'] }, false).stop).toEqual(['END'])
    expect(wire({ tools: [weather], toolChoice: { type: 'required' } }).tool_choice).toBe('required')
  })

  test('a reasoning model refuses stop sequences (o3, gpt-5: "Unsupported parameter"): left out and named; kept for the others and at effort none', () => {
    const at = (over: Partial<GenerationRequest>, reasoning: boolean, compatible = false) => toOpenAIChat(request({ stop: ['END'], ...over }), { upstreamId: 'm', reasoning, compatible })
    expect(at({}, true)).toMatchObject({ leftOut: ['stop'] })
    expect(at({}, true).body).not.toHaveProperty('stop')
    // left out, their count does not matter (OpenAI's limit of 4 is for what it is sent)
    expect(at({ stop: ['a', 'b', 'c', 'd', 'e'] }, true)).toMatchObject({ leftOut: ['stop'] })
    expect(at({ reasoning: { effort: 'none' } }, true)).toMatchObject({ body: { stop: ['END'] }, leftOut: [] })
    expect(at({}, false)).toMatchObject({ body: { stop: ['END'] }, leftOut: [] })
    expect(at({}, true, true)).toMatchObject({ body: { stop: ['END'] }, leftOut: [] })
  })

  test("a reasoning model refuses sampling other than its default: left out and named; kept for the others and at effort none", () => {
    const at = (over: Partial<GenerationRequest>, reasoning: boolean, compatible = false) =>
      toOpenAIChat(request(over), { upstreamId: 'm', reasoning, compatible })
    const sampled = { temperature: 0.3, topP: 0.5 }
    expect(at(sampled, true)).toMatchObject({ leftOut: ['temperature', 'top_p'] })
    expect(at(sampled, true).body).not.toHaveProperty('temperature')
    expect(at(sampled, true).body).not.toHaveProperty('top_p')
    // the default itself is no change: not named
    expect(at({ temperature: 1, topP: 1 }, true).leftOut).toEqual([])
    // GPT-5.1 and later sample at effort none
    expect(at({ ...sampled, reasoning: { effort: 'none' } }, true)).toMatchObject({ body: { temperature: 0.3, top_p: 0.5 }, leftOut: [] })
    expect(at(sampled, false)).toMatchObject({ body: { temperature: 0.3, top_p: 0.5 }, leftOut: [] })
    // another server's reasoning model (a DeepSeek R1 on vLLM) samples as asked
    expect(at(sampled, true, true)).toMatchObject({ body: { temperature: 0.3, top_p: 0.5 }, leftOut: [] })
  })

  test("a Claude tool's cache breakpoint and fields a function has none for are named, once each", () => {
    const tools = [
      { ...weather, cacheControl: { type: 'ephemeral' as const }, providerData: { anthropic: { input_examples: [{ city: 'Paris' }] } } },
      { ...weather, name: 'w2', cacheControl: { type: 'ephemeral' as const } },
    ]
    const r = toOpenAIChat(request({ tools }), { upstreamId: 'm', reasoning: false })
    expect(r.leftOut).toEqual(['tools[].cache_control', 'tools[].input_examples'])
    expect(JSON.stringify(r.body.tools)).not.toContain('input_examples')
  })

  test('a compatible server gets its output cap as max_tokens, which they all read; OpenAI gets max_completion_tokens', () => {
    const cap = (compatible: boolean) => toOpenAIChat(request({ maxTokens: 64 }), { upstreamId: 'm', reasoning: false, compatible }).body
    expect(cap(true)).toMatchObject({ max_tokens: 64 })
    expect(cap(true)).not.toHaveProperty('max_completion_tokens')
    expect(cap(false)).toMatchObject({ max_completion_tokens: 64 })
    expect(cap(false)).not.toHaveProperty('max_tokens')
  })

  test("an effort goes as the model's own tiers: the o-series and GPT-5 have no `none`, only some have a tier above high", () => {
    const at = (upstreamId: string, effort: ReasoningEffort, more: Partial<GenerationRequest> = {}) => toOpenAIChat(request({ reasoning: { effort }, ...more }), { upstreamId, reasoning: true })
    // thinking disabled on the messages surface: o3 always thinks, so no effort, and sampling stays left out
    expect(at('o3', 'none', { temperature: 0.3 })).toMatchObject({ leftOut: ['reasoning_effort.none', 'temperature'] })
    expect(at('o3', 'none').body).not.toHaveProperty('reasoning_effort')
    expect(at('gpt-5-mini', 'none')).toMatchObject({ body: { reasoning_effort: 'minimal' }, leftOut: ['reasoning_effort.none->minimal'] })
    expect(at('gpt-5.1', 'none')).toMatchObject({ body: { reasoning_effort: 'none' }, leftOut: [] })
    expect(at('o4-mini', 'minimal').body.reasoning_effort).toBe('low')
    // no model before gpt-5.1-codex-max has a tier above high; a later one gets the effort as asked
    expect(at('gpt-5', 'max')).toMatchObject({ body: { reasoning_effort: 'high' }, leftOut: ['reasoning_effort.max->high'] })
    expect(at('gpt-5.1', 'xhigh').body.reasoning_effort).toBe('high')
    expect(at('o3', 'xhigh').body.reasoning_effort).toBe('high')
    expect(at('gpt-5.1-codex-max', 'xhigh').body.reasoning_effort).toBe('xhigh')
    // GPT-5.2 to 5.5 top out at xhigh; a later model gets max as asked
    expect(at('gpt-5.2', 'max')).toMatchObject({ body: { reasoning_effort: 'xhigh' }, leftOut: ['reasoning_effort.max->xhigh'] })
    expect(at('gpt-5.4-mini', 'max').body.reasoning_effort).toBe('xhigh')
    expect(at('gpt-5.1-codex-max', 'max').body.reasoning_effort).toBe('xhigh')
    expect(at('gpt-5.6', 'max').body.reasoning_effort).toBe('max')
    // (a minor of two digits is a later model, not 5.2)
    expect(at('gpt-5.25', 'max').body.reasoning_effort).toBe('max')
    // the codex models of 5 and 5.1 think at least at low
    expect(at('gpt-5.1-codex', 'none')).toMatchObject({ body: { reasoning_effort: 'low' }, leftOut: ['reasoning_effort.none->low'] })
    expect(at('gpt-5-codex', 'minimal').body.reasoning_effort).toBe('low')
    expect(at('gpt-5.2-codex', 'none').body.reasoning_effort).toBe('none')
    // GPT-6 has no none (low to max)
    expect(at('gpt-6.2-sol', 'none')).toMatchObject({ body: { reasoning_effort: 'low' }, leftOut: ['reasoning_effort.none->low'] })
    expect(at('gpt-6.2-sol', 'max').body.reasoning_effort).toBe('max')
    // GPT-5.1 on has no minimal (none is below low); a pro model thinks at high alone
    expect(at('gpt-5.1', 'minimal').body.reasoning_effort).toBe('low')
    expect(at('gpt-5-pro', 'low').body.reasoning_effort).toBe('high')
    expect(at('o3-pro', 'none').body.reasoning_effort).toBe('high')
  })

  test('a model that does not reason gets no reasoning effort (Claude thinking translated for gpt-4o would be a 400)', () => {
    expect(wire({ reasoning: { effort: 'low' } }, false)).not.toHaveProperty('reasoning_effort')
    expect(wire({ reasoning: { effort: 'low' } }, true).reasoning_effort).toBe('low')
  })

  test("an assistant turn's text: adjacent blocks (cut by citations) join as they are; text either side of a tool call keeps a blank line between", () => {
    const assistant: Message = { role: 'assistant', content: [
      { type: 'text', text: 'The answer is ' }, { type: 'text', text: '42' }, { type: 'text', text: '. Let me check' },
      { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{}' },
      { type: 'text', text: 'and also' },
    ] }
    const sent = (wire({ messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, assistant] }).messages as Record<string, unknown>[])[1]!
    expect(sent.content).toBe('The answer is 42. Let me check\n\nand also')
    expect(sent.tool_calls).toHaveLength(1)
  })

  test('holds here too; top_k refused; more than 4 stop sequences refused (Claude has no such limit)', () => {
    expect(() => wire({ tools: [weather], toolChoice: { type: 'tool', name: 'nope' } })).toThrow(/not among the request's tools/)
    expect(() => wire({ topK: 3 })).toThrow(/top_k/)
    expect(() => wire({ stop: ['a', 'b', 'c', 'd', 'e'] }, false)).toThrow(/at most 4; got 5/)
    expect(wire({ stop: ['a', 'b', 'c', 'd'] }, false).stop).toEqual(['a', 'b', 'c', 'd'])
  })

  test('providerData.openai merged as is, but include_usage stays on for streams', () => {
    const body = wire({ stream: true, providerData: { openai: { seed: 7, logit_bias: { '1': 2 }, stream_options: { include_usage: false } }, anthropic: { top_k: 1 } } })
    expect(body).toMatchObject({ seed: 7, logit_bias: { '1': 2 }, stream: true, stream_options: { include_usage: true } })
    expect(body.top_k).toBeUndefined()
  })
})
