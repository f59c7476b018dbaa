// The mock's tool call under an output cap, through every surface with the official SDKs: a
// call whose name and arguments pass max_tokens stops where the cap falls, as a real model's
// does — arguments cut short, finish `length` (chat), `max_tokens` (messages), `incomplete`
// (responses, the call item incomplete too), the whole cap spent — streamed or not.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let openai: OpenAI
let anthropic: Anthropic
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000' } })
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(() => gw.stop())

const parameters = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'days', 'unit'] }
const WHOLE = '{"city":"example","days":1,"unit":"c"}'
const CAP = 6
// what the first CAP tokens of `NAME ARGUMENTS` leave of the arguments
const CUT = decode(encode(`get_weather ${WHOLE}`).slice(0, CAP)).slice('get_weather '.length)

test('the cut is inside the arguments (the cap is below the whole call, above the name)', () => {
  expect(CUT.length).toBeGreaterThan(0)
  expect(WHOLE.startsWith(CUT) && CUT !== WHOLE).toBe(true)
})

describe('chat', () => {
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters } }]
  for (const model of ['mock-gpt', 'mock-claude']) {
    test(`${model}: a forced call past max_tokens is cut, finish length, streamed or not`, async () => {
      const body = { model, tools, tool_choice: { type: 'function' as const, function: { name: 'get_weather' } }, max_tokens: CAP, messages: [{ role: 'user' as const, content: 'weather?' }] }
      const plain = await openai.chat.completions.create(body)
      expect(plain.choices[0]!.finish_reason).toBe('length')
      expect((plain.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function).toEqual({ name: 'get_weather', arguments: CUT })
      expect(plain.usage!.completion_tokens).toBe(CAP)
      const streamed = await openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } }).finalChatCompletion()
      expect(streamed.choices[0]!.finish_reason).toBe('length')
      expect((streamed.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments).toBe(CUT)
      expect(streamed.usage!.completion_tokens).toBe(CAP)
    })
  }

  test('a directed call (mock: tool) is cut the same way; under the cap it is whole', async () => {
    const messages = [{ role: 'user' as const, content: `mock: tool get_weather ${WHOLE}` }]
    const cut = await openai.chat.completions.create({ model: 'mock-gpt', tools, max_tokens: CAP, messages })
    expect(cut.choices[0]!.finish_reason).toBe('length')
    expect((cut.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments).toBe(CUT)
    const whole = await openai.chat.completions.create({ model: 'mock-gpt', tools, max_tokens: 100, messages })
    expect(whole.choices[0]!.finish_reason).toBe('tool_calls')
    expect((whole.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments).toBe(WHOLE)
    expect(whole.usage!.completion_tokens).toBe(encode(`get_weather ${WHOLE}`).length)
  })
})

test('messages: stop_reason max_tokens, the whole cap spent, streamed or not', async () => {
  for (const model of ['mock-claude', 'mock-gpt']) {
    const body = { model, max_tokens: CAP, tools: [{ name: 'get_weather', input_schema: parameters as Anthropic.Tool.InputSchema }], tool_choice: { type: 'tool' as const, name: 'get_weather' }, messages: [{ role: 'user' as const, content: 'weather?' }] }
    const plain = await anthropic.messages.create(body)
    const streamed = await anthropic.messages.stream(body).finalMessage()
    for (const m of [plain, streamed]) {
      expect(m.stop_reason).toBe('max_tokens')
      expect(m.usage.output_tokens).toBe(CAP)
      expect(m.content).toHaveLength(1)
      expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather' })
      // not the whole arguments: what the cap left, which is no JSON object, kept as text
      expect((m.content[0] as Anthropic.ToolUseBlock).input).toEqual({ _raw_arguments: CUT })
    }
  }
})

test('responses: incomplete for max_output_tokens, the call item incomplete with the cut arguments, streamed or not', async () => {
  const body = { model: 'mock-gpt', input: 'weather?', max_output_tokens: CAP, tools: [{ type: 'function' as const, name: 'get_weather', parameters, strict: false }], tool_choice: { type: 'function' as const, name: 'get_weather' } }
  const plain = await openai.responses.create(body)
  let streamed: OpenAI.Responses.Response | undefined
  for await (const e of await openai.responses.create({ ...body, stream: true })) if (e.type === 'response.incomplete') streamed = e.response
  for (const r of [plain, streamed!]) {
    expect(r.status).toBe('incomplete')
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
    expect(r.usage!.output_tokens).toBe(CAP)
    expect(r.output).toHaveLength(1)
    expect(r.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: CUT, status: 'incomplete' })
  }
})
