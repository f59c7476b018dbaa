// Claude says how many of its output tokens went to thinking (`usage.output_tokens_details.
// thinking_tokens`, in the JSON reply and in the stream's cumulative `message_delta` usage). A
// client of the OpenAI surfaces reads that count as `reasoning_tokens`; left unread, a chat client
// got none and a Responses client read 0 however long Claude thought, and the record had none.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const JSON_FIXTURE = 'anthropic/messages/nonstream-thinking-tokens.handwritten.json'
const SSE_FIXTURE = 'anthropic/messages/stream-thinking-tokens.handwritten.sse'
const ask = [{ role: 'user' as const, content: 'How do I cross the street?' }]
const said = fixtureJson(JSON_FIXTURE).usage.output_tokens_details.thinking_tokens as number
/** The count in the recorded stream's message_delta. */
const streamed = Number(/"thinking_tokens":(\d+)/.exec(fixture(SSE_FIXTURE))![1])

describe("Claude's thinking tokens reach the OpenAI surfaces as reasoning tokens", () => {
  test('chat, non-streaming: completion_tokens_details.reasoning_tokens, and the record', async () => {
    rig.up.script({ json: fixture(JSON_FIXTURE) })
    const r = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low' })
    expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(said)
    const g = await rig.generation(r.id)
    expect(g.usage.completion_tokens_details?.reasoning_tokens).toBe(said)
  })

  test("chat, streaming: the stream helper's final usage carries them", async () => {
    rig.up.script({ sse: fixture(SSE_FIXTURE) })
    const s = rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: ask, reasoning_effort: 'low', stream_options: { include_usage: true } })
    const r = await s.finalChatCompletion()
    expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(streamed)
    const g = await rig.generation(r.id)
    expect(g.usage.completion_tokens_details?.reasoning_tokens).toBe(streamed)
  })

  test('responses, non-streaming and streaming: output_tokens_details.reasoning_tokens', async () => {
    rig.up.script({ json: fixture(JSON_FIXTURE) })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'How do I cross the street?', reasoning: { effort: 'low' } })
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBe(said)
    rig.up.script({ sse: fixture(SSE_FIXTURE) })
    const f = await rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'How do I cross the street?', reasoning: { effort: 'low' } }).finalResponse()
    expect(f.usage!.output_tokens_details.reasoning_tokens).toBe(streamed)
  })

  test('messages (passed through): the record has them too', async () => {
    rig.up.script({ sse: fixture(SSE_FIXTURE) })
    const m = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 4000, messages: ask, thinking: { type: 'enabled', budget_tokens: 1024 } }).finalMessage()
    const g = await rig.generation(m.id)
    expect(g.usage.completion_tokens_details?.reasoning_tokens).toBe(streamed)
  })
})
