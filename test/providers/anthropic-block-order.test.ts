// Servers of the Messages wire other than Anthropic (gateways, proxies) may start a content block
// while an earlier one is still open (a thinking block waiting for its signature) and interleave
// the two blocks' deltas; and Claude's interleaved thinking gives several thinking blocks in one
// message. Each thinking block must stay a block of its own, with its own signature, on every
// translated surface: before, two thinking blocks ran together into one (one text, the first
// signature), and the second signature made an empty block of its own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'
import { hiddenBounds } from '../../src/http/hidden-json.ts'
import { openReasoning } from '../../src/surfaces/responses/reasoning.ts'
import { fixture } from '../helpers/fake-upstream.ts'
import { messageFrames, startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

const FIXTURE = 'anthropic/messages/stream-thinking-interleaved.handwritten.sse'

/** What the fixture's thinking blocks say, read off the wire by block index (not by the gateway's parser). */
function thinkingBlocks(sse: string): { thinking: string; signature: string }[] {
  const blocks = new Map<number, { thinking: string; signature: string }>()
  for (const { data } of messageFrames(sse)) {
    if (data.type === 'content_block_start' && data.content_block.type === 'thinking') blocks.set(data.index, { thinking: '', signature: '' })
    const b = blocks.get(data.index)
    if (data.type !== 'content_block_delta' || !b) continue
    if (data.delta.type === 'thinking_delta') b.thinking += data.delta.thinking
    if (data.delta.type === 'signature_delta') b.signature += data.delta.signature
  }
  return [...blocks.values()]
}
const WANT = thinkingBlocks(fixture(FIXTURE))
const ANSWER = 'The capital of France is Paris.'

type Obj = Record<string, unknown>
const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const open = (index: number, type: string) => ev('content_block_start', { index, content_block: type === 'thinking' ? { type, thinking: '', signature: '' } : { type, text: '' } })
const think = (index: number, t: string) => ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: t } })
const say = (index: number, t: string) => ev('content_block_delta', { index, delta: { type: 'text_delta', text: t } })
const sign = (index: number, s: string) => ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: s } })
const stop = (index: number) => ev('content_block_stop', { index })
const head = ev('message_start', { message: { id: 'msg_o1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 5, output_tokens: 1 } } })
const end = ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }) + ev('message_stop', {})

async function folded(sse: string) {
  const out: StreamEvent[] = []
  for await (const e of withBlocks(anthropicEvents(parseSse(new Response(sse).body!)))) out.push(e)
  return (await collect((async function* () { yield* out })())).content
}

describe('the adapter: one block at a time, each thinking block its own', () => {
  test('two thinking blocks interleaved: each whole with its own signature, in the order they started', async () => {
    expect(await folded(fixture(FIXTURE))).toEqual([
      { type: 'reasoning', text: WANT[0]!.thinking, signature: WANT[0]!.signature },
      { type: 'reasoning', text: WANT[1]!.thinking, signature: WANT[1]!.signature },
      { type: 'text', text: ANSWER },
    ])
  })

  test('a thinking block stopped without a signature, then another: two blocks, not one', async () => {
    const sse = head + open(0, 'thinking') + think(0, 'first') + stop(0) + open(1, 'thinking') + think(1, 'second') + sign(1, 'sig-2') + stop(1) + end
    expect(await folded(sse)).toEqual([{ type: 'reasoning', text: 'first' }, { type: 'reasoning', text: 'second', signature: 'sig-2' }])
  })

  test('text started while a thinking block is open waits for it: the thinking whole, then the text', async () => {
    const sse = head + open(0, 'thinking') + think(0, 'a') + open(1, 'text') + say(1, 'Hel') + think(0, 'b') + say(1, 'lo') + sign(0, 'sig-1') + stop(0) + say(1, '!') + stop(1) + end
    expect(await folded(sse)).toEqual([{ type: 'reasoning', text: 'ab', signature: 'sig-1' }, { type: 'text', text: 'Hello!' }])
  })

  test('blocks a server never stops come out at the message end, each whole, in the order they started', async () => {
    const sse = head + open(0, 'thinking') + think(0, 'a') + open(1, 'thinking') + think(1, 'b') + think(0, 'c') + open(2, 'text') + say(2, 'Hi') + end
    expect(await folded(sse)).toEqual([{ type: 'reasoning', text: 'ac' }, { type: 'reasoning', text: 'b' }, { type: 'text', text: 'Hi' }])
  })
})

describe('through the translated surfaces, with the official SDKs', () => {
  let rig: MessagesRig
  beforeAll(async () => {
    rig = await startMessagesRig()
  })
  afterAll(async () => {
    await rig.stop()
  })
  const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }]

  test('chat: reasoning_content in block order, and thinking_blocks with each block and its signature', async () => {
    rig.up.script({ sse: fixture(FIXTURE) })
    const stream = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600, stream: true })
    let reasoning = ''
    let blocks: unknown
    let text = ''
    for await (const c of stream) {
      const d = c.choices[0]?.delta as any
      reasoning += d?.reasoning_content ?? ''
      text += d?.content ?? ''
      if (d?.thinking_blocks) blocks = d.thinking_blocks
    }
    expect(reasoning).toBe(WANT[0]!.thinking + WANT[1]!.thinking)
    expect(blocks).toEqual(WANT.map((b) => ({ type: 'thinking', ...b })))
    expect(text).toBe(ANSWER)
    rig.up.script({ sse: fixture(FIXTURE) })
    const final = await rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', max_tokens: 600 }).finalChatCompletion()
    expect((final.choices[0]!.message as any).thinking_blocks).toEqual(WANT.map((b) => ({ type: 'thinking', ...b })))
  })

  test('responses: a reasoning item for each block, its thinking and signature sealed in it; sent back, Claude gets both blocks signed', async () => {
    rig.up.script({ sse: fixture(FIXTURE) })
    const s = rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'What is the capital of France?', reasoning: { effort: 'low' }, store: false })
    const r = await s.finalResponse()
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'reasoning', 'message'])
    expect(r.output.slice(0, 2).map((o: any) => openReasoning(o, hiddenBounds(), 'output'))).toEqual(WANT.map((b) => ({ type: 'reasoning', text: b.thinking, signature: b.signature })))
    expect(r.output_text).toBe(ANSWER)
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.client.responses.create({ model: 'claude-sonnet-4-5', reasoning: { effort: 'low' }, store: false, input: [{ role: 'user', content: 'What is the capital of France?' }, ...(r.output as any), { role: 'user', content: 'Sure?' }] })
    const back = rig.up.requests.at(-1)!.json().messages[1].content
    expect(back.filter((b: any) => b.type === 'thinking')).toEqual(WANT.map((b) => ({ type: 'thinking', ...b })))
  })

  test('messages (the IR path of pause_on_call_tools_start): two thinking blocks, each with its signature', async () => {
    rig.up.script({ sse: fixture(FIXTURE) })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 2000, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: ask, pause_on_call_tools_start: true }
    const m = await rig.anthropic.messages.stream(body as any).finalMessage()
    expect(m.content).toEqual([...WANT.map((b) => ({ type: 'thinking', ...b })), { type: 'text', text: ANSWER }] as any)
  })
})
