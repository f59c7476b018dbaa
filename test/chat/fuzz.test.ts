// Fuzzed chat bodies over HTTP: wrong types, nulls, huge numbers, deep nesting, unicode,
// mutations of valid bodies. Whatever comes in, the answer is never a 5xx, and every 4xx
// is a `{ "error": "<message>" }` body. Seeded, so a failure reproduces.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ yaml: 'limits:\n  key_rpm: 100000\n  ip_rpm: 100000\n  key_burst_rps: 100000\n' })
})
afterAll(async () => {
  await gw.stop()
})

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
}

const rand = rng(20261121)
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!

function deep(n: number): unknown {
  let v: unknown = 'x'
  for (let i = 0; i < n; i++) v = rand() < 0.5 ? [v] : { a: v }
  return v
}

function junk(depth = 0): unknown {
  const gens: (() => unknown)[] = [
    () => null,
    () => true,
    () => -1,
    () => 0,
    () => 1e308,
    () => -1e308,
    () => 2 ** 53 + 1,
    () => 0.5,
    () => '',
    () => 'ünïcödé 🚀 \u0000 \ud800',
    () => 'x'.repeat(5000),
    () => [],
    () => ({}),
    () => deep(Math.floor(rand() * 400)),
    () => (depth < 3 ? [junk(depth + 1), junk(depth + 1)] : 1),
    () => (depth < 3 ? { type: junk(depth + 1), text: junk(depth + 1), role: junk(depth + 1) } : 'y'),
  ]
  return pick(gens)()
}

const FIELDS = [
  'model', 'messages', 'stream', 'temperature', 'max_tokens', 'max_completion_tokens', 'top_p', 'stop', 'tools',
  'tool_choice', 'response_format', 'reasoning_effort', 'stream_options', 'n', 'seed', 'user', 'logit_bias',
  'metadata', 'functions', 'function_call', 'thinking', 'top_k', 'parallel_tool_calls', 'modalities', 'audio',
]

function valid(): Record<string, unknown> {
  return {
    model: pick(['gpt-4o', 'claude-sonnet-4-5', 'mock-gpt']),
    messages: [{ role: 'user', content: 'hello' }],
  }
}

function mutate(): unknown {
  const r = rand()
  if (r < 0.1) return junk()
  const body = valid()
  const n = 1 + Math.floor(rand() * 3)
  for (let i = 0; i < n; i++) {
    const f = pick(FIELDS)
    const where = rand()
    if (where < 0.5) body[f] = junk()
    else if (where < 0.7) body.messages = [{ role: pick(['user', 'assistant', 'tool', 'function', 'system', 'x']), content: junk(), tool_calls: rand() < 0.3 ? junk() : undefined, tool_call_id: rand() < 0.3 ? junk() : undefined }]
    else if (where < 0.85) body.messages = [{ role: 'user', content: [{ type: pick(['text', 'image_url', 'file', 'input_audio', 'refusal']), text: junk(), image_url: junk(), file: junk(), input_audio: junk() }] }]
    else body.tools = [{ type: 'function', function: { name: junk(), parameters: junk() } }]
  }
  if (rand() < 0.1) body[`unknown_${Math.floor(rand() * 100)}`] = 1
  return body
}

/** Keys that reach Object.prototype when copied carelessly, injected into the JSON text at a random object. */
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']

function withProtoKey(json: string): string {
  const opens = [...json.matchAll(/\{/g)].map((m) => m.index!)
  if (opens.length === 0) return json
  const at = pick(opens) + 1
  const value = pick(['{"seed":1,"n":3}', '{"stream":true}', '1', '{"foo":1}', 'null'])
  return json.slice(0, at) + `"${pick(PROTO_KEYS)}":${value}` + (json[at] === '}' ? '' : ',') + json.slice(at)
}

test('never a 5xx over many fuzzed bodies; every error is { error: string }', async () => {
  const seen = new Map<number, number>()
  for (let i = 0; i < 600; i++) {
    const body = mutate()
    const json = JSON.stringify(body)
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: rand() < 0.15 ? withProtoKey(json) : json,
    })
    const text = await res.text()
    seen.set(res.status, (seen.get(res.status) ?? 0) + 1)
    if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(body).slice(0, 400)}: ${text}`)
    if (res.status >= 400) {
      const j = JSON.parse(text)
      expect(typeof j.error).toBe('string')
      expect(j.error.length).toBeGreaterThan(0)
    }
  }
  // both outcomes were exercised
  expect(seen.get(400)).toBeGreaterThan(100)
  expect(seen.get(200)).toBeGreaterThan(0)
}, 60_000)

test('raw non-JSON and deeply nested JSON bodies are 400s, not 500s', async () => {
  for (const raw of ['', 'nul', '[', '"str"', '[' .repeat(10_000) + ']'.repeat(10_000), '{"model":"gpt-4o","messages":' + '['.repeat(5000) + ']'.repeat(5000) + '}']) {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: raw })
    expect(res.status).toBe(400)
  }
})
