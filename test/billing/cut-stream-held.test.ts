// A translated stream the client leaves mid-way is billed for what the upstream sent, including
// what the translation still held back from the client when it went: text of a block that waits
// for an earlier one (a Claude upstream), argument text of a call not yet named (a chat upstream),
// text that waits behind an open tool call. The upstream produced it and bills it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from '../../src/ir/tokens.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'Tell me a long story.' }]
/** About 30 KiB of words: under the 64 KiB a translation may hold, far more than the client saw. */
const BIG = Array.from({ length: 3000 }, (_, i) => `word${i % 97} `).join('')
const sse = (events: { event?: string; data: unknown }[]) => events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('')

/** Reads the body until `seen` shows up, waits a moment (the gateway has read what came before), and leaves. */
async function leaveAfter(res: Response, mark: string): Promise<string> {
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes(mark)) {
    const r = await reader.read()
    if (r.done) throw new Error(`stream ended before ${mark}: ${seen}`)
    seen += new TextDecoder().decode(r.value)
  }
  await Bun.sleep(50)
  await reader.cancel()
  await rig.up.requests.at(-1)!.closed
  return seen
}

async function recordOf(id: string): Promise<any> {
  let g: any
  for (let i = 0; i < 100 && !g?.usage?.completion_tokens; i++) g = await rig.generation(id).catch(() => Bun.sleep(20).then(() => undefined))
  return g
}

test('claude on the chat surface: the text of a block waiting for an earlier open one is billed when the client leaves', async () => {
  const id = 'msg_cut_held_block'
  rig.up.script({
    hold: true,
    sse: sse([
      { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 12, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } } },
      // a block started while block 0 is open (a proxy's order): its text waits for block 0's stop
      { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: BIG } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: BIG } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' there' } } },
    ]),
  })
  const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true })
  const seen = await leaveAfter(res, ' there')
  expect(seen).not.toContain('word5 ')
  const g = await recordOf(id)
  expect(g.error).toBe('client disconnected')
  expect(g.usage.prompt_tokens).toBe(12)
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(countTokens(BIG + BIG))
  expect(g.cost).toBeGreaterThan(0)
})

test('gpt on the messages surface: argument text held for a call not yet named is billed when the client leaves', async () => {
  const chunk = (delta: unknown) => ({ data: { id: 'chatcmpl-cut-held', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] } })
  rig.up.script({
    hold: true,
    sse: sse([
      chunk({ role: 'assistant', content: 'Hi' }),
      // argument text ahead of the call's id and name (some servers send it so): held for the name
      chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ story: BIG }) } }] }),
      chunk({ content: ' there' }),
    ]),
  })
  const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ask, stream: true, tools: [{ name: 'tell', input_schema: { type: 'object' } }] })
  const seen = await leaveAfter(res, ' there')
  expect(seen).not.toContain('word5 ')
  const id = /"id":"(msg_[^"]+)"/.exec(seen)![1]!
  const g = await recordOf(id)
  expect(g.error).toBe('client disconnected')
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(countTokens(BIG))
  expect(g.cost).toBeGreaterThan(0)
})

test('gpt on the messages surface: text and another call waiting behind an open tool call are billed when the client leaves', async () => {
  const chunk = (delta: unknown) => ({ data: { id: 'chatcmpl-cut-waiting', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] } })
  rig.up.script({
    hold: true,
    sse: sse([
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'tell', arguments: '{"story":' } }] }),
      // text beside an open call, and a second call, wait until the first call ends, which never comes
      chunk({ content: BIG }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'tell', arguments: JSON.stringify({ story: BIG }) } }] }),
    ]),
  })
  const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ask, stream: true, tools: [{ name: 'tell', input_schema: { type: 'object' } }] })
  const seen = await leaveAfter(res, '"tool_use"')
  expect(seen).not.toContain('word5 ')
  const id = /"id":"(msg_[^"]+)"/.exec(seen)![1]!
  const g = await recordOf(id)
  expect(g.error).toBe('client disconnected')
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(countTokens(BIG + JSON.stringify({ story: BIG })))
  expect(g.cost).toBeGreaterThan(0)
})
