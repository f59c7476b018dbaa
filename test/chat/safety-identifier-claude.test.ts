// OpenAI's `safety_identifier` (which supersedes `user`) is the end user's stable id for abuse
// detection; Anthropic's is `metadata.user_id`, for the same purpose. A client that follows
// OpenAI's advice and sends it to a Claude model had it dropped, while one still sending the old
// `user` kept it. Both surfaces, in the spec's default (reject) mode and in translate mode.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from './e2e-helpers.ts'

describe.each(['reject', 'translate'])('safety_identifier → metadata.user_id on a Claude model (cross_family %s)', (mode) => {
  let rig: Rig
  beforeAll(async () => {
    rig = await startRig({ SWITCHYARD_CROSS_FAMILY: mode })
  })
  afterAll(async () => {
    await rig.stop()
  })

  test('chat surface', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const r = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], safety_identifier: 'user_5f2a' })
    expect(r.choices[0]!.message.content).toBeTruthy()
    expect(rig.up.requests.at(-1)!.json().metadata).toEqual({ user_id: 'user_5f2a' })
  })

  test('responses surface', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi', safety_identifier: 'user_5f2a' })
    expect(r.output_text).toBeTruthy()
    expect(rig.up.requests.at(-1)!.json().metadata).toEqual({ user_id: 'user_5f2a' })
  })

  test('a GPT model still gets it as it came (chat)', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], safety_identifier: 'user_5f2a' })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.safety_identifier).toBe('user_5f2a')
    expect(sent.user).toBeUndefined()
  })
})
