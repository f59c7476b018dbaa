// The spec has a reply that called tools say `requires_action`; OpenAI's says `completed`, and the
// openai SDK's tool runner and parse helper read only a completed response (the runner throws
// "Response was not completed", parse leaves parsed_arguments null). With
// `responses.tool_calls_status: completed` the gateway answers as OpenAI does, required_action
// kept beside it; without, as the spec says.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { ResponsesToolRunner } from 'openai/helpers/responses-tool-runner'
import { startGateway, type Gateway } from '../helpers/server.ts'

const tool = { type: 'function' as const, name: 'get_w', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }
const input = 'mock: tool get_w {"city":"Paris"}'

describe('responses.tool_calls_status: completed', () => {
  let gw: Gateway
  let client: OpenAI
  beforeAll(async () => {
    gw = await startGateway({ yaml: 'responses: { tool_calls_status: completed }\n' })
    client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  })
  afterAll(() => gw.stop())

  for (const stream of [false, true]) {
    test(`the openai SDK's ResponsesToolRunner runs the tool and ends with the answer (stream: ${stream}), on both families`, async () => {
      for (const model of ['mock-gpt', 'mock-claude']) {
        const runner = new ResponsesToolRunner({ functions: [{ tool, execute: (a: { city: string }) => `sunny in ${a.city}` }] } as any)
        const r = await runner.run(client, { model, input, store: false } as any, { stream } as any)
        expect(r.status).toBe('completed')
        expect(r.output_text).toBe('tool result: sunny in Paris')
      }
    })
  }

  test('parse gives the call its parsed arguments; required_action is still there for tool_outputs', async () => {
    const r: any = await client.responses.parse({ model: 'mock-gpt', input, tools: [tool] })
    expect(r.status).toBe('completed')
    expect(r.output[0].parsed_arguments).toEqual({ city: 'Paris' })
    expect(r.required_action.submit_tool_outputs.tool_calls[0].function.name).toBe('get_w')
  })
})

test('by default, as the spec says: requires_action', async () => {
  const gw = await startGateway()
  try {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    expect((await client.responses.create({ model: 'mock-gpt', input, tools: [tool] })).status).toBe('requires_action' as any)
  } finally {
    await gw.stop()
  }
})
