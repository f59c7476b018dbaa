// The match key of an upstream request: stable across key order, whitespace and volatile
// fields, different for anything that changes what the model is asked.
import { describe, expect, test } from 'bun:test'
import { canonical, firstDifference, matchKey, normalize } from '../../src/replay/match.ts'

const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }

describe('match key', () => {
  test('key order, whitespace and volatile fields do not change it', () => {
    const reordered = JSON.parse(JSON.stringify({ stream: true, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o-mini', user: 'run-2' }))
    expect(matchKey({ path: '/v1/chat/completions', body: reordered })).toBe(matchKey({ path: '/v1/chat/completions', body: base }))
    expect(matchKey({ path: '/v1/messages', body: { ...base, metadata: { user_id: 'a' } } })).toBe(matchKey({ path: '/v1/messages', body: { ...base, metadata: { user_id: 'b' } } }))
  })

  test("a client's own bookkeeping does not change it (Codex's turn ids, its input items' ids)", () => {
    const turn = (id: string) => ({
      ...base,
      client_metadata: { root_turn_id: id, session_id: id },
      prompt_cache_key: id,
      input: [{ type: 'message', id: `msg_${id}`, role: 'user', content: 'hi' }, { type: 'function_call_output', id: `fco_${id}`, call_id: 'call_1', output: 'ok' }],
    })
    expect(matchKey({ path: '/v1/responses', body: turn('a') })).toBe(matchKey({ path: '/v1/responses', body: turn('b') }))
    // what the items say still counts
    const other = turn('a')
    other.input[1]!.call_id = 'call_2'
    expect(matchKey({ path: '/v1/responses', body: other })).not.toBe(matchKey({ path: '/v1/responses', body: turn('a') }))
  })

  test("an item_reference's id is what it asks for: two references to different items are different requests (the cache and cassettes key on it)", () => {
    const ref = (id: string) => ({ ...base, input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id }, { role: 'user', content: 'what did you say?' }] })
    expect(matchKey({ path: '/v1/responses', body: ref('msg_a') })).not.toBe(matchKey({ path: '/v1/responses', body: ref('msg_b') }))
    expect(matchKey({ path: '/v1/responses', body: ref('msg_a') })).toBe(matchKey({ path: '/v1/responses', body: ref('msg_a') }))
  })

  test('what the model is asked, and where, changes it', () => {
    const k = matchKey({ path: '/v1/chat/completions', body: base })
    expect(matchKey({ path: '/v1/chat/completions', body: { ...base, messages: [{ role: 'user', content: 'hello' }] } })).not.toBe(k)
    expect(matchKey({ path: '/v1/responses', body: base })).not.toBe(k)
    expect(matchKey({ path: '/v1/chat/completions', body: { ...base, temperature: 0 } })).not.toBe(k)
  })

  test('configured paths are ignored too, with * for any key or index', () => {
    const a = { ...base, messages: [{ role: 'user', content: 'hi', name: 'x' }] }
    const b = { ...base, messages: [{ role: 'user', content: 'hi', name: 'y' }] }
    expect(matchKey({ path: '/p', body: a })).not.toBe(matchKey({ path: '/p', body: b }))
    expect(matchKey({ path: '/p', body: a }, ['messages.*.name'])).toBe(matchKey({ path: '/p', body: b }, ['messages.*.name']))
    expect(normalize({ a: { b: 1, c: 2 } }, ['a.b'])).toEqual({ a: { c: 2 } })
  })

  test('the first difference names the field', () => {
    const a = JSON.parse(canonical({ path: '/p', body: base }))
    const b = JSON.parse(canonical({ path: '/p', body: { ...base, messages: [{ role: 'user', content: 'hello' }] } }))
    expect(firstDifference(a, b)).toBe('body.messages.0.content')
    expect(firstDifference(a, a)).toBeUndefined()
  })
})
