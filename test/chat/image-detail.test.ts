// An image part's `detail` takes the values the official SDK declares, `original` among them (full
// resolution, no downscaling). A GPT model gets it as it came; a Claude model has no such
// setting, and the detail is named as left out.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
  rig.up.script((r) => ({ json: fixture(r.path.includes('/messages') ? 'anthropic/messages/nonstream-text.json' : 'openai/chat/nonstream-text.json') }))
})
afterAll(() => rig.stop())

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'what is it?' }, { type: 'image_url' as const, image_url: { url: PNG, detail: 'original' as const } }] }]

test('detail "original": a GPT model gets it as it came', async () => {
  await rig.client.chat.completions.create({ model: 'gpt-4.1', messages })
  expect(rig.up.requests.at(-1)!.json().messages).toEqual(messages)
})

test('detail "original": a Claude model gets the image, and the detail is named as left out', async () => {
  const { response } = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages }).withResponse()
  expect(response.headers.get('x-switchyard-compat')).toContain('detail')
  expect(rig.up.requests.at(-1)!.json().messages[0].content[1].type).toBe('image')
})
