// Fuzzed messages-style bodies: every position of a rich valid body replaced by random
// JSON values, for a Claude and a GPT model, in both cross-family modes. Whatever comes in,
// the codec answers with a 400 HttpError or a request — never another exception (a 500).
// And random IR event orders keep the SSE encoder's block invariants.
// Seeded, so a failure reproduces.
import { describe, expect, test } from 'bun:test'
import { HttpError } from '../../src/http/errors.ts'
import type { StreamEvent } from '../../src/ir/types.ts'
import { encodeMessagesResponse } from '../../src/surfaces/messages/encode.ts'
import { messagesPromptText } from '../../src/surfaces/messages/prompt.ts'
import { createMessagesStreamEncoder } from '../../src/surfaces/messages/stream.ts'
import { CLAUDE_CODE_BODY, decode, GPT } from './helpers.ts'

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
}
const rand = rng(20261123)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!

function junk(depth = 0): unknown {
  const gens: (() => unknown)[] = [
    () => null, () => true, () => false, () => -1, () => 0, () => 1e308, () => NaN, () => 0.5, () => 2 ** 53 + 1,
    () => '', () => 'ünïcödé 🚀 \u0000 \ud800', () => 'text', () => 'ephemeral', () => 'tool_result', () => 'toString',
    () => [], () => ({}), () => ({ __proto__: { type: 'text' } }), () => Object.create(null),
    () => (depth < 3 ? [junk(depth + 1)] : 1),
    () => (depth < 3 ? { type: pick(['text', 'image', 'tool_use', 'tool_result', 'thinking', 'document', 'x_tool_result', 'tool', 'any', 'enabled', 'base64', 'url', 'file', 'content']), text: junk(depth + 1), source: junk(depth + 1), content: junk(depth + 1), name: junk(depth + 1) } : 'y'),
  ]
  return pick(gens)()
}

const RICH = {
  ...CLAUDE_CODE_BODY,
  max_tokens: 4000,
  temperature: 0.5,
  stop_sequences: ['END'],
  betas: ['files-api-2025-04-14'],
  tool_choice: { type: 'tool', name: 'Bash', disable_parallel_tool_use: true },
  messages: [
    ...CLAUDE_CODE_BODY.messages,
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'ls' } }] },
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' }, title: 'T' },
        { type: 'tool_result', tool_use_id: 'toolu_02', content: [{ type: 'text', text: 'r' }, { type: 'image', source: { type: 'url', url: 'https://x' } }] },
      ],
    },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'redacted_thinking', data: 'r' }, { type: 'text', text: 'ok' }] },
  ],
}

/** Every path (array of keys) into a JSON value. */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at]
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])))
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]))
  return out
}

function mutate(v: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value
  const [head, ...rest] = path
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) }
  copy[head!] = mutate(copy[head!], rest, value)
  return copy
}

function survive(raw: unknown) {
  for (const mode of ['reject', 'translate'] as const) {
    try {
      decode(raw, mode)
    } catch (e) {
      if (!(e instanceof HttpError) || e.status !== 400) throw new Error(`not a 400 for ${JSON.stringify(raw)?.slice(0, 300)}: ${e}`)
    }
  }
  expect(typeof messagesPromptText(raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {})).toBe('string')
}

describe('fuzzed bodies never give a 500', () => {
  const all = paths(RICH)
  test('the rich body is valid for Claude', () => expect(() => decode(RICH)).not.toThrow())
  test(`every one of ${all.length} positions × 12 random values, Claude and GPT`, () => {
    for (const path of all) {
      for (let i = 0; i < 12; i++) {
        const raw = mutate(RICH, path, junk()) as Record<string, unknown>
        survive(raw)
        if (raw && typeof raw === 'object' && !Array.isArray(raw)) survive({ ...raw, model: GPT, max_tokens: 4000 })
      }
    }
  })
  test('deleted positions', () => {
    for (const path of all) {
      if (path.length === 0) continue
      survive(mutate(RICH, path, undefined))
    }
  })
  test('whole random bodies', () => {
    for (let i = 0; i < 2000; i++) survive(junk())
    for (let i = 0; i < 2000; i++) survive({ model: pick(['claude-sonnet-4-5', GPT, 'mock-claude', junk()]), max_tokens: pick([1, 4000, junk()]), messages: junk(), [pick(['system', 'tools', 'tool_choice', 'thinking', 'metadata', 'output_config'])]: junk() })
  })
})

describe('random IR event orders keep the block invariants', () => {
  const EVENTS: (() => StreamEvent)[] = [
    () => ({ type: 'start', id: pick(['', 'msg_1', 'chatcmpl-2']), model: 'm', created: 0 }),
    () => ({ type: 'text-start' }), () => ({ type: 'text-delta', text: pick(['', 'a', '✓']) }), () => ({ type: 'text-end' }),
    () => ({ type: 'reasoning-start' }), () => ({ type: 'reasoning-delta', text: pick(['', 'r']) }), () => ({ type: 'reasoning-end' }),
    () => ({ type: 'reasoning-signature', signature: 'sig' }), () => ({ type: 'reasoning-redacted', data: 'red' }),
    () => ({ type: 'tool-input-start', index: Math.floor(rand() * 3), id: 'call', name: 'f' }),
    () => ({ type: 'tool-input-delta', index: Math.floor(rand() * 4), delta: pick(['', '{"a"', ':1}']) }),
    () => ({ type: 'tool-input-end', index: Math.floor(rand() * 4) }),
    () => ({ type: 'usage', usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
  ]
  test('3000 random streams', () => {
    for (let n = 0; n < 3000; n++) {
      const enc = createMessagesStreamEncoder({ id: 'x', model: 'm' })
      let sse = ''
      const len = Math.floor(rand() * 20)
      for (let i = 0; i < len; i++) sse += enc.push(pick(EVENTS)())
      sse += enc.push({ type: 'finish', finish: { reason: pick(['stop', 'tool_calls', 'other', 'length'] as const) }, usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } })
      const open = new Set<number>()
      let next = 0
      const names: string[] = []
      for (const f of sse.slice(0, -2).split('\n\n')) {
        const [ev, data] = f.split('\n')
        const name = ev!.slice(7)
        const d = JSON.parse(data!.slice(6))
        names.push(name)
        if (name === 'content_block_start') {
          expect(d.index).toBe(next++)
          open.add(d.index)
        } else if (name === 'content_block_delta') expect(open.has(d.index)).toBe(true)
        else if (name === 'content_block_stop') expect(open.delete(d.index)).toBe(true)
      }
      expect(open.size).toBe(0)
      expect(names[0]).toBe('message_start')
      expect(names.filter((x) => x === 'message_start').length).toBe(1)
      expect(names.slice(-2)).toEqual(['message_delta', 'message_stop'])
    }
  })
  test('encodeMessagesResponse takes any IR content', () => {
    const r = encodeMessagesResponse({ id: '', model: '', created: 0, content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '[1,2' }, { type: 'image', source: { kind: 'url', url: 'u' } }], finish: { reason: 'error' }, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } }, 'm')
    expect(r.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: { _raw_arguments: '[1,2' } }])
  })
})
