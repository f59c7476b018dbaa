// An assistant turn that was an audio reply goes back as `audio: { id }`, with no content: the
// official SDK declares it (content is required only without tool calls, a function call or
// audio). A GPT model gets it as it came; a Claude model has no such reply to recall, and is
// told so by name rather than sent an empty turn.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
  rig.up.script((r) => ({ json: fixture(r.path.includes('/messages') ? 'anthropic/messages/nonstream-text.json' : 'openai/chat/nonstream-text.json') }))
})
afterAll(() => rig.stop())

const messages = [
  { role: 'user' as const, content: 'say hi out loud' },
  { role: 'assistant' as const, audio: { id: 'audio_abc123' } },
  { role: 'user' as const, content: 'again, louder' },
]

test('a GPT model gets the assistant turn that refers to its audio reply as it came', async () => {
  await rig.client.chat.completions.create({ model: 'gpt-4o', messages })
  expect(rig.up.requests.at(-1)!.json().messages).toEqual(messages)
})

test('a Claude model is told the audio reply is not one it can recall, by the field', async () => {
  const err = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages }).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.error).toStartWith('messages[1].audio: ')
})
