// A funded key's hold on a Claude prompt follows the price its cache breakpoints let it be billed
// at: input alone without one, a 5-minute write (1.25×) when all are 5-minute ones, an hour's (2×)
// when any asks for an hour. Held at an hour's write whatever the request, a request that caches
// nothing was held at twice its worst cost, and a key near the end of its credit was refused
// requests it could pay for. Never below what the record charges: a 1h prompt still holds 2×.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { burstAs } from '../helpers/burst.ts'
import { promptBound } from '../../src/billing/prompt-bound.ts'
import { worstCase } from '../../src/billing/admission.ts'
import type { ApiKey } from '../../src/http/context.ts'

let up: FakeUpstream
let g: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  // Anthropic bills what the request it was sent asks for: the prompt written for an hour, for five
  // minutes, or read as input (4,000 tokens, under the gateway's bound of its bytes)
  up.script((req) => {
    const sent = JSON.stringify(req.json())
    const writes = sent.includes('"ttl":"1h"') ? '1h' : sent.includes('"cache_control"') ? '5m' : 'none'
    const prompt = 4_000
    const usage = writes === 'none' ? { input_tokens: prompt, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
      : { input_tokens: 0, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: prompt,
          cache_creation: { ephemeral_5m_input_tokens: writes === '5m' ? prompt : 0, ephemeral_1h_input_tokens: writes === '1h' ? prompt : 0 } }
    return { waitMs: 200, json: { ...fixtureJson('anthropic/messages/nonstream-text.json'), usage } }
  })
  g = await startGateway({
    logLevel: 'silent',
    yaml: `
providers:
  - { id: anth, kind: anthropic, base_url: ${up.url}, api_key: sk-up-a, max_retries: 0 }
models:
  - { id: claude-haiku-4-5, family: anthropic }
`,
    env: { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' },
  })
})
afterAll(async () => {
  await g?.stop()
  await up?.stop()
})

/** 20 requests at once on a key with `credits`: how many were served, and what the key spent. */
async function burst(credits: number, path: string, body: unknown) {
  const { key, record } = await g.services.keys.create({ name: 'near its credit', credits })
  return burstAs(g, { key, id: record.id }, path, body)
}

// claude-haiku-4-5: $1 a million input tokens, $1.25 five minutes' writes, $2 an hour's, $5 output
const COST = { none: 4_000 * 1e-6, '5m': 4_000 * 1.25e-6, '1h': 4_000 * 2e-6 }
const OUTPUT = 10 * 5e-6
const text = '7 '.repeat(2_000)
const system = (cache?: object) => [{ type: 'text', text, ...(cache ? { cache_control: cache } : {}) }]
const messages = (cache?: object, top?: object) => ({ model: 'claude-haiku-4-5', max_tokens: 10, ...(top ? { cache_control: top } : {}), system: system(cache), messages: [{ role: 'user', content: 'Hi' }] })

describe('a Claude prompt is held at the price its breakpoints allow', () => {
  // a hold of about $0.0042 (none), $0.0052 (5m), $0.0083 (1h) each: on $0.02, 5, 4 and 3 are
  // admitted; held at an hour's write whatever the request, it was 3 each time
  test('on the messages surface: none at input, 5-minute ones at 1.25×, an hour at 2×; never below the bill', async () => {
    const cases = [
      { body: messages(), writes: 'none', served: 5 },
      { body: messages({ type: 'ephemeral' }), writes: '5m', served: 4 },
      { body: messages(undefined, { type: 'ephemeral', ttl: '5m' }), writes: '5m', served: 4 },
      { body: messages({ type: 'ephemeral', ttl: '1h' }), writes: '1h', served: 3 },
      { body: messages(undefined, { type: 'ephemeral', ttl: '1h' }), writes: '1h', served: 3 },
    ] as const
    for (const c of cases) {
      const r = await burst(0.02, '/api/beta/v1/messages', c.body)
      expect({ writes: c.writes, ...r, spent: undefined }).toEqual({ writes: c.writes, served: c.served, refused: 20 - c.served, failed: 0, spent: undefined })
      // each reply billed as the upstream said; the key overshoots its credit by less than one of them
      expect(r.spent).toBeCloseTo(c.served * (COST[c.writes] + OUTPUT), 9)
      expect(r.spent).toBeLessThan(0.02 + COST[c.writes] + OUTPUT)
    }
  })

  test('a chat or responses request to Claude: its breakpoints (cache_control, prompt_cache_breakpoint) held as what they become', async () => {
    const chat = (part: object, extra: object = {}) => ({ model: 'claude-haiku-4-5', max_tokens: 10, ...extra, messages: [{ role: 'system', content: [{ type: 'text', text, ...part }] }, { role: 'user', content: 'Hi' }] })
    const responses = (part: object) => ({ model: 'claude-haiku-4-5', max_output_tokens: 16, store: false, input: [{ role: 'user', content: [{ type: 'input_text', text, ...part }] }, { role: 'user', content: 'Hi' }] })
    const cases = [
      // prompt_cache_key is never sent to Anthropic: it writes nothing
      { path: '/api/alpha/v1/chat/completions', body: chat({}, { prompt_cache_key: 'team-a' }), writes: 'none', served: 5 },
      // OpenAI's breakpoint becomes Anthropic's default (5-minute) entry, whatever its ttl
      { path: '/api/alpha/v1/chat/completions', body: chat({ prompt_cache_breakpoint: { mode: 'explicit', ttl: '12h' } }), writes: '5m', served: 4 },
      { path: '/api/alpha/v1/chat/completions', body: chat({ cache_control: { type: 'ephemeral', ttl: '1h' } }), writes: '1h', served: 3 },
      { path: '/api/alpha/v1/responses', body: responses({}), writes: 'none', served: 5 },
      { path: '/api/alpha/v1/responses', body: responses({ prompt_cache_breakpoint: { mode: 'explicit' } }), writes: '5m', served: 4 },
    ] as const
    for (const c of cases) {
      const r = await burst(0.02, c.path, c.body)
      expect({ path: c.path, writes: c.writes, served: r.served }).toEqual({ path: c.path, writes: c.writes, served: c.served })
      expect(r.spent).toBeLessThan(0.02 + COST[c.writes] + 16 * 5e-6)
    }
  })
})

describe('what write a request can incur, read in the walk of its prompt', () => {
  const writes = (...v: unknown[]) => promptBound(...v).writes
  test('every place a breakpoint can sit, the dearest of them, and what is no breakpoint', () => {
    const block = (cache_control: unknown) => ({ type: 'text', text: 'x', cache_control })
    expect(writes({ system: 'plain', messages: [{ role: 'user', content: 'hi' }] })).toBe('none')
    expect(writes({ system: [block(null)] })).toBe('none')
    expect(writes({ system: [block({ type: 'ephemeral' })] })).toBe('5m')
    expect(writes({ tools: [{ name: 'f', input_schema: {}, cache_control: { type: 'ephemeral', ttl: '5m' } }] })).toBe('5m')
    expect(writes({ tools: [{ name: 'f', input_schema: {}, cache_control: { type: 'ephemeral', ttl: '1h' } }] })).toBe('1h')
    expect(writes({ cache_control: { type: 'ephemeral' } })).toBe('5m')
    expect(writes({ cache_control: { type: 'ephemeral', ttl: '1h' } })).toBe('1h')
    // deep in a tool result, and an image's block whose source is counted apart
    expect(writes({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [block({ type: 'ephemeral', ttl: '1h' })] }] }] })).toBe('1h')
    expect(writes({ messages: [{ role: 'user', content: [{ type: 'base64', media_type: 'image/png', data: 'AAAA', cache_control: { type: 'ephemeral' } }] }] })).toBe('5m')
    // the dearest wins, in any order; a value Anthropic would refuse is held at the dearest
    expect(writes({ system: [block({ type: 'ephemeral', ttl: '1h' })], messages: [{ role: 'user', content: [block({ type: 'ephemeral' })] }] })).toBe('1h')
    expect(writes({ system: [block(true)] })).toBe('1h')
    // OpenAI's breakpoint (chat and responses parts), and the history a surface loaded
    expect(writes({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', prompt_cache_breakpoint: { mode: 'explicit', ttl: '24h' } }] }] })).toBe('5m')
    expect(writes({ input: 'hi' }, [{ type: 'message', content: [{ type: 'input_text', text: 'x', prompt_cache_breakpoint: {} }] }])).toBe('5m')
    expect(writes({ prompt_cache_key: 'k', prompt_cache_retention: '24h', prompt_cache_options: { mode: 'explicit' } })).toBe('none')
  })

  test('held at input, 1.25× or 2× of the prompt; an hour when the caller cannot tell', () => {
    const model = g.services.catalog.resolve('claude-haiku-4-5')!
    const hold = (promptWrites?: 'none' | '5m' | '1h') => worstCase(g.services.catalog, { apiKey: {} as ApiKey, model, promptTokens: 100_000, maxOutputTokens: 0, promptWrites })
    expect([hold('none'), hold('5m'), hold('1h'), hold()].map((usd) => Number(usd!.toFixed(9)))).toEqual([0.1, 0.125, 0.2, 0.2])
  })
})
