// A Message Batches item for a GPT model with a strict tool whose schema leaves a property
// optional: as on the interactive messages surface, the schema goes to OpenAI fitted to its
// strict mode (the property required and nullable), and the null the model then writes for it
// is taken out of the tool's input in the batch's result, so the result holds what the client's
// own schema describes. Read through @anthropic-ai/sdk and through the OpenAI-shaped results.
import type Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ yaml: 'providers:\n  openai:\n    max_retries: 0\n' })
})
afterAll(() => rig.stop())

const input_schema = { type: 'object' as const, properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['location'], additionalProperties: false }
const params = {
  model: 'gpt-4o-mini',
  max_tokens: 200,
  messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
  tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema, strict: true }],
}

/** OpenAI's answer: the tool called with the property the fitted schema made required, as null. */
function answerWithNull() {
  rig.up.script(() => ({
    json: {
      id: 'chatcmpl-batch-strict', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
      usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
      choices: [{ index: 0, logprobs: null, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris","unit":null}' } }] } }],
    },
  }))
}

test('a message batch: the tool input in the result has no null for the optional property', async () => {
  answerWithNull()
  const client = rig.anthropic()
  const batch = await client.messages.batches.create({ requests: [{ custom_id: 'weather', params: params as any }] })
  await rig.ended(batch.id)
  // the schema went fitted, so OpenAI's strict mode took it
  const sent = rig.up.requests.at(-1)!.json().tools[0].function
  expect(sent.strict).toBe(true)
  expect(sent.parameters.required).toEqual(['location', 'unit'])
  const results: Anthropic.Messages.MessageBatchIndividualResponse[] = []
  for await (const r of await client.messages.batches.results(batch.id)) results.push(r)
  expect(results).toHaveLength(1)
  const result = results[0]!.result
  if (result.type !== 'succeeded') throw new Error(`the item did not succeed: ${JSON.stringify(result)}`)
  const use = result.message.content.find((b) => b.type === 'tool_use') as Anthropic.Messages.ToolUseBlock
  expect(use.name).toBe('get_weather')
  expect(use.input).toEqual({ location: 'Paris' })
})

test('an OpenAI-shaped batch to /v1/messages: the results page and the output file have no null for it either', async () => {
  answerWithNull()
  const res = await rig.call('POST', '/api/v1/batches', { endpoint: '/v1/messages', requests: [{ custom_id: 'weather', ...params }] })
  expect(res.status).toBe(200)
  const b = (await res.json()) as any
  const done = await rig.ended(b.id)
  const [item] = await rig.allResults(b.id)
  expect(item.status).toBe('succeeded')
  expect(item.result.content.find((p: any) => p.type === 'tool_use').input).toEqual({ location: 'Paris' })
  const line = JSON.parse((await (await rig.openai().files.content(done.output_file_id)).text()).trim())
  expect(line.response.body.content.find((p: any) => p.type === 'tool_use').input).toEqual({ location: 'Paris' })
})
