// The block normalizer every translated stream goes through: one block open at a time, in the
// order the upstream produced them, nothing an upstream sent lost to a block already closed.
import { describe, expect, test } from 'bun:test'
import { blockBoundaries, createBlockNormalizer } from '../../src/ir/blocks.ts'
import type { StreamEvent } from '../../src/ir/types.ts'

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
const start = (index: number, id = `call_${index}`): StreamEvent => ({ type: 'tool-input-start', index, id, name: 'f' })
const args = (index: number, delta: string): StreamEvent => ({ type: 'tool-input-delta', index, delta })
const text = (t: string): StreamEvent => ({ type: 'text-delta', text: t })

function normalize(events: StreamEvent[]): StreamEvent[] {
  const blocks = createBlockNormalizer()
  return events.flatMap((e) => blocks(e))
}

/** The blocks as the client sees them: each with its kind and content, and whether any opened inside another. */
function blocksOf(events: StreamEvent[]) {
  const out: { kind: string; content: string }[] = []
  let open: string | null = null
  let nested = false
  for (const e of events) {
    if (e.type === 'text-start' || e.type === 'reasoning-start' || e.type === 'tool-input-start') {
      if (open !== null) nested = true
      open = e.type === 'tool-input-start' ? e.id : e.type
      out.push({ kind: open, content: '' })
    } else if (e.type === 'text-delta' || e.type === 'reasoning-delta') out.at(-1)!.content += e.text
    else if (e.type === 'tool-input-delta') out.find((b) => b.kind === `call_${e.index}`)!.content += e.delta
    else if (e.type === 'text-end' || e.type === 'reasoning-end' || e.type === 'tool-input-end') open = null
  }
  return { blocks: out, nested, openAtEnd: open }
}

describe('text that comes while a tool call is open', () => {
  test('waits for the call to end, then comes whole, never inside the call', () => {
    const out = normalize([start(0), args(0, '{"a":'), text('Checking '), args(0, '1}'), text('now.'), { type: 'tool-input-end', index: 0 }, text(' Done.'), { type: 'finish', finish: { reason: 'tool_calls' }, usage }])
    const { blocks, nested, openAtEnd } = blocksOf(out)
    expect(nested).toBe(false)
    expect(openAtEnd).toBe(null)
    expect(blocks).toEqual([{ kind: 'call_0', content: '{"a":1}' }, { kind: 'text-start', content: 'Checking now. Done.' }])
    expect(out.at(-1)!.type).toBe('finish')
  })

  test('keeps its place between parallel calls: a call started after it follows it', () => {
    const out = normalize([
      start(0), args(0, '{"a":'), text('between'), start(1), args(1, '{"b":2}'), args(0, '1}'),
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ])
    const { blocks, nested } = blocksOf(out)
    expect(nested).toBe(false)
    expect(blocks).toEqual([{ kind: 'call_0', content: '{"a":1}' }, { kind: 'text-start', content: 'between' }, { kind: 'call_1', content: '{"b":2}' }])
  })

  test('a call that ended while it waited opens and ends in its turn; text after a call that opened waits for it', () => {
    const out = normalize([
      start(0), start(1), args(1, '{}'), { type: 'tool-input-end', index: 1 }, text('x'), start(2), args(2, '{"c"'),
      args(0, '{}'), { type: 'tool-input-end', index: 0 }, text('y'), args(2, ':3}'), { type: 'tool-input-end', index: 2 },
      { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ])
    const { blocks, nested, openAtEnd } = blocksOf(out)
    expect(nested).toBe(false)
    expect(openAtEnd).toBe(null)
    expect(blocks).toEqual([
      { kind: 'call_0', content: '{}' }, { kind: 'call_1', content: '{}' }, { kind: 'text-start', content: 'x' },
      { kind: 'call_2', content: '{"c":3}' }, { kind: 'text-start', content: 'y' },
    ])
  })

  test('reasoning and a signature wait as text does, the signature still ending its block', () => {
    const out = normalize([start(0), { type: 'reasoning-delta', text: 'hm' }, { type: 'reasoning-signature', signature: 'sig' }, text('t'), { type: 'finish', finish: { reason: 'stop' }, usage }])
    expect(out.map((e) => e.type)).toEqual([
      'tool-input-start', 'tool-input-end', 'reasoning-start', 'reasoning-delta', 'reasoning-signature', 'reasoning-end',
      'text-start', 'text-delta', 'text-end', 'finish',
    ])
  })

  test('a failure: the open call is cut, not ended; what waited for it is not sent (no block inside it)', () => {
    const out: StreamEvent[] = []
    const blocks = blockBoundaries((e) => out.push(e))
    for (const e of [start(0), args(0, '{"a"'), text('part'), { type: 'reasoning-delta', text: 'hm' } as StreamEvent, start(1), args(1, '{}'), { type: 'error', error: { status: 502, message: 'x' } } as StreamEvent]) blocks(e)
    expect(out.map((e) => e.type)).toEqual(['tool-input-start', 'tool-input-delta', 'error'])
    // text open at the failure ends marked cut
    expect(normalize([text('a'), { type: 'error', error: { status: 502, message: 'x' } }]).map((e) => (e.type === 'text-end' ? e : e.type))).toEqual(['text-start', 'text-delta', { type: 'text-end', cut: true }, 'error'])
  })

  test('with no call open, text goes on at once, a delta as it came', () => {
    const blocks = createBlockNormalizer()
    const d = text('a')
    expect(blocks(d)).toEqual([{ type: 'text-start' }, d])
    expect(blocks(d)[0]).toBe(d)
  })
})

describe('a delta with no block of its own', () => {
  const end = (index: number): StreamEvent => ({ type: 'tool-input-end', index })
  const finish: StreamEvent = { type: 'finish', finish: { reason: 'tool_calls' }, usage }

  test('text and reasoning deltas never started get their block started, each kind a block of its own', () => {
    const out = normalize([text('a'), { type: 'reasoning-delta', text: 'r' }, text('b'), finish])
    expect(out.map((e) => e.type)).toEqual(['text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end', 'finish'])
  })

  test('a piece of a call never started, or of one that ended, is dropped: no delta goes out without its start', () => {
    const out = normalize([args(3, '{"lost":1}'), start(0), args(0, '{}'), args(1, 'x'), end(0), args(0, 'late'), finish])
    expect(out.map((e) => e.type)).toEqual(['tool-input-start', 'tool-input-delta', 'tool-input-end', 'finish'])
    expect(blocksOf(out).blocks).toEqual([{ kind: 'call_0', content: '{}' }])
  })

  test('a call that ended while it waited takes no piece after its end; a call started again under its index is a call of its own', () => {
    const out = normalize([start(0), start(1), args(1, '{"b":1}'), end(1), args(1, 'late'), start(1, 'call_1b'), args(1, '{"c":2}'), args(0, '{}'), end(0), end(1), finish])
    expect(out).toEqual([
      start(0), args(0, '{}'), end(0),
      start(1), args(1, '{"b":1}'), end(1),
      start(1, 'call_1b'), args(1, '{"c":2}'), end(1),
      finish,
    ])
  })
})
