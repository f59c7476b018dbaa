// The pass-through taps read a plain text delta without parsing it (sse-fast.ts). On every
// recorded stream, split at every byte boundary (800 cuts spread over the long ones), what they read —
// id, usage, finish, status, the produced text — and what they relay must be what the full
// parse of every event gives. The full way is forced by CRLF line endings, which the fast
// reads leave to eventFields.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { anthropicMessagesTap, plainBlockDelta } from '../../src/providers/anthropic/tap.ts'
import { openAIResponsesTap, plainResponsesDelta } from '../../src/providers/openai/responses-tap.ts'
import { openAIChatTap, plainChatChunk } from '../../src/providers/openai/tap.ts'
import type { WireTap } from '../../src/providers/types.ts'
import { EventSplitter } from '../../src/routing/sse-events.ts'
import { jsonStringAt, plainEvent } from '../../src/routing/sse-fast.ts'

const DIR = join(import.meta.dir, '..', 'fixtures')
const streams = (sub: string) => readdirSync(join(DIR, sub)).filter((f) => f.endsWith('.sse')).map((f) => [f, readFileSync(join(DIR, sub, f), 'utf8')] as const)

/** The upstream text relayed through a fresh tap, cut into two at `at` (none when undefined). */
function relay(make: () => WireTap, sse: string, at?: number) {
  const tap = make()
  const split = new EventSplitter()
  let out = ''
  const pieces = at === undefined ? [sse] : [sse.slice(0, at), sse.slice(at)]
  for (const p of pieces) for (const ev of split.push(p)) out += tap.event(ev) ?? ''
  const rest = split.rest()
  if (rest) out += tap.event(rest) ?? ''
  return { out, state: { ...tap.state }, produced: tap.producedText() }
}

const TAPS: [string, string, () => WireTap][] = [
  ['openai/chat', 'chat, usage kept', () => openAIChatTap()],
  ['openai/chat', 'chat, usage stripped', () => openAIChatTap({ stripUsage: true })],
  ['anthropic/messages', 'messages', () => anthropicMessagesTap()],
  ['openai/responses', 'responses', () => openAIResponsesTap()],
]

describe('pass-through taps: the fast reads of a delta agree with the full parse', () => {
  for (const [dir, label, make] of TAPS)
    for (const [name, sse] of streams(dir)) {
      test(`${label}: ${name}`, () => {
        const full = relay(make, sse.replaceAll('\n', '\r\n'))
        const expected = { ...full, out: full.out.replaceAll('\r\n', '\n') }
        expect(relay(make, sse)).toEqual(expected)
        const stride = sse.length > 8000 ? Math.ceil(sse.length / 800) : 1
        for (let at = 1; at < sse.length; at += stride) {
          const r = relay(make, sse, at)
          if (r.out !== expected.out || r.produced !== expected.produced) throw new Error(`${name} cut at ${at}: relayed or produced text differs`)
          expect(r.state).toEqual(expected.state)
        }
      }, 30_000)
    }
})

describe('what a fast read leaves to the full parse', () => {
  const chunk = (delta: string, extra = '') => `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]${extra}}`
  test('chat: a text chunk is read; usage, finish, tool calls, refusals, errors, two contents are not', () => {
    expect(plainChatChunk(chunk('{"content":"Hi"}'), false)).toEqual({ text: 'Hi', data: chunk('{"content":"Hi"}') })
    expect(plainChatChunk(chunk('{"content":"Hi"}', ',"usage":null'), true)).toEqual({ text: 'Hi', data: chunk('{"content":"Hi"}') })
    expect(plainChatChunk(chunk('{"content":"Hi"}', ',"usage":{"prompt_tokens":1}'), false)).toBeUndefined()
    expect(plainChatChunk(chunk('{"content":"Hi"}').replace('"finish_reason":null', '"finish_reason":"stop"'), false)).toBeUndefined()
    expect(plainChatChunk(chunk('{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}'), false)).toBeUndefined()
    expect(plainChatChunk(chunk('{"refusal":"no"}'), false)).toBeUndefined()
    expect(plainChatChunk('{"error":{"message":"x"},"choices":[{}]}', false)).toBeUndefined()
    expect(plainChatChunk(chunk('{"content":"Hi"}').replace('"logprobs":null', '"logprobs":{"content":[]}'), false)).toBeUndefined()
    // text that spells out what the record looks for is only text: its quotes are escaped
    const sly = chunk(JSON.stringify({ content: 'say "usage":{"prompt_tokens":9} and "finish_reason":"stop"' }))
    expect(plainChatChunk(sly, false)?.text).toBe('say "usage":{"prompt_tokens":9} and "finish_reason":"stop"')
  })
  test('messages and responses: only their plain deltas', () => {
    expect(plainBlockDelta('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\nb"}}')).toBe('a\nb')
    expect(plainBlockDelta('{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"x\\""}}')).toBe('{"x"')
    expect(plainBlockDelta('{"type":"content_block_delta","index":0,"delta":{"type":"new_delta","text":"a"}}')).toBeUndefined()
    expect(plainBlockDelta('{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}')).toBeUndefined()
    expect(plainBlockDelta('{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"},"type":"message_delta"}')).toBeUndefined()
    expect(plainResponsesDelta('{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"Hi"}')).toBe('Hi')
    expect(plainResponsesDelta('{"type":"response.completed","response":{"usage":{}}}')).toBeUndefined()
    expect(plainResponsesDelta('{"type":"response.output_text.delta","delta":{"x":1}}')).toBeUndefined()
  })
  test('an event in another shape goes the full way: CRLF, several data lines, no blank line', () => {
    expect(plainEvent('data: {}\r\n\r\n')).toBeUndefined()
    expect(plainEvent('data: {\ndata: }\n\n')).toBeUndefined()
    expect(plainEvent('data: {}')).toBeUndefined()
    expect(plainEvent('event: e\ndata: {}\n\n')).toEqual({ event: 'e', data: '{}' })
  })
  test('a string that does not close, or does not decode, is no read', () => {
    expect(jsonStringAt('"abc', 1)).toBeUndefined()
    expect(jsonStringAt('"a\\qb"', 1)).toBeUndefined()
    expect(jsonStringAt('"a\\"b" x', 1)).toEqual({ value: 'a"b', end: 6 })
  })
  test('a malformed or surprising event never breaks the relay nor loses usage', () => {
    const sse = fixture('openai/chat/stream-text-include-usage.sse')
    const cut = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"unterminated\n\n'
    const at = sse.indexOf('data: ', sse.indexOf('data: ') + 1)
    const r = relay(() => openAIChatTap(), sse.slice(0, at) + cut + sse.slice(at))
    expect(r.out).toContain(cut)
    expect(r.state.usage).toEqual({ inputTokens: 78, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 })
    expect(r.state.finishReason).toBe('stop')
  })
})

function fixture(p: string) {
  return readFileSync(join(DIR, p), 'utf8')
}
