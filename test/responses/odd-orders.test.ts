// Upstream streams in orders their wire allows but does not promise (a delta of a block that was
// never started, text inside a call, calls interleaved), translated to the Responses stream:
// every delta belongs to an item announced before it (a message's also to its content part), no
// block goes into another's item, and the openai SDK's stream helper reads it whole.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { frames, startResponsesRig, WEATHER, type Frame, type ResponsesRig } from './e2e-helpers.ts'

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

const A = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const head = A('message_start', { message: { id: 'msg_odd', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } })
const tail = (reason: string) => A('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 8 } }) + A('message_stop', {})
const delta = (index: number, d: object) => A('content_block_delta', { index, delta: d })
const C = (d: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-odd', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [{ index: 0, delta: d, finish_reason: finish }] })}\n\n`
const USAGE = `data: ${JSON.stringify({ id: 'chatcmpl-odd', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [], usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } })}\n\n`
const call = (index: number, args: string, id?: string) => ({ tool_calls: [{ index, ...(id ? { id, type: 'function', function: { name: 'get_weather', arguments: args } } : { function: { arguments: args } }) }] })

/** Each case: the upstream's stream, and the output as [type, text or arguments] that it must give. */
const CASES: { name: string; model: string; sse: string; output: [string, string][] }[] = [
  {
    name: 'Claude: text and thinking deltas of blocks never started',
    model: 'claude-sonnet-4-5',
    sse: head + delta(0, { type: 'text_delta', text: 'one' }) + delta(1, { type: 'thinking_delta', thinking: 'hm' }) + delta(1, { type: 'signature_delta', signature: 'sig' }) + delta(2, { type: 'text_delta', text: 'two' }) + tail('end_turn'),
    output: [['message', 'one'], ['reasoning', ''], ['message', 'two']],
  },
  {
    name: 'Claude: arguments of a call never started (no name, no id: nothing to show), then text',
    model: 'claude-sonnet-4-5',
    sse: head + delta(0, { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' }) + A('content_block_stop', { index: 0 }) + delta(1, { type: 'text_delta', text: 'ok' }) + tail('end_turn'),
    output: [['message', 'ok']],
  },
  {
    name: 'Claude: text inside a call block',
    model: 'claude-sonnet-4-5',
    sse:
      head + A('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }) +
      delta(0, { type: 'input_json_delta', partial_json: '{"city":' }) + delta(0, { type: 'text_delta', text: 'stray' }) + delta(0, { type: 'input_json_delta', partial_json: '"Oslo"}' }) +
      A('content_block_stop', { index: 0 }) + tail('tool_use'),
    output: [['function_call', '{"city":"Oslo"}'], ['message', 'stray']],
  },
  {
    name: 'chat: text inside a call, and two calls interleaved',
    model: 'local-llama',
    sse:
      C({ role: 'assistant' }) + C(call(0, '{"city":', 'call_1')) + C({ content: 'stray' }) + C(call(1, '{"city":', 'call_2')) +
      C(call(0, '"Oslo"}')) + C(call(1, '"Rome"}')) + C({}, 'tool_calls') + USAGE + 'data: [DONE]\n\n',
    output: [['function_call', '{"city":"Oslo"}'], ['message', 'stray'], ['function_call', '{"city":"Rome"}']],
  },
]

/** What is wrong with a Responses stream's item events: a delta before its item or part, or after its item's end. */
function misplaced(fs: Frame[]): string[] {
  const items = new Map<number, { type: string; id: string; part: boolean; done: boolean }>()
  const wrong: string[] = []
  for (const { data: e } of fs) {
    if (e.type === 'response.output_item.added') {
      if (items.has(e.output_index) || e.output_index !== items.size) wrong.push(`${e.type} at ${e.output_index}`)
      items.set(e.output_index, { type: e.item.type, id: e.item.id, part: false, done: false })
      continue
    }
    if (e.output_index === undefined) continue
    const it = items.get(e.output_index)
    if (!it || it.done || (e.item_id !== undefined && e.item_id !== it.id)) wrong.push(`${e.type} at ${e.output_index}: no item open there`)
    else if (e.type === 'response.content_part.added') it.part = true
    else if (e.type === 'response.output_text.delta' && (it.type !== 'message' || !it.part)) wrong.push(`${e.type} at ${e.output_index}: no output_text part`)
    else if (e.type === 'response.function_call_arguments.delta' && it.type !== 'function_call') wrong.push(`${e.type} at ${e.output_index}: not a call`)
    else if (e.type === 'response.output_item.done') it.done = true
  }
  for (const [i, it] of items) if (!it.done) wrong.push(`item ${i} never done`)
  return wrong
}

const shown = (output: any[]) => output.map((o): [string, string] => [o.type, o.type === 'message' ? o.content[0].text : (o.arguments ?? '')])

describe('odd upstream orders make a well-formed Responses stream', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      rig.up.script({ sse: c.sse })
      const fs = frames(await (await rig.postResponses({ model: c.model, input: 'x', tools: [WEATHER], stream: true })).text())
      expect(misplaced(fs)).toEqual([])
      expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
      rig.up.script({ sse: c.sse })
      const s = rig.client.responses.stream({ model: c.model, input: 'x', tools: [WEATHER] })
      let text = ''
      for await (const e of s) if (e.type === 'response.output_text.delta') text += e.delta
      const r = await s.finalResponse()
      expect(shown(r.output)).toEqual(c.output)
      expect(text).toBe(c.output.filter(([t]) => t === 'message').map(([, s]) => s).join(''))
    })
  }
})
