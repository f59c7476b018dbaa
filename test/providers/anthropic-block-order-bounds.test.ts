// A block that starts while an earlier one is open waits for it (block-order.ts); what waits
// must neither be lost when the stream fails, nor grow without end. A stream that fails after
// output is billed for the text it produced: text that waited and was dropped at the failure
// was produced all the same (Anthropic bills it), and a server that never stops a block would
// make the gateway keep everything after it in memory, sent to the client only at the end.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from '../../src/ir/tokens.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
})
afterAll(async () => {
  await rig.stop()
})

type Obj = Record<string, unknown>
const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const head = (id: string) => ev('message_start', { message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 27, output_tokens: 1 } } })
const openThinking = (index: number) => ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } })
const openText = (index: number) => ev('content_block_start', { index, content_block: { type: 'text', text: '' } })
const think = (index: number, t: string) => ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: t } })
const say = (index: number, t: string) => ev('content_block_delta', { index, delta: { type: 'text_delta', text: t } })
const ask = [{ role: 'user' as const, content: 'Count.' }]

async function generation(id: string) {
  let g: any
  for (let i = 0; i < 100 && !g; i++) g = await rig.generation(id).catch(() => Bun.sleep(20).then(() => undefined))
  return g
}

test('text that waited for an open thinking block when the stream failed is billed as produced', async () => {
  const words = Array.from({ length: 300 }, (_, i) => `number ${i}, `)
  const sse = head('msg_block_wait_fail') + openThinking(0) + think(0, 'Let me count.') + openText(1) + words.map((w) => say(1, w)).join('') + ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })
  rig.up.script({ sse })
  const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true })
  await res.text()
  const g = await generation('msg_block_wait_fail')
  expect(g.error).toContain('Overloaded')
  // message_start said 1 output token: the record counts what was produced, the thinking and the text
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(countTokens(words.join('')))
})

test('a block never stopped does not keep what follows it: past a bound, the text goes out as it comes', async () => {
  // 200 KiB of text after a thinking block the server never stops, then the upstream stays open
  const piece = 'abcdefgh '.repeat(100)
  const sse = head('msg_block_never_stopped') + openThinking(0) + think(0, 'Hmm.') + openText(1) + Array.from({ length: 230 }, () => say(1, piece)).join('')
  rig.up.script({ sse, hold: true })
  const res = await rig.post({ model: 'claude-sonnet-4-5', messages: ask, stream: true })
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let seen = ''
  const deadline = Date.now() + 5_000
  while (!seen.includes('abcdefgh') && Date.now() < deadline) {
    const r = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => undefined)])
    if (!r || r.done) break
    seen += dec.decode(r.value)
  }
  await reader.cancel()
  expect(seen).toContain('abcdefgh')
})
