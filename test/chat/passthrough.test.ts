import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openAIChatTap } from '../../src/providers/openai/tap.ts'
import { EventSplitter } from '../../src/routing/sse-events.ts'

const fixture = (p: string) => readFileSync(join(import.meta.dir, '..', 'fixtures', p), 'utf8')

function relay(sse: string, stripUsage: boolean, pieces = 7) {
  const split = new EventSplitter()
  const t = openAIChatTap({ stripUsage })
  let out = ''
  const step = Math.ceil(sse.length / pieces)
  for (let i = 0; i < sse.length; i += step) for (const ev of split.push(sse.slice(i, i + step))) out += t.event(ev) ?? ''
  const rest = split.rest()
  if (rest) out += t.event(rest) ?? ''
  return { out, tap: t.state }
}

describe('pass-through tap', () => {
  const sse = fixture('openai/chat/stream-text-include-usage.sse')
  test('with include_usage asked by the client: bytes relayed unchanged; id, usage and finish read', () => {
    const { out, tap } = relay(sse, false)
    expect(out).toBe(sse)
    expect(tap).toMatchObject({ id: 'chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc', finishReason: 'stop', done: true, produced: true })
    expect(tap.usage).toEqual({ inputTokens: 78, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 })
  })
  test('without: the usage chunk and every `usage` field are stripped, the rest unchanged', () => {
    const { out, tap } = relay(sse, true)
    expect(out).not.toContain('usage')
    expect(out).toContain('"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]')
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(tap.usage?.outputTokens).toBe(9)
    const texts = out.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)).choices[0].delta.content ?? '').join('')
    expect(texts).toBe('The capital of the UK is London.')
  })
  test('cached tokens land in the cache-read bucket', () => {
    const { tap } = relay(fixture('openai/chat/stream-cached-tokens-length.sse'), true, 40)
    expect(tap.finishReason).toBe('length')
    expect(tap.usage!.cacheReadTokens).toBe(1280)
    expect(tap.usage!.inputTokens + tap.usage!.cacheReadTokens).toBeGreaterThan(1280)
  })
  test('non-stream JSON: id, usage with reasoning tokens, finish', () => {
    const t = openAIChatTap()
    t.json(fixture('openai/chat/nonstream-reasoning-tokens.json'))
    const tap = t.state
    expect(tap).toMatchObject({ id: 'chatcmpl-Dr3KNfXKBS1oDOrhqYDuLYdjX9PM4', finishReason: 'stop' })
    expect(tap.usage).toEqual({ inputTokens: 7, outputTokens: 87, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 64 })
  })
  test('CRLF event boundaries split too', () => {
    const s = new EventSplitter()
    expect(s.push('data: a\r\n\r\ndata: b\n\ndata: c')).toEqual(['data: a\r\n\r\n', 'data: b\n\n'])
    expect(s.rest()).toBe('data: c')
  })
})
