// Claude's stop reasons that OpenAI's wires have no word for (pause_turn, a full context window,
// a refusal) as an OpenAI SDK user reads them: chat's finish_reason, and the Responses status with
// an incomplete_details.reason of the two OpenAI documents (max_output_tokens, content_filter),
// whether streamed or not, and the same in the generation record. A reason outside the documented
// pair is one a typed client (the openai SDK's types, Codex) has no branch for.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
beforeAll(async () => {
  rig = await startResponsesRig()
})
afterAll(async () => {
  await rig.stop()
})

const usage = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
const message = (stop: string | null) => ({ id: `msg_01Stop${stop ?? ''}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'partial answer' }], stop_reason: stop, stop_sequence: null, usage })
const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const stream = (stop: string) =>
  ev('message_start', { message: { ...message(null), content: [] } }) +
  ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
  ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial answer' } }) +
  ev('content_block_stop', { index: 0 }) +
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage }) +
  ev('message_stop', {})

// what each stop reason reads as on the OpenAI wires
const CASES = [
  { stop: 'pause_turn', chat: 'length', status: 'incomplete', reason: 'max_output_tokens' },
  { stop: 'model_context_window_exceeded', chat: 'length', status: 'incomplete', reason: 'max_output_tokens' },
  { stop: 'refusal', chat: 'content_filter', status: 'incomplete', reason: 'content_filter' },
]

describe.each(CASES)('Claude stop_reason $stop', ({ stop, chat, status, reason }) => {
  test('chat: finish_reason, streamed or not, and in the record', async () => {
    rig.up.script({ json: message(stop) })
    const c = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] })
    expect(c.choices[0]!.finish_reason).toBe(chat as any)
    expect((await rig.generation(c.id)).finish_reason).toBe(chat)
    rig.up.script({ sse: stream(stop) })
    const s = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true })
    const finishes: unknown[] = []
    for await (const ch of s) if (ch.choices[0]?.finish_reason) finishes.push(ch.choices[0].finish_reason)
    expect(finishes).toEqual([chat])
  })

  test('responses: status and a documented incomplete_details.reason, streamed or not, and in the record', async () => {
    rig.up.script({ json: message(stop) })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi' })
    expect(r.status).toBe(status as any)
    expect(r.incomplete_details).toEqual({ reason: reason as any })
    expect(r.output_text).toBe('partial answer')
    expect((await rig.generation(r.id)).status).toBe(status)
    rig.up.script({ sse: stream(stop) })
    const s = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi', stream: true })
    const events: any[] = []
    for await (const e of s) events.push(e)
    const last = events.at(-1)
    expect(last.type).toBe(`response.${status}`)
    expect(last.response.status).toBe(status)
    expect(last.response.incomplete_details).toEqual({ reason })
  })
})
