// A reply the output cap cuts in the middle of a tool call, on the translated paths (a Claude
// model, and a model of a chat-completions server): the response is incomplete, and the call
// it cut is an `incomplete` item, as OpenAI marks an item cut short (its arguments are not
// whole JSON, so nobody should run it). Streamed, in JSON, and as stored.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { frames, startResponsesRig, WEATHER, type ResponsesRig } from './e2e-helpers.ts'

const CUT_ARGS = '{"city": "Os'

let rig: ResponsesRig
beforeAll(async () => {
  rig = await startResponsesRig(
    {},
    `
providers:
  - { id: local, kind: openai-compatible, base_url: "\${OPENAI_BASE_URL}/v1" }
models:
  - { id: local-llama, family: openai, deployments: [{ provider: local, upstream_id: llama }], price: { input_mtok: 0, output_mtok: 0 } }
`,
  )
})
afterAll(() => rig.stop())

const anthropicEvent = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const anthropicSse =
  anthropicEvent('message_start', { message: { id: 'msg_cut', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } }) +
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Checking.' } }) +
  anthropicEvent('content_block_stop', { index: 0 }) +
  anthropicEvent('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_cut', name: 'get_weather', input: {} } }) +
  anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: CUT_ARGS } }) +
  anthropicEvent('content_block_stop', { index: 1 }) +
  anthropicEvent('message_delta', { delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 8 } }) +
  anthropicEvent('message_stop', {})
const anthropicJson = {
  id: 'msg_cut', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'max_tokens', stop_sequence: null,
  content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_cut', name: 'get_weather', input: {} }],
  usage: { input_tokens: 20, output_tokens: 8 },
}

const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-cut', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const chatSse =
  chunk({ role: 'assistant', content: 'Checking.' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_cut', type: 'function', function: { name: 'get_weather', arguments: '' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: CUT_ARGS } }] }) +
  chunk({}, 'length') +
  `data: ${JSON.stringify({ id: 'chatcmpl-cut', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [], usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } })}\n\n` +
  'data: [DONE]\n\n'
const chatJson = {
  id: 'chatcmpl-cut', object: 'chat.completion', created: 1, model: 'llama',
  choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_cut', type: 'function', function: { name: 'get_weather', arguments: CUT_ARGS } }] } }],
  usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
}

const UPSTREAMS = [
  { name: 'a Claude model', model: 'claude-sonnet-4-5', sse: anthropicSse, json: anthropicJson },
  { name: 'a chat-completions server', model: 'local-llama', sse: chatSse, json: chatJson },
]

const body = (model: string) => ({ model, input: 'weather in Oslo?', tools: [WEATHER], max_output_tokens: 8 })

/** The output's items as [type, status]: the text before the call was whole; the call was cut. */
const shape = (output: any[]) => output.map((o) => [o.type, o.status])
const CUT = [['message', 'completed'], ['function_call', 'incomplete']]

describe('a tool call cut by max_output_tokens is an incomplete item', () => {
  for (const u of UPSTREAMS) {
    test(`${u.name}, streamed: output_item.done, response.incomplete and the stored response say incomplete`, async () => {
      rig.up.script({ sse: u.sse })
      const s = rig.client.responses.stream(body(u.model))
      const done: any[] = []
      for await (const e of s) if (e.type === 'response.output_item.done') done.push(e.item)
      const r: any = await s.finalResponse()
      expect(r.status).toBe('incomplete')
      expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
      expect(shape(done)).toEqual(CUT)
      expect(shape(r.output)).toEqual(CUT)
      expect(r.output[1].arguments).toBe(CUT_ARGS)
      expect(shape((await rig.client.responses.retrieve(r.id)).output)).toEqual(CUT)
    })

    test(`${u.name}, in JSON: the reply and the stored response say incomplete`, async () => {
      rig.up.script({ json: u.json })
      const r: any = await rig.client.responses.create(body(u.model))
      expect(r.status).toBe('incomplete')
      expect(shape(r.output)).toEqual(CUT)
      expect(r.required_action).toBeUndefined()
      expect(shape((await rig.client.responses.retrieve(r.id)).output)).toEqual(CUT)
    })
  }

  test('a message cut so is incomplete too, as OpenAI streams it (the mock, both families)', async () => {
    const long = { input: 'one two three four five six seven eight nine ten', max_output_tokens: 3 }
    for (const model of ['mock-gpt', 'mock-claude']) {
      const s = rig.client.responses.stream({ model, ...long })
      const done: any[] = []
      for await (const e of s) if (e.type === 'response.output_item.done') done.push(e.item)
      expect(shape(done)).toEqual([['message', 'incomplete']])
      expect(shape((await s.finalResponse()).output)).toEqual([['message', 'incomplete']])
      expect(shape((await rig.client.responses.create({ model, ...long })).output)).toEqual([['message', 'incomplete']])
    }
  })

  test("what a cut leaves whole says completed: a custom tool's call (the Vercel AI SDK takes no other status) and redacted thinking, which comes whole", async () => {
    const ev = anthropicEvent
    const start = ev('message_start', { message: { ...anthropicJson, content: [], stop_reason: null } })
    const end = ev('message_delta', { delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 8 } }) + ev('message_stop', {})
    const custom = start + ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_c', name: 'run_code', input: {} } }) +
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"input": "print(1' } }) + ev('content_block_stop', { index: 0 }) + end
    const redacted = start + ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) + ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hm.' } }) +
      ev('content_block_stop', { index: 0 }) + ev('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } }) + ev('content_block_stop', { index: 1 }) + end
    const cases = [
      { sse: custom, json: { ...anthropicJson, content: [{ type: 'tool_use', id: 'toolu_c', name: 'run_code', input: { input: 'print(1' } }] }, tools: [{ type: 'custom', name: 'run_code' }], want: [['custom_tool_call', 'completed']] },
      { sse: redacted, json: { ...anthropicJson, content: [{ type: 'text', text: 'Hm.' }, { type: 'redacted_thinking', data: 'EmwKAhgB' }] }, tools: [], want: [['message', 'completed'], ['reasoning', undefined]] },
    ]
    for (const c of cases) {
      const ask = { model: 'claude-sonnet-4-5', input: 'go', tools: c.tools as any, max_output_tokens: 8 }
      rig.up.script({ sse: c.sse })
      const s = rig.client.responses.stream(ask)
      const done: any[] = []
      for await (const e of s) if (e.type === 'response.output_item.done') done.push(e.item)
      expect(shape(done)).toEqual(c.want)
      expect((await s.finalResponse()).status).toBe('incomplete')
      rig.up.script({ json: c.json })
      const r: any = await rig.client.responses.create(ask)
      expect(r.status).toBe('incomplete')
      expect(shape(r.output)).toEqual(c.want)
    }
  })

  test('the raw stream: the cut call is announced, then done incomplete, before response.incomplete', async () => {
    rig.up.script({ sse: anthropicSse })
    const res = await rig.postResponses({ ...body('claude-sonnet-4-5'), stream: true })
    const fs = frames(await res.text())
    const doneCall = fs.find((f) => f.data.type === 'response.output_item.done' && f.data.item.type === 'function_call')!
    expect(doneCall.data.item).toMatchObject({ status: 'incomplete', arguments: CUT_ARGS, call_id: 'toolu_cut' })
    expect(fs.at(-1)!.data.type).toBe('response.incomplete')
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
  })
})
