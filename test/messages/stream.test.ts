// IR events folded from recorded upstream streams → the messages SSE encoder → the
// official @anthropic-ai/sdk stream helper. The SDK must accept every frame, the event
// sequence must hold, and the SDK's final message must equal the JSON reply encoded from
// the fold of the same events: streamed and plain agree.
import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, test } from 'bun:test'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import { openAIChatEvents } from '../../src/providers/openai/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'
import { encodeMessagesResponse } from '../../src/surfaces/messages/encode.ts'
import { createMessagesStreamEncoder, messagesErrorFrame } from '../../src/surfaces/messages/stream.ts'
import { fixture } from '../helpers/fake-upstream.ts'

const MODEL = 'gpt-4o'

async function events(path: string): Promise<StreamEvent[]> {
  const body = new Response(fixture(path)).body!
  const raw = path.startsWith('anthropic/') ? anthropicEvents(parseSse(body)) : openAIChatEvents(parseSse(body))
  const out: StreamEvent[] = []
  for await (const e of withBlocks(raw)) out.push(e)
  return out
}

const replay = (evs: StreamEvent[]) => (async function* () { yield* evs })()

function encode(evs: StreamEvent[], model = MODEL) {
  const enc = createMessagesStreamEncoder({ id: 'gen-fallback', model })
  let sse = ''
  for (const e of evs) sse += enc.push(e)
  // The pipeline writes the in-band error frame after a failure; do as it does.
  const failure = evs.find((e): e is Extract<StreamEvent, { type: 'error' }> => e.type === 'error')
  if (enc.state.failed && failure) sse += messagesErrorFrame(failure.error)
  return { sse, state: enc.state }
}

/** The SSE text as the SDK sees it: a client whose fetch answers with it. */
function sdk(sse: string) {
  return new Anthropic({
    apiKey: 'k',
    baseURL: 'http://gateway.test',
    maxRetries: 0,
    fetch: (async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } })) as unknown as typeof fetch,
  })
}

/** The stream helper's final message, without the helper's own `parsed_output` (not wire). */
async function finalMessage(sse: string, model = MODEL) {
  const m = await sdk(sse).messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
  const { parsed_output, ...wire } = m as typeof m & { parsed_output?: unknown }
  return wire
}

/** Event names in order, content_block_delta runs collapsed to one. */
function sequence(sse: string): string[] {
  const names = [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!)
  return names.filter((n, i) => !(n === 'content_block_delta' && names[i - 1] === 'content_block_delta'))
}

/** Every frame has an event line and a JSON data line whose `type` is the event name. */
function frames(sse: string): { event: string; data: any }[] {
  expect(sse.endsWith('\n\n')).toBe(true)
  return sse.slice(0, -2).split('\n\n').map((f) => {
    const [ev, data, ...rest] = f.split('\n')
    expect(rest).toEqual([])
    expect(ev).toStartWith('event: ')
    expect(data).toStartWith('data: ')
    const event = ev!.slice(7)
    const json = JSON.parse(data!.slice(6))
    expect(json.type).toBe(event)
    return { event, data: json }
  })
}

/** Indexes 0, 1, 2… each started once before its deltas and stopped once. */
function checkBlocks(sse: string) {
  const open = new Set<number>()
  let next = 0
  for (const { event, data } of frames(sse)) {
    if (event === 'content_block_start') {
      expect(data.index).toBe(next++)
      open.add(data.index)
    } else if (event === 'content_block_delta') expect(open.has(data.index)).toBe(true)
    else if (event === 'content_block_stop') expect(open.delete(data.index)).toBe(true)
    else if (event === 'message_delta' || event === 'message_stop') expect(open.size).toBe(0)
  }
}

const OPENAI = ['stream-parallel-tool-calls.sse', 'stream-tool-call-single.sse', 'stream-cached-tokens-length.sse', 'stream-text-include-usage.sse', 'stream-tool-call-after-tool-results.sse', 'stream-text-vercel.sse']
const ANTHROPIC = ['stream-text.sse', 'stream-thinking.sse', 'stream-tool-use.sse', 'stream-tool-use-with-request.sse', 'stream-cache-read.sse', 'stream-cache-write.sse', 'stream-tool-use-vercel.sse', 'stream-text-vercel.sse', 'stream-web-search.handwritten.sse']

describe('recorded streams → messages SSE → @anthropic-ai/sdk', () => {
  for (const path of [...OPENAI.map((f) => `openai/chat/${f}`), ...ANTHROPIC.map((f) => `anthropic/messages/${f}`)]) {
    test(`${path}: streamed and plain agree`, async () => {
      const evs = await events(path)
      const { sse, state } = encode(evs)
      checkBlocks(sse)
      const seq = sequence(sse)
      expect(seq[0]).toBe('message_start')
      expect(seq.slice(-2)).toEqual(['message_delta', 'message_stop'])
      const plain = encodeMessagesResponse(await collect(replay(evs)), MODEL)
      const streamed = await finalMessage(sse)
      expect(JSON.parse(JSON.stringify(streamed))).toEqual(plain)
      expect(state).toMatchObject({ id: plain.id, stopReason: plain.stop_reason, done: true, failed: false })
      expect(state.produced).toBe((plain.content as unknown[]).length > 0)
    })
  }
})

describe('the recorded Anthropic wire survives the round trip', () => {
  // The SDK's final message from the upstream's own bytes and from the re-encoded IR agree
  // on content, stop reason and the four usage counters.
  for (const f of ['stream-text.sse', 'stream-thinking.sse', 'stream-tool-use.sse', 'stream-cache-read.sse', 'stream-cache-write.sse']) {
    test(f, async () => {
      // Some recordings end without the last blank line, which the SDK needs to see the event.
      const original = await finalMessage(fixture(`anthropic/messages/${f}`).trimEnd() + '\n\n')
      const ours = await finalMessage(encode(await events(`anthropic/messages/${f}`), original.model).sse, original.model)
      expect(ours.id).toBe(original.id)
      expect(ours.content.map(({ citations, ...b }: any) => b)).toEqual(original.content.map(({ citations, ...b }: any) => b))
      expect([ours.stop_reason, ours.stop_sequence]).toEqual([original.stop_reason, original.stop_sequence])
      const four = (u: any) => [u.input_tokens, u.output_tokens, u.cache_creation_input_tokens ?? 0, u.cache_read_input_tokens ?? 0]
      expect(four(ours.usage)).toEqual(four(original.usage))
    })
  }
})

describe('stream exactness', () => {
  test('the event sequence for parallel tool calls', async () => {
    const { sse } = encode(await events('openai/chat/stream-parallel-tool-calls.sse'))
    const seq = sequence(sse)
    expect(seq[0]).toBe('message_start')
    const tools = frames(sse).filter((f) => f.event === 'content_block_start').map((f) => f.data.content_block)
    expect(tools.length).toBeGreaterThan(1)
    for (const t of tools) expect(t).toMatchObject({ type: 'tool_use', input: {} })
  })

  test('message_delta repeats the input counters', () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    enc.push({ type: 'start', id: 'chatcmpl-1', model: 'm', created: 0 })
    enc.push({ type: 'text-delta', text: 'a' })
    const usage = { inputTokens: 10, outputTokens: 3, cacheReadTokens: 7, cacheWriteTokens: 2 }
    const out = enc.push({ type: 'finish', finish: { reason: 'stop' }, usage })
    const md = frames(out).find((f) => f.event === 'message_delta')!.data
    expect(md.usage).toEqual({ input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 2, cache_read_input_tokens: 7 })
    expect(md.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null, stop_details: null })
  })

  test('a refusal says so in stop_details, which the SDK copies from the delta', () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    const out = enc.push({ type: 'start', id: 'chatcmpl-1', model: 'm', created: 0 }) + enc.push({ type: 'text-delta', text: 'no' }) +
      enc.push({ type: 'finish', finish: { reason: 'refusal' }, usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } })
    const start = frames(out).find((f) => f.event === 'message_start')!.data.message
    expect(start.stop_details).toBeNull()
    const md = frames(out).find((f) => f.event === 'message_delta')!.data
    expect(md.delta).toEqual({ stop_reason: 'refusal', stop_sequence: null, stop_details: { type: 'refusal', category: null, explanation: null } })
  })

  test('no start event: message_start comes before the first content, with the given id', () => {
    const enc = createMessagesStreamEncoder({ id: 'gen-abc_123', model: 'm' })
    const out = enc.push({ type: 'text-delta', text: 'hi' })
    expect(sequence(out)).toEqual(['message_start', 'content_block_start', 'content_block_delta'])
    expect(frames(out)[0]!.data.message).toMatchObject({ id: 'msg_genabc123', content: [], stop_reason: null, stop_sequence: null })
    expect(enc.state.id).toBe('msg_genabc123')
  })

  test('deltas to a tool never started are dropped; an unclosed tool is closed at finish', () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    let sse = enc.push({ type: 'tool-input-delta', index: 3, delta: '{"a":1}' })
    sse += enc.push({ type: 'tool-input-start', index: 0, id: 'call_1', name: 'f' })
    sse += enc.push({ type: 'tool-input-delta', index: 0, delta: '' })
    sse += enc.push({ type: 'tool-input-delta', index: 0, delta: '{"a":1}' })
    sse += enc.push({ type: 'finish', finish: { reason: 'tool_calls' }, usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } })
    checkBlocks(sse)
    expect(sequence(sse)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])
  })

  test('arguments that arrive whole after the start are still sent', async () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    let sse = ''
    const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
    for (const e of [
      { type: 'tool-input-start', index: 0, id: 'toolu_1', name: 'Bash' },
      { type: 'tool-input-delta', index: 0, delta: '{"command":"echo sy-ok"}' },
      { type: 'tool-input-end', index: 0 },
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ] as StreamEvent[]) sse += enc.push(e)
    const m = await finalMessage(sse)
    expect(m.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo sy-ok' } }] as any)
    expect(m.stop_reason).toBe('tool_use')
  })

  test('thinking with a signature and empty text, and redacted thinking, go out byte for byte', async () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    let sse = ''
    const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
    const evs: StreamEvent[] = [
      { type: 'start', id: 'msg_x', model: 'claude', created: 0 },
      { type: 'reasoning-start' }, { type: 'reasoning-signature', signature: 'EqQBCkYIBxgCKkA+/=' }, { type: 'reasoning-end' },
      { type: 'reasoning-redacted', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT' },
      { type: 'text-start' }, { type: 'text-delta', text: 'ok' }, { type: 'text-end' },
      { type: 'finish', finish: { reason: 'stop' }, usage },
    ]
    for (const e of evs) sse += enc.push(e)
    checkBlocks(sse)
    const m = await finalMessage(sse)
    expect(m.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'EqQBCkYIBxgCKkA+/=' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT' },
      { type: 'text', text: 'ok' },
    ] as any)
    expect(JSON.parse(JSON.stringify(m))).toEqual(encodeMessagesResponse(await collect(replay(evs)), 'm') as any)
  })

  test('text and thinking deltas are the JSON of their events whole, escapes included', () => {
    const text = 'say "hi"\n\u2028 \\ é 🙂'
    const { sse } = encode([
      { type: 'start', id: 'msg_1', model: 'm', created: 1 },
      { type: 'reasoning-delta', text },
      { type: 'text-delta', text },
      { type: 'finish', finish: { reason: 'stop' }, usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    ])
    const deltas = sse.split('\n\n').filter((f) => f.startsWith('event: content_block_delta\n'))
    expect(deltas).toEqual([
      `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: text } })}`,
      `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text } })}`,
    ])
  })
  test('an empty text block is never sent; produced stays false without content', () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    let sse = enc.push({ type: 'start', id: 'msg_1', model: 'm', created: 0 })
    sse += enc.push({ type: 'text-start' }) + enc.push({ type: 'text-delta', text: '' }) + enc.push({ type: 'text-end' })
    expect(enc.state.produced).toBe(false)
    sse += enc.push({ type: 'finish', finish: { reason: 'stop' }, usage: { inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } })
    expect(sequence(sse)).toEqual(['message_start', 'message_delta', 'message_stop'])
  })
})

describe('mid-stream failure: an in-band error, then nothing', () => {
  for (const f of ['stream-error-overloaded-event.sse', 'stream-error-midstream-fragment.sse']) {
    test(`${f}: an error frame, no message_delta / message_stop; the SDK raises it`, async () => {
      const evs = await events(`anthropic/messages/${f}`)
      const { sse, state } = encode(evs)
      expect(state.failed).toBe(true)
      expect(state.done).toBe(false)
      const seq = sequence(sse)
      expect(seq.at(-1)).toBe('error')
      expect(seq).not.toContain('message_delta')
      expect(seq).not.toContain('message_stop')
      const err = frames(sse).at(-1)!.data
      expect(err.error.type).toBe(f.includes('overloaded') ? 'overloaded_error' : 'api_error')
      const thrown = await finalMessage(sse).then(() => null, (e) => e)
      expect(thrown).toBeInstanceOf(Anthropic.APIError)
      expect(String(thrown.message)).toContain(f.includes('overloaded') ? 'Overloaded' : 'Internal server error')
    })
  }

  test('after an error the encoder stays silent', () => {
    const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
    enc.push({ type: 'text-delta', text: 'a' })
    expect(enc.push({ type: 'error', error: { status: 529, message: 'Overloaded', type: 'overloaded_error' } })).toBe('')
    expect(enc.push({ type: 'finish', finish: { reason: 'stop' }, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } })).toBe('')
  })
})

/** A chat-completions stream of the given chunks' deltas, as an OpenAI-compatible server sends it. */
function chatChunks(deltas: Record<string, unknown>[], finish = 'tool_calls'): string {
  const chunk = (choice: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-t', model: 'gpt-4o', created: 1, choices: [choice] })}\n\n`
  return deltas.map((delta) => chunk({ index: 0, delta })).join('') + chunk({ index: 0, delta: {}, finish_reason: finish }) + 'data: [DONE]\n\n'
}

async function chatEvents(sse: string): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of withBlocks(openAIChatEvents(parseSse(new Response(sse).body!)))) out.push(e)
  return out
}

describe('tool arguments from another family, streamed as the JSON reply says them', () => {
  const call = (args: string[]) => [
    { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
    ...args.map((a) => ({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
  ]
  // cut by the token limit, an array, prose: Messages' `input` is an object, and the SDK's
  // parser throws on text that is no JSON
  for (const [name, args, finish] of [
    ['cut by the token limit', ['{"city": ', '"Par'], 'length'],
    ['an array', ['["a"', ']'], 'tool_calls'],
    ['not JSON', ['call f ', 'please'], 'tool_calls'],
    ['an object, whitespace and big numbers kept', ['{"n": 12345678901234567890', ' }'], 'tool_calls'],
  ] as const) {
    test(name, async () => {
      const evs = await chatEvents(chatChunks(call([...args]), finish))
      const { sse } = encode(evs)
      const plain = encodeMessagesResponse(await collect(replay(evs)), MODEL)
      const streamed = await finalMessage(sse)
      expect(JSON.parse(JSON.stringify(streamed))).toEqual(plain)
      expect(typeof (plain.content as { input: unknown }[])[0]!.input).toBe('object')
      if (name.startsWith('an object')) expect(sse).toContain('"partial_json":"{\\"n\\": 12345678901234567890 }"')
    })
  }

  test('calls a server sends without an index are told apart by their ids', async () => {
    const evs = await chatEvents(chatChunks([
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] },
      { tool_calls: [{ function: { arguments: '1}' } }] },
      { tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'g', arguments: '{"a":2}' } }] },
    ]))
    const plain = encodeMessagesResponse(await collect(replay(evs)), MODEL)
    expect(plain.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      { type: 'tool_use', id: 'call_2', name: 'g', input: { a: 2 } },
    ])
    expect(JSON.parse(JSON.stringify(await finalMessage(encode(evs).sse)))).toEqual(plain)
  })
})
