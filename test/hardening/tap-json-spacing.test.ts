// The pass-through taps parse every event as JSON, so valid JSON spacing
// (`"content": "…"`) never hides what was produced: a client that disconnects after a few
// spaced chunks is billed for them, on the chat wire and on the messages wire.
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

async function disconnectAfter(res: Response, text: string) {
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes(text)) seen += new TextDecoder().decode((await reader.read()).value)
  await reader.cancel()
  await rig.up.requests.at(-1)!.closed
}

async function recordOf(id: string) {
  let g: any
  for (let i = 0; i < 50 && !g; i++) g = await rig.generation(id).catch(() => Bun.sleep(20).then(() => undefined))
  return g
}

test('chat pass-through: spaced JSON chunks are read, and a disconnect bills them', async () => {
  const chunk = (content: string) => `data: {"id": "chatcmpl-spaced-d9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": "${content}"}, "finish_reason": null}]}\n\n`
  rig.up.script({ sse: chunk('Bonjour') + chunk(' tout') + chunk(' le monde'), hold: true })
  const res = await rig.post({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Say hello' }] })
  await disconnectAfter(res, 'le monde')
  const g = await recordOf('chatcmpl-spaced-d9')
  expect(g.error).toBe('client disconnected')
  expect(g.usage.completion_tokens).toBe(countTokens('Bonjour tout le monde'))
})

test('messages pass-through: a disconnect after spaced deltas bills them', async () => {
  const sse = [
    'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_spaced_d9", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 12, "output_tokens": 1}}}\n\n',
    'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}\n\n',
    'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Bonjour tout"}}\n\n',
    'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " le monde"}}\n\n',
  ].join('')
  rig.up.script({ sse, hold: true })
  const res = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Say hello' }] })
  await disconnectAfter(res, 'le monde')
  const g = await recordOf('msg_spaced_d9')
  expect(g.error).toBe('client disconnected')
  expect(g.usage.completion_tokens).toBe(countTokens('Bonjour tout le monde'))
  // the upstream reported the prompt in message_start: that count stands
  expect(g.usage.prompt_tokens).toBe(12)
})
