import { describe, expect, test } from 'bun:test'
import type { GenerationResponse, StreamEvent, Usage } from '../../src/ir/types.ts'
import { chatFinishReason, encodeChatResponse } from '../../src/surfaces/chat/encode.ts'
import { PING_FRAME, sseBody } from '../../src/pipeline/sse.ts'
import { chatErrorFrame, createChatStreamEncoder } from '../../src/surfaces/chat/stream.ts'

const usage: Usage = { inputTokens: 10, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 50, reasoningTokens: 3 }

describe('encode', () => {
  test('text, tool calls with JSON-string arguments, finish, usage counting cache reads and writes', () => {
    const r: GenerationResponse = {
      id: 'msg_1', model: 'claude-x', created: 1700000000,
      content: [
        { type: 'reasoning', text: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'world' },
        { type: 'tool-call', id: 'toolu_1', name: 'get', arguments: '{"a":1}' },
      ],
      finish: { reason: 'tool_calls', raw: 'tool_use' },
      usage,
    }
    expect(encodeChatResponse(r, 'claude-x')).toEqual({
      id: 'msg_1', object: 'chat.completion', created: 1700000000, model: 'claude-x',
      choices: [{ index: 0, logprobs: null, finish_reason: 'tool_calls', message: {
        role: 'assistant', content: 'Hello world', refusal: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }],
        reasoning_content: 'hmm',
        thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }],
      } }],
      usage: { prompt_tokens: 160, completion_tokens: 7, total_tokens: 167, prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 50 }, completion_tokens_details: { reasoning_tokens: 3 } },
    })
  })
  test('finish table maps refusal, pause, context window; unknown never silently stop', () => {
    expect(chatFinishReason({ reason: 'stop', raw: 'end_turn' })).toBe('stop')
    expect(chatFinishReason({ reason: 'stop', raw: 'stop_sequence' })).toBe('stop')
    expect(chatFinishReason({ reason: 'length', raw: 'max_tokens' })).toBe('length')
    expect(chatFinishReason({ reason: 'refusal', raw: 'refusal' })).toBe('content_filter')
    expect(chatFinishReason({ reason: 'pause', raw: 'pause_turn' })).toBe('length')
    expect(chatFinishReason({ reason: 'context_exceeded', raw: 'model_context_window_exceeded' })).toBe('length')
    expect(chatFinishReason({ reason: 'other', raw: 'brand_new_reason' })).toBe('brand_new_reason')
  })
})

function run(events: StreamEvent[], includeUsage: boolean): string {
  const enc = createChatStreamEncoder({ id: 'fallback', model: 'm', created: 1, includeUsage })
  return events.map((e) => enc.push(e)).join('')
}

const frames = (text: string) => text.split('\n\n').filter(Boolean).map((f) => f.slice('data: '.length))

describe('stream encoder bytes, as OpenAI writes them', () => {
  const toolEvents: StreamEvent[] = [
    { type: 'start', id: 'msg_9', model: 'claude-x', created: 1700000000 },
    { type: 'text-delta', text: 'Let me check.' },
    // Anthropic content-block indexes 1 and 2 become chat tool indexes 0 and 1
    { type: 'tool-input-start', index: 1, id: 'toolu_a', name: 'weather' },
    { type: 'tool-input-delta', index: 1, delta: '{"city":' },
    { type: 'tool-input-start', index: 2, id: 'toolu_b', name: 'stock' },
    { type: 'tool-input-delta', index: 2, delta: '{"t":"AAPL"}' },
    { type: 'tool-input-delta', index: 1, delta: '' },
    { type: 'tool-input-delta', index: 1, delta: '"Paris"}' },
    { type: 'tool-input-end', index: 1 },
    { type: 'tool-input-end', index: 2 },
    { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_use' }, usage },
  ]
  test('exact frames with include_usage (stable tool indexes, empty argument pieces skipped, usage chunk last)', () => {
    const out = run(toolEvents, true)
    const head = '{"id":"msg_9","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[{"index":0,"delta":'
    const tail = (f: string) => `,"logprobs":null,"finish_reason":${f}}],"usage":null}`
    expect(frames(out)).toEqual([
      head + '{"role":"assistant","content":null}' + tail('null'),
      head + '{"content":"Let me check."}' + tail('null'),
      head + '{"tool_calls":[{"index":0,"id":"toolu_a","type":"function","function":{"name":"weather","arguments":""}}]}' + tail('null'),
      head + '{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]}' + tail('null'),
      head + '{"tool_calls":[{"index":1,"id":"toolu_b","type":"function","function":{"name":"stock","arguments":""}}]}' + tail('null'),
      head + '{"tool_calls":[{"index":1,"function":{"arguments":"{\\"t\\":\\"AAPL\\"}"}}]}' + tail('null'),
      head + '{"tool_calls":[{"index":0,"function":{"arguments":"\\"Paris\\"}"}}]}' + tail('null'),
      head + '{}' + tail('"tool_calls"'),
      '{"id":"msg_9","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[],"usage":{"prompt_tokens":160,"completion_tokens":7,"total_tokens":167,"prompt_tokens_details":{"cached_tokens":100,"cache_write_tokens":50},"completion_tokens_details":{"reasoning_tokens":3}}}',
      '[DONE]',
    ])
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true)
  })
  test('without include_usage: no usage chunk and no usage field', () => {
    const out = run(toolEvents, false)
    expect(out).not.toContain('usage')
    expect(out.endsWith('"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n')).toBe(true)
  })
  test('role arrives on the first delta even without a start event; tool arguments given only at the end still come', () => {
    const out = run([
      { type: 'tool-input-start', index: 0, id: 'c', name: 'f' },
      { type: 'tool-input-delta', index: 0, delta: '{"x":1}' },
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ], false)
    const f = frames(out).map((x) => (x === '[DONE]' ? x : JSON.parse(x)))
    expect(f[0].choices[0].delta.role).toBe('assistant')
    expect(f[0].id).toBe('fallback')
    expect(f[2].choices[0].delta.tool_calls[0].function.arguments).toBe('{"x":1}')
  })
  test('a chunk written before `start` keeps the fallback id; every chunk after it carries the new one; text is escaped as JSON', () => {
    const text = 'say "hi"\n\u2028 \\ é 🙂'
    const out = run([
      { type: 'text-delta', text: 'a' },
      { type: 'start', id: 'msg_2', model: 'claude-y', created: 1700000001 },
      { type: 'text-delta', text },
      { type: 'finish', finish: { reason: 'stop' }, usage },
    ], true)
    const f = frames(out).slice(0, -1).map((x) => JSON.parse(x))
    expect(f.map((c) => [c.id, c.model, c.created])).toEqual([
      ['fallback', 'm', 1], ['fallback', 'm', 1], ['msg_2', 'claude-y', 1700000001], ['msg_2', 'claude-y', 1700000001], ['msg_2', 'claude-y', 1700000001],
    ])
    expect(f[2].choices[0].delta).toEqual({ content: text })
    // the same bytes as the chunk object written whole
    expect(frames(out)[2]).toBe(JSON.stringify({ id: 'msg_2', object: 'chat.completion.chunk', created: 1700000001, model: 'claude-y', choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }], usage: null }))
  })
  test('a delta for a tool that never started is dropped, not sent', () => {
    const out = run([{ type: 'start', id: 'x', model: 'm', created: 1 }, { type: 'tool-input-delta', index: 5, delta: '{}' }], false)
    expect(out).not.toContain('tool_calls')
  })
  test('mid-stream error: no finish frame and no [DONE], so the client sees the failure', () => {
    const out = run([
      { type: 'start', id: 'x', model: 'm', created: 1 },
      { type: 'text-delta', text: 'Hel' },
      { type: 'error', error: { status: 529, message: 'Overloaded', type: 'overloaded_error' } },
      { type: 'text-delta', text: 'lo' },
    ], true)
    expect(out).not.toContain('[DONE]')
    expect(out).not.toContain('finish_reason":"')
    expect(out).not.toContain('lo"')
  })
})

describe('SSE body', () => {
  test('`: ping` comments while the source is silent, then the frames', async () => {
    async function* slow() {
      yield 'data: 1\n\n'
      await Bun.sleep(120)
      yield 'data: 2\n\n'
    }
    const text = await new Response(sseBody(slow(), { pingMs: 25 })).text()
    expect(text.startsWith('data: 1\n\n' + PING_FRAME)).toBe(true)
    expect(text.endsWith(PING_FRAME + 'data: 2\n\n')).toBe(true)
    expect(text.split(PING_FRAME).length - 1).toBeGreaterThanOrEqual(2)
  })
  test('a cancelled body tells the caller and stops the source', async () => {
    let cancelled = false
    let cleaned = false
    async function* forever() {
      try {
        for (;;) {
          yield 'data: x\n\n'
          await Bun.sleep(5)
        }
      } finally {
        cleaned = true
      }
    }
    const reader = sseBody(forever(), { onCancel: () => (cancelled = true) }).getReader()
    await reader.read()
    await reader.cancel()
    expect(cancelled).toBe(true)
    expect(cleaned).toBe(true)
  })
  test('a failing source errors the body (an abrupt end, not a clean close)', async () => {
    async function* failing() {
      yield 'data: a\n\n'
      throw new Error('boom')
    }
    const reader = sseBody(failing()).getReader()
    await reader.read()
    await expect(reader.read()).rejects.toThrow('boom')
  })

  test('with an error frame, a failing source writes it and ends without the terminator', async () => {
    async function* failing() {
      yield 'data: a\n\n'
      throw Object.assign(new Error('upstream went away'), { status: 502 })
    }
    const text = await new Response(sseBody(failing(), { errorFrame: chatErrorFrame })).text()
    expect(text).toBe('data: a\n\ndata: {"error":{"message":"upstream went away","type":"upstream_error","code":502}}\n\n')
  })
})
