// The responses stream encoder on hand-made IR event sequences the mock cannot produce:
// several tool calls (max_tool_calls), redacted thinking, a failure mid-item.
import { describe, expect, test } from 'bun:test'
import { createBlockNormalizer } from '../../src/ir/blocks.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { encodeResponse } from '../../src/surfaces/responses/encode.ts'
import { hiddenBounds } from '../../src/http/hidden-json.ts'
import { openReasoning } from '../../src/surfaces/responses/reasoning.ts'
import { createResponsesStreamEncoder } from '../../src/surfaces/responses/stream.ts'
import type { Turn } from '../../src/surfaces/responses/validate.ts'
import { frames, types } from './e2e-helpers.ts'

const turn = (t: Partial<Turn> = {}): Turn => ({ items: [], history: [], tools: [], store: true, stateful: false, ...t })
const frame = (t: Partial<Turn> = {}) => ({ id: 'resp_1', model: 'm', createdAt: 1, turn: turn(t), body: {} })
const usage = { inputTokens: 5, outputTokens: 7, cacheReadTokens: 2, cacheWriteTokens: 0 }

function run(events: StreamEvent[], t: Partial<Turn> = {}, onFinal: (r: any) => void = () => {}) {
  const enc = createResponsesStreamEncoder(frame(t), new Set(['patch']), onFinal)
  const blocks = createBlockNormalizer()
  let text = ''
  for (const e of events) for (const b of blocks(e)) text += enc.push(b)
  return { enc, text }
}

const twoCalls: StreamEvent[] = [
  { type: 'start', id: 'x', model: 'm', created: 1 },
  { type: 'text-delta', text: 'calling' },
  { type: 'tool-input-start', index: 0, id: 'call_a', name: 'f' },
  { type: 'tool-input-delta', index: 0, delta: '{"a":1}' },
  { type: 'tool-input-start', index: 1, id: 'call_b', name: 'f' },
  { type: 'tool-input-delta', index: 1, delta: '{"b":2}' },
  { type: 'finish', finish: { reason: 'tool_calls' }, usage },
]

describe('responses stream encoder', () => {
  test('two tool calls: both items, both in required_action; usage with cached tokens', () => {
    let final: any
    const { text } = run(twoCalls, {}, (r) => (final = r))
    const fs = frames(text)
    expect(types(fs).filter((t) => t === 'response.output_item.done')).toHaveLength(3)
    expect(final.required_action.submit_tool_outputs.tool_calls.map((c: any) => c.id)).toEqual(['call_a', 'call_b'])
    expect(final.usage).toEqual({ input_tokens: 7, input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 })
    expect(final.output_text).toBe('calling')
  })

  test('max_tool_calls: 1 keeps the first call only', () => {
    let final: any
    const { text } = run(twoCalls, { maxToolCalls: 1 }, (r) => (final = r))
    expect(final.output.filter((o: any) => o.type === 'function_call').map((o: any) => o.call_id)).toEqual(['call_a'])
    expect(text).not.toContain('call_b')
  })

  test('JSON encoding applies the same cap', () => {
    const r = encodeResponse({ id: 'x', model: 'm', created: 1, content: [{ type: 'tool-call', id: 'a', name: 'f', arguments: '{}' }, { type: 'tool-call', id: 'b', name: 'f', arguments: '{}' }], finish: { reason: 'tool_calls' }, usage }, frame({ maxToolCalls: 1 }), new Set())
    expect((r.output as any[]).length).toBe(1)
    expect(r.status).toBe('requires_action')
  })

  test('redacted thinking becomes a reasoning item whose envelope restores it', () => {
    let final: any
    run([{ type: 'start', id: 'x', model: 'm', created: 1 }, { type: 'reasoning-redacted', data: 'EqQBCgIYAh' }, { type: 'text-delta', text: 'ok' }, { type: 'finish', finish: { reason: 'stop' }, usage }], {}, (r) => (final = r))
    const rs = final.output[0]
    expect(rs.type).toBe('reasoning')
    expect(openReasoning(rs, hiddenBounds(), 'output[0]')).toEqual({ type: 'reasoning', text: '', redacted: 'EqQBCgIYAh' })
  })

  test('a failure mid-item: the open item is in the failed response; nothing is stored', () => {
    let stored = false
    const { enc, text } = run([{ type: 'start', id: 'x', model: 'm', created: 1 }, { type: 'text-delta', text: 'par' }], {}, () => (stored = true))
    const fs = frames(text + enc.failure({ message: 'upstream died', type: 'overloaded_error' }))
    expect(types(fs).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    expect(fs.at(-3)!.data.error).toEqual({ code: 'overloaded_error', message: 'upstream died', type: 'overloaded_error' })
    expect(fs.at(-1)!.data.response.output[0].type).toBe('message')
    expect(stored).toBe(false)
    expect(enc.state.status).toBe('failed')
  })

  test('a failure mid-call: the failed response holds what was sent of the text and the arguments, incomplete', () => {
    const { enc, text } = run([
      { type: 'start', id: 'x', model: 'm', created: 1 },
      { type: 'text-delta', text: 'checking' },
      { type: 'tool-input-start', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool-input-delta', index: 0, delta: '{"city":"Os' },
      { type: 'error', error: { status: 502, message: 'upstream died', type: 'overloaded_error' } },
    ])
    const fs = frames(text + enc.failure({ message: 'upstream died', type: 'overloaded_error' }))
    const sent = fs.filter((f) => f.data.type === 'response.function_call_arguments.delta').map((f) => f.data.delta).join('')
    const failed = fs.find((f) => f.data.type === 'response.failed')!.data.response
    expect(failed.output.map((o: any) => [o.type, o.status])).toEqual([['message', 'completed'], ['function_call', 'incomplete']])
    expect(failed.output[0].content[0].text).toBe('checking')
    expect(failed.output[1]).toMatchObject({ call_id: 'call_a', name: 'f', arguments: sent })
    expect(sent).toBe('{"city":"Os')
  })

  test('a call that ended before the failure: its done events, completed, come before the error events', () => {
    const { enc, text } = run([
      { type: 'start', id: 'x', model: 'm', created: 1 },
      { type: 'tool-input-start', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool-input-delta', index: 0, delta: '{"a":1}' },
      { type: 'tool-input-end', index: 0 },
      { type: 'error', error: { status: 502, message: 'upstream died' } },
    ])
    const fs = frames(text + enc.failure({ message: 'upstream died' }))
    expect(types(fs).slice(-5)).toEqual(['response.function_call_arguments.done', 'response.output_item.done', 'response.error', 'response.failed', 'response.completed'])
    expect(fs.at(-4)!.data.item).toMatchObject({ call_id: 'call_a', status: 'completed', arguments: '{"a":1}' })
    expect(fs.at(-1)!.data.response.output[0].status).toBe('completed')
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
  })

  test('a budget cut: the item written last is incomplete, those before it completed; a call left out by max_tool_calls was not the one shown', () => {
    const cut: StreamEvent[] = [...twoCalls.slice(0, -1), { type: 'usage', usage }, { type: 'finish', finish: { reason: 'length' }, usage }]
    const statuses = (t: Partial<Turn>) => {
      let final: any
      const done = frames(run(cut, t, (r) => (final = r)).text).filter((f) => f.data.type === 'response.output_item.done').map((f) => f.data.item.status)
      const json = encodeResponse({ id: 'x', model: 'm', created: 1, content: [{ type: 'text', text: 'calling' }, { type: 'tool-call', id: 'call_a', name: 'f', arguments: '{"a":1}' }, { type: 'tool-call', id: 'call_b', name: 'f', arguments: '{"b":2}' }], finish: { reason: 'length' }, usage }, frame(t), new Set())
      return { done, final: final.output.map((o: any) => o.status), json: (json.output as any[]).map((o) => o.status) }
    }
    expect(statuses({})).toEqual({ done: ['completed', 'completed', 'incomplete'], final: ['completed', 'completed', 'incomplete'], json: ['completed', 'completed', 'incomplete'] })
    expect(statuses({ maxToolCalls: 1 })).toEqual({ done: ['completed', 'completed'], final: ['completed', 'completed'], json: ['completed', 'completed'] })
  })

  test('a failure mid-text: the message holds the text sent so far, incomplete', () => {
    // as the pipeline sends it: the error event (which ends the open text, marked cut) before the failure
    const { enc, text } = run([{ type: 'start', id: 'x', model: 'm', created: 1 }, { type: 'text-delta', text: 'par' }, { type: 'text-delta', text: 'tial' }, { type: 'error', error: { status: 502, message: 'x' } }])
    const fs = frames(text + enc.failure({ message: 'x' }))
    const failed = fs.find((f) => f.data.type === 'response.failed')!.data.response
    expect(failed.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ type: 'output_text', text: 'partial' })] })])
    // not shown done (completed) before the failure
    expect(types(fs)).not.toContain('response.output_item.done')
  })

  test('for the SDK stream helper (known events only): no response.requires_action, OpenAI `error` on failure', () => {
    const enc = createResponsesStreamEncoder(frame(), new Set(), () => {}, true)
    const blocks = createBlockNormalizer()
    let text = ''
    for (const e of twoCalls) for (const b of blocks(e)) text += enc.push(b)
    expect(types(frames(text))).not.toContain('response.requires_action')
    expect(frames(text).at(-1)!.data.response.status).toBe('requires_action')
    const enc2 = createResponsesStreamEncoder(frame(), new Set(), () => {}, true)
    const fs = frames(enc2.push({ type: 'start', id: 'x', model: 'm', created: 1 }) + enc2.failure({ message: 'x' }))
    expect(types(fs).slice(-3)).toEqual(['error', 'response.failed', 'response.completed'])
  })
})

describe('responses stream bytes', () => {
  test('a text delta is the JSON of its event whole, escapes included; sequence numbers run on without a gap', () => {
    const text = 'say "hi"\n\u2028 \\ é 🙂'
    const { text: sse } = run([{ type: 'start', id: 'x', model: 'm', created: 1 }, { type: 'text-delta', text }, { type: 'text-delta', text: 'b' }, { type: 'finish', finish: { reason: 'stop' }, usage }])
    const fs = frames(sse)
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
    const raw = sse.split('\n\n').filter((f) => f.startsWith('event: response.output_text.delta\n'))
    const first = fs.find((f) => f.data.type === 'response.output_text.delta')!.data
    expect(raw[0]).toBe(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: first.sequence_number, item_id: first.item_id, output_index: 0, content_index: 0, delta: text, logprobs: [] })}`)
    expect(fs.at(-1)!.data.response.output[0].content[0].text).toBe(text + 'b')
  })
})

describe('an output item\'s text as it streams', () => {
  test('the done events carry every delta joined, a character split across two deltas whole, and tool arguments likewise', () => {
    const smile = '\u{1F642}'
    const deltas = ['Hi ', smile[0]!, smile[1]! + ' there', ...Array.from({ length: 300 }, (_, i) => ` w${i} é`)]
    const events: StreamEvent[] = [
      { type: 'start', id: 'x', model: 'm', created: 1 },
      ...deltas.map((text): StreamEvent => ({ type: 'text-delta', text })),
      { type: 'tool-input-start', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool-input-delta', index: 0, delta: '{"city":' },
      { type: 'tool-input-delta', index: 0, delta: '"Z\u00fcrich"}' },
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ]
    let final: any
    const fs = frames(run(events, {}, (r) => (final = r)).text)
    const want = deltas.join('')
    expect(fs.find((f) => f.data.type === 'response.output_text.done')!.data.text).toBe(want)
    expect(fs.find((f) => f.data.type === 'response.content_part.done')!.data.part.text).toBe(want)
    expect(final.output[0].content[0].text).toBe(want)
    expect(fs.find((f) => f.data.type === 'response.function_call_arguments.done')!.data.arguments).toBe('{"city":"Z\u00fcrich"}')
  })
})

describe('finish → status', () => {
  test('every IR finish reason has an explicit status', async () => {
    const { statusOf } = await import('../../src/surfaces/responses/encode.ts')
    expect(statusOf({ reason: 'stop' })).toEqual({ status: 'completed' })
    expect(statusOf({ reason: 'length' })).toEqual({ status: 'incomplete', incomplete: { reason: 'max_output_tokens' } })
    expect(statusOf({ reason: 'refusal' })).toEqual({ status: 'incomplete', incomplete: { reason: 'content_filter' } })
    expect(statusOf({ reason: 'pause', raw: 'pause_turn' })).toEqual({ status: 'incomplete', incomplete: { reason: 'max_output_tokens' } })
    expect(statusOf({ reason: 'context_exceeded' })).toEqual({ status: 'incomplete', incomplete: { reason: 'max_output_tokens' } })
    expect(statusOf({ reason: 'other', raw: 'weird_new_reason' })).toEqual({ status: 'incomplete', incomplete: { reason: 'weird_new_reason' } })
  })
})
