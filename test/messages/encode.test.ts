// IR → the Anthropic Message reply: ids, the stop-reason table, disjoint usage,
// content blocks; the in-band error frame's type table; the prompt text.
import { describe, expect, test } from 'bun:test'
import { HttpError } from '../../src/http/errors.ts'
import { UpstreamError } from '../../src/ir/errors.ts'
import type { FinishReason, GenerationResponse } from '../../src/ir/types.ts'
import { encodeMessagesResponse, messagesId, messagesStopReason, messagesUsage } from '../../src/surfaces/messages/encode.ts'
import { messagesErrorFrame } from '../../src/surfaces/messages/errors.ts'
import { messagesPromptText } from '../../src/surfaces/messages/prompt.ts'
import { CLAUDE_CODE_BODY } from './helpers.ts'

const usage = { inputTokens: 5, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 20 }

function response(over: Partial<GenerationResponse> = {}): GenerationResponse {
  return { id: 'chatcmpl-AbC_1', model: 'gpt-4o-2024-08-06', created: 0, content: [{ type: 'text', text: 'hi' }], finish: { reason: 'stop', raw: 'stop' }, usage, ...over }
}

describe('messagesId', () => {
  test('msg_ ids are kept; others become msg_ + their letters and digits', () => {
    expect(messagesId('msg_01Fg1JVgvCYUHWsxrj9GkpEv')).toBe('msg_01Fg1JVgvCYUHWsxrj9GkpEv')
    expect(messagesId('chatcmpl-AbC_1')).toBe('msg_chatcmplAbC1')
    expect(messagesId('gen-123')).toBe(messagesId('gen-123'))
    expect(messagesId('')).toMatch(/^msg_[0-9a-f]{24}$/)
  })
})

describe('messagesStopReason', () => {
  const TABLE: [FinishReason, string][] = [
    ['stop', 'end_turn'], ['length', 'max_tokens'], ['tool_calls', 'tool_use'], ['refusal', 'refusal'],
    ['content_filter', 'refusal'], ['pause', 'pause_turn'], ['context_exceeded', 'model_context_window_exceeded'],
  ]
  for (const [reason, want] of TABLE) test(`${reason} → ${want}`, () => expect(messagesStopReason({ reason })).toBe(want))
  test('a matched stop sequence → stop_sequence with the sequence set', () => {
    const r = encodeMessagesResponse(response({ finish: { reason: 'stop', raw: 'stop', stopSequence: 'END' } }), 'gpt-4o')
    expect([r.stop_reason, r.stop_sequence]).toEqual(['stop_sequence', 'END'])
    expect(messagesStopReason({ reason: 'stop', raw: 'stop_sequence', stopSequence: null })).toBe('stop_sequence')
  })
  test('other: the raw reason goes out as it is, never disguised; none at all is end_turn', () => {
    expect(messagesStopReason({ reason: 'other', raw: 'compaction_turn' })).toBe('compaction_turn')
    expect(messagesStopReason({ reason: 'other' })).toBe('end_turn')
    expect(messagesStopReason({ reason: 'other', raw: '' })).toBe('end_turn')
  })
})

describe('encodeMessagesResponse', () => {
  test('the Message shape; usage buckets disjoint', () => {
    expect(encodeMessagesResponse(response(), 'gpt-4o')).toEqual({
      id: 'msg_chatcmplAbC1', type: 'message', role: 'assistant', model: 'gpt-4o',
      content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null, diagnostics: null, context_management: null,
      usage: {
        input_tokens: 5, output_tokens: 7, cache_creation_input_tokens: 20, cache_read_input_tokens: 100,
        cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 }, output_tokens_details: null, server_tool_use: null, iterations: null,
        service_tier: null, inference_geo: null, speed: null,
      },
    })
    expect(messagesUsage(usage)).toEqual({ input_tokens: 5, output_tokens: 7, cache_creation_input_tokens: 20, cache_read_input_tokens: 100 })
  })
  // The SDK's types declare these present (nullable); a typed client reads them.
  test('cache writes by lifetime, searches run, and a refusal in stop_details', () => {
    const r = encodeMessagesResponse(response({
      usage: { ...usage, cacheWrite1hTokens: 15, webSearches: 2 }, finish: { reason: 'refusal' },
    }), 'gpt-4o')
    expect(r.usage).toMatchObject({
      cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 15 }, server_tool_use: { web_search_requests: 2 },
    })
    expect(r.stop_reason).toBe('refusal')
    expect(r.stop_details).toEqual({ type: 'refusal', category: null, explanation: null })
  })
  test('tool_use input parsed ({} when empty); thinking with signature; redacted; empty text left out', () => {
    const r = encodeMessagesResponse(response({
      content: [
        { type: 'reasoning', text: 'hmm', signature: 'sig+/=' },
        { type: 'reasoning', text: '', redacted: 'R==' },
        { type: 'reasoning', text: '' },
        { type: 'text', text: '' },
        { type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":[1]}' },
        { type: 'tool-call', id: 'call_2', name: 'g', arguments: '' },
      ],
      finish: { reason: 'tool_calls' },
    }), 'gpt-4o')
    expect(r.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig+/=' },
      { type: 'redacted_thinking', data: 'R==' },
      { type: 'tool_use', id: 'call_1', name: 'f', input: { a: [1] } },
      { type: 'tool_use', id: 'call_2', name: 'g', input: {} },
    ])
    expect(r.stop_reason).toBe('tool_use')
  })
})

describe('messagesErrorFrame', () => {
  const parse = (frame: string) => {
    expect(frame).toStartWith('event: error\ndata: ')
    expect(frame.endsWith('\n\n')).toBe(true)
    return JSON.parse(frame.slice('event: error\ndata: '.length))
  }
  const TABLE: [number, string][] = [
    [400, 'invalid_request_error'], [401, 'authentication_error'], [403, 'permission_error'], [404, 'not_found_error'],
    [413, 'request_too_large'], [429, 'rate_limit_error'], [499, 'api_error'], [500, 'api_error'], [502, 'api_error'],
    [503, 'overloaded_error'], [529, 'overloaded_error'], [422, 'invalid_request_error'],
  ]
  for (const [status, type] of TABLE) {
    test(`${status} → ${type}`, () => expect(parse(messagesErrorFrame(new HttpError(status, 'boom')))).toEqual({ type: 'error', error: { type, message: 'boom' } }))
  }
  test('an Anthropic error type of its own is kept (overloaded stays overloaded)', () => {
    const e = new UpstreamError({ status: 502, message: 'Overloaded', type: 'overloaded_error' })
    expect(parse(messagesErrorFrame(e)).error).toEqual({ type: 'overloaded_error', message: 'Overloaded' })
    expect(parse(messagesErrorFrame(new UpstreamError({ status: 502, message: 'x', type: 'stream_error' }))).error.type).toBe('api_error')
  })
  test('anything thrown gives a well-formed frame', () => {
    for (const e of [undefined, null, 'x', 5, {}, new Error('plain')]) expect(parse(messagesErrorFrame(e)).type).toBe('error')
  })
})

describe('messagesPromptText', () => {
  test('system, message text, tool_use inputs, tool_result text and tool definitions', () => {
    const text = messagesPromptText(CLAUDE_CODE_BODY)
    for (const part of ['x-anthropic-billing-header', 'You are Claude Code.', 'mock: tool Bash', '<env>cwd: /tmp</env>', '"command":"echo sy-ok"', 'sy-ok', 'DeferredToolPlaceholder', '"defer_loading":true']) {
      expect(text).toContain(part)
    }
  })
  test('any body, even an invalid one', () => {
    for (const b of [{}, { messages: 'x' }, { messages: [null, 5, { content: [null, { type: 'tool_result', content: [{ type: 'text', text: 'r' }] }] }] }, { system: 5, tools: 'x' }]) {
      expect(typeof messagesPromptText(b as Record<string, unknown>)).toBe('string')
    }
  })
})
