// A turn continuing a stored response that ended in tool calls, through the openai SDK: OpenAI
// asks for the calls' outputs before the conversation goes on, and refuses an output naming no
// call. The mock and a Claude model took both (Claude refusing in its own terms), so a pipeline
// on the mock passed what its real provider would refuse.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { NO_LIMITS } from '../batches/helpers.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let client: OpenAI
beforeAll(async () => {
  rig = await startResponsesRig(NO_LIMITS)
  client = rig.client
})
afterAll(() => rig.stop())

const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'number' } } }, strict: false }]
// the SDK keeps the body's `error` (the gateway's message) as the error's `error`
const refusal = (p: Promise<unknown>) => p.then(() => 'answered', (e: { status?: number; error?: unknown }) => `${e.status} ${e.error}`)

for (const model of ['mock-gpt', 'mock-claude']) {
  describe(model, () => {
    test('a stored response that ended in a call: going on without its output, or answering another call, is a 400 naming the field; its output goes on', async () => {
      const first = await client.responses.create({ model, tools, input: 'mock: tool f {"a":1}' })
      const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall
      expect(call).toBeDefined()
      const before = rig.up.requests.length
      expect(await refusal(client.responses.create({ model, tools, previous_response_id: first.id, input: 'never mind' }))).toBe(
        `400 previous_response_id: call "${call.call_id}" has no output (a function_call_output or custom_tool_call_output naming it) before input, where the conversation goes on`,
      )
      expect(await refusal(client.responses.create({ model, tools, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: 'call_other', output: '1' }] }))).toBe(
        '400 input[0].call_id: "call_other" answers no call of this input or of the response it continues',
      )
      expect(rig.up.requests.length).toBe(before)
      const next = await client.responses.create({ model, tools, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '42' }] })
      expect(next.output_text).toBe('tool result: 42')
      // the thread's calls are answered now: the conversation goes on
      const third = await client.responses.create({ model, tools, previous_response_id: next.id, input: 'mock: text thanks' })
      expect(third.output_text).toBe('thanks')
    })

    test('a conversation whose last turn ended in a call is named by its parameter', async () => {
      const conv = await client.conversations.create()
      await client.responses.create({ model, tools, conversation: conv.id, input: 'mock: tool f {"a":2}' })
      const err = await refusal(client.responses.create({ model, tools, conversation: conv.id, input: 'go on' }))
      expect(err).toStartWith('400 conversation: call "')
      expect(err).toEndWith('before input, where the conversation goes on')
    })
  })
}
