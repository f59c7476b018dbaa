// A function's output item may leave `call_id` out: the official SDK declares it optional (an
// output handed back to a program that called the function). A GPT model gets it as it came; a
// Claude model, whose tool results must each name the call they answer, is told so by the field.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
beforeAll(async () => {
  rig = await startResponsesRig()
  rig.up.script((r) => ({ json: fixture(r.path.includes('/messages') ? 'anthropic/messages/nonstream-text.json' : 'openai/responses/nonstream-text.json') }))
})
afterAll(() => rig.stop())

const tools = [{ type: 'programmatic_tool_calling' as const }, { type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }]
const output = { type: 'function_call_output' as const, output: 'row 7', caller: { type: 'program' as const, caller_id: 'prog_1' }, name: 'lookup' }

test('a GPT model gets a function output with no call_id as it came', async () => {
  const r = await rig.client.responses.create({ model: 'gpt-5.2', store: false, tools, input: [{ role: 'user', content: 'find row 7' }, output] })
  expect(r.status).toBe('completed')
  expect(rig.up.requests.at(-1)!.json().input[1]).toEqual(output)
})

test('a Claude model: a 400 naming the call_id its tool result needs', async () => {
  const err = await rig.client.responses.create({ model: 'claude-sonnet-4-5', store: false, tools, input: [{ role: 'user', content: 'find row 7' }, output] }).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.error).toStartWith('input[1].call_id: ')
  expect(err.error).toContain('claude-sonnet-4-5')
})
