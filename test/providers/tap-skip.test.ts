// The pass-through taps read a plain text delta without parsing it (sse-fast.ts). On every
// recorded stream, split at every byte boundary (300 cuts spread over those past 4,000 bytes), what they read —
// id, usage, finish, status, the produced text — and what they relay must be what the full
// parse of every event gives. The full way is forced by CRLF line endings, which the fast
// reads leave to eventFields.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { anthropicMessagesTap, plainBlockDelta } from '../../src/providers/anthropic/tap.ts'
import { openAIResponsesTap, plainResponsesDelta } from '../../src/providers/openai/responses-tap.ts'
import { openAIChatTap, plainChatBytes, plainChatChunk } from '../../src/providers/openai/tap.ts'
import { NOT_PLAIN } from '../../src/providers/plain-reads.ts'
import { found, plainEventAt } from '../../src/routing/sse-bytes.ts'
import type { WireTap } from '../../src/providers/types.ts'
import { EventSplitter } from '../../src/routing/sse-events.ts'
import { jsonStringAt, plainEvent } from '../../src/routing/sse-fast.ts'
import { EventReads, GuardedTap } from '../../src/pipeline/relay.ts'

const DIR = join(import.meta.dir, '..', 'fixtures')
const streams = (sub: string) => readdirSync(join(DIR, sub)).filter((f) => f.endsWith('.sse')).map((f) => [f, readFileSync(join(DIR, sub, f), 'utf8')] as const)

/** The upstream text relayed through a fresh tap, cut into two at `at` (none when undefined). */
function relay(make: () => WireTap, sse: string, at?: number) {
  const tap = make()
  const split = new EventSplitter()
  let out = ''
  const pieces = at === undefined ? [sse] : [sse.slice(0, at), sse.slice(at)]
  for (const p of pieces) for (const ev of split.push(p)) out += tap.event(ev) ?? ''
  // a last event the upstream left without its blank line goes on with one, as the relay sends it
  const rest = split.rest()
  if (rest) out += tap.event(rest.replace(/[\r\n]*$/, '\n\n')) ?? ''
  return { out, state: { ...tap.state }, produced: tap.producedText() }
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/** The relay's own reads of a fresh tap (a tap that throws fails the test). */
const readsOf = (make: () => WireTap) =>
  new EventReads(new GuardedTap(make(), (e) => {
    throw e
  }))

/**
 * Upstream reads through the relay's own reads, as bytes: a read of whole plain events is read
 * where it lies and goes on as it came (`inPlace` counts those), any other goes the text way.
 */
function relayReads(make: () => WireTap, upstream: Uint8Array[]) {
  const reads = readsOf(make)
  const sent: Uint8Array[] = []
  let inPlace = 0
  for (const r of upstream) {
    const frame = reads.read(r)
    if (typeof frame !== 'string') inPlace++
    sent.push(typeof frame === 'string' ? enc.encode(frame) : frame.slice())
  }
  const last = reads.end()
  if (last !== undefined) sent.push(enc.encode(last))
  return { out: dec.decode(Buffer.concat(sent)), state: { ...reads.tap.state }, produced: reads.tap.producedText(), inPlace }
}

/** `sse` as two reads cut at the byte `at`. */
function cutAt(sse: string, at: number): Uint8Array[] {
  const bytes = enc.encode(sse)
  return [bytes.subarray(0, at), bytes.subarray(at)]
}

/** `sse` as one read an event (the last without its blank line, if it has none). */
const eventByEvent = (sse: string): Uint8Array[] => sse.match(/[\s\S]*?\n\n|[\s\S]+$/g)!.map((ev) => enc.encode(ev))

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
        const stride = sse.length > 4000 ? Math.ceil(sse.length / 300) : 1
        for (let at = 1; at < sse.length; at += stride) {
          const r = relay(make, sse, at)
          if (r.out !== expected.out || r.produced !== expected.produced) throw new Error(`${name} cut at ${at}: relayed or produced text differs`)
          expect(r.state).toEqual(expected.state)
        }
        // the relay's reads of bytes, event by event and cut anywhere, agree with the full parse too
        const { inPlace, ...byEvent } = relayReads(make, eventByEvent(sse))
        expect(byEvent).toEqual(expected)
        // a stream of text deltas is read where it lies, in part at least
        if (name.includes('text')) expect(inPlace).toBeGreaterThan(0)
        const length = enc.encode(sse).length
        const byteStride = length > 4000 ? Math.ceil(length / 300) : 1
        for (let at = 1; at < length; at += byteStride) {
          const { inPlace: _, ...r } = relayReads(make, cutAt(sse, at))
          if (r.out !== expected.out || r.produced !== expected.produced) throw new Error(`${name} bytes cut at ${at}: relayed or produced text differs`)
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
  test("chat: reasoning a server of the wire sends (DeepSeek's reasoning_content, vLLM's reasoning) goes the full way, and counts as produced", () => {
    expect(plainChatChunk(chunk('{"content":null,"reasoning_content":"Let me"}'), false)).toBeUndefined()
    expect(plainChatChunk(chunk('{"reasoning":"Let me"}'), false)).toBeUndefined()
    // beside the answer's text, a null reasoning is no reasoning: still a plain chunk
    expect(plainChatChunk(chunk('{"content":"Hi","reasoning_content":null}'), false)).toEqual({ text: 'Hi', data: chunk('{"content":"Hi","reasoning_content":null}') })
    const sse = [chunk('{"role":"assistant","content":null,"reasoning_content":"Think"}'), chunk('{"content":null,"reasoning":"ing."}'), chunk('{"content":"Hi","reasoning_content":null}')].map((c) => `data: ${c}\n\n`).join('')
    const full = relay(() => openAIChatTap(), sse.replaceAll('\n', '\r\n'))
    expect(full.produced).toBe('Thinking.Hi')
    expect(relay(() => openAIChatTap(), sse).produced).toBe('Thinking.Hi')
    const { inPlace, ...byEvent } = relayReads(() => openAIChatTap(), eventByEvent(sse))
    expect(byEvent.produced).toBe('Thinking.Hi')
    expect(byEvent.out).toBe(sse)
    expect(inPlace).toBeGreaterThan(0)
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
  test('read as bytes, a chunk is plain only in the shape the text way reads; what it relays and records agrees', () => {
    const first = `data: ${chunk('{"role":"assistant","content":""}', ',"usage":null')}\n\n`
    const tricky = [
      chunk('{"content":"Hi"}', ',"usage":null,"obfuscation":"x"'),
      // a null usage that is not the chunk's own member stays where it is
      chunk('{"content":"Hi","usage":null}'),
      `{"usage":null,"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
      chunk(JSON.stringify({ content: 'say \\"usage\\":null, \u00e9 \n "quoted" ,"usage":null' }), ',"usage":null'),
      chunk('{"content":"x","refusal":""}', ',"usage":null'),
      chunk('{"content":"\\u00e9\\u"}', ',"usage":null'),
      chunk('{"content":null}', ',"usage":null'),
    ]
    const end = `data: ${chunk('{}', ',"usage":null').replace('"finish_reason":null', '"finish_reason":"stop"')}\n\ndata: {"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\ndata: [DONE]\n\n`
    const sse = first + tricky.map((d) => `data: ${d}\n\n`).join('') + end
    for (const strip of [false, true]) {
      const make = () => openAIChatTap({ stripUsage: strip })
      const full = relay(make, sse.replaceAll('\n', '\r\n'))
      const expected = { ...full, out: full.out.replaceAll('\r\n', '\n') }
      const { inPlace, ...byEvent } = relayReads(make, eventByEvent(sse))
      expect(byEvent).toEqual(expected)
      expect(inPlace).toBeGreaterThanOrEqual(4)
      // two events in one read, each with a null usage to cut
      const reads = readsOf(make)
      reads.read(enc.encode(first))
      const two = `data: ${tricky[0]}\n\ndata: ${tricky[0]}\n\n`
      const sent = reads.read(enc.encode(two))
      expect(typeof sent).not.toBe('string')
      expect(dec.decode(sent as Uint8Array)).toBe(strip ? two.replaceAll(',"usage":null', '') : two)
    }
  })
  test('chat: the check of bytes and the check of text agree on a chunk with any member spliced in anywhere', () => {
    // the bytes are checked in one pass over the data's quotes; the text by a search per name
    const base = chunk('{"content":"Hi \\"there\\""}', ',"usage":null,"obfuscation":"ab"')
    const snippets = ['"error"', '"usage":null', ',"usage":null', '"usage":{}', '"content":"x"', '"content":null', '"refusal":""', '"refusal":"no"', '"finish_reason":null', '"finish_reason":"stop"', '"tool_calls"', '"function_call"', '"choices":[{', '\\"', '"', '}', '{', 'null']
    let plain = 0
    let cases = 0
    for (const snippet of snippets)
      for (let at = 0; at <= base.length; at++) {
        const data = base.slice(0, at) + snippet + base.slice(at)
        for (const strip of [false, true]) {
          cases++
          const text = plainChatChunk(data, strip)
          const b = enc.encode(`data: ${data}\n\n`)
          let cut = plainEventAt(b, 0) ? plainChatBytes(b, strip) : NOT_PLAIN
          // a text with escapes is decoded after the check (plain-reads.ts); one that does not decode is no read
          const raw = dec.decode(b.subarray(found.textFrom, found.textTo))
          const read = found.escaped ? jsonStringAt(`"${raw}"`, 1)?.value : raw
          if (read === undefined) cut = NOT_PLAIN
          if (text === undefined) {
            expect({ data, strip, cut }).toEqual({ data, strip, cut: NOT_PLAIN })
            continue
          }
          plain++
          expect({ data, strip, plain: cut !== NOT_PLAIN }).toEqual({ data, strip, plain: true })
          expect(read).toBe(text.text)
          const sent = cut >= 0 ? data.slice(0, cut - 6) + data.slice(cut - 6 + ',"usage":null'.length) : data
          expect(sent).toBe(text.data)
        }
      }
    // both kinds were met
    expect(plain).toBeGreaterThan(100)
    expect(cases - plain).toBeGreaterThan(1000)
  })
  test('a read of hundreds of plain events (a burst after a stall) is read in place, each event on its own', () => {
    const first = `data: ${chunk('{"role":"assistant","content":""}')}\n\n`
    const words = Array.from({ length: 400 }, (_, i) => ` w${i}`)
    const burst = words.map((w) => `data: ${chunk(JSON.stringify({ content: w }))}\n\n`).join('')
    const reads = readsOf(() => openAIChatTap())
    reads.read(enc.encode(first))
    const sent = reads.read(enc.encode(burst))
    expect(typeof sent).not.toBe('string')
    expect(dec.decode(sent as Uint8Array)).toBe(burst)
    expect(reads.tap.producedText()).toBe(words.join(''))
  })
  test('a malformed event is noted and not sent on (the relay fails the stream there); the tap goes on reading', () => {
    const sse = fixture('openai/chat/stream-text-include-usage.sse')
    const cut = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"unterminated\n\n'
    const at = sse.indexOf('data: ', sse.indexOf('data: ') + 1)
    const r = relay(() => openAIChatTap(), sse.slice(0, at) + cut + sse.slice(at))
    expect(r.out).not.toContain('unterminated')
    expect(r.state.unreadable).toBe(true)
    expect(r.state.usage).toEqual({ inputTokens: 78, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 })
    expect(r.state.finishReason).toBe('stop')
  })
})

function fixture(p: string) {
  return readFileSync(join(DIR, p), 'utf8')
}
