// A generation body is bounded in parts as well as in bytes: a million tiny content parts fit
// in 25 MiB, and decoding them held the request thread for a quarter of a second each (four
// at once: over a second). Past 200,000 objects and arrays, or 250,000 keys and values (2.5
// million keys in one object held it for five seconds in JSON.parse alone), the body is a 400
// naming its largest array or object, before any decoding; a long real session stays well under
// that.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_BODY_NODES, MAX_BODY_VALUES } from '../../src/http/json-safe.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(async () => {
  await gw.stop()
})

async function post(path: string, body: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, requestId: res.headers.get('x-request-id'), json: (await res.json()) as { error?: string } }
}

const tiny = (n: number) => Array.from({ length: n }, () => ({ type: 'text', text: 'a' }))

test('a million content parts on chat, messages and responses: a 400 naming the array, with a request id', async () => {
  const cases: [string, unknown, string][] = [
    ['/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages: [{ role: 'user', content: tiny(1_000_000) }] }, 'messages[0].content: 1000000 items'],
    ['/api/beta/v1/messages', { model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: tiny(1_000_000) }] }, 'messages[0].content: 1000000 items'],
    ['/api/alpha/v1/responses', { model: 'mock-gpt', input: Array.from({ length: 300_000 }, () => ({ role: 'user', content: 'a' })) }, 'input: 300000 items'],
  ]
  for (const [path, body, named] of cases) {
    const r = await post(path, body)
    expect(r.status).toBe(400)
    expect(r.requestId).toBeTruthy()
    expect(r.json.error).toContain(named)
    expect(r.json.error).toContain(`at most ${MAX_BODY_NODES} JSON objects and arrays`)
  }
}, 60_000)

test('a million keys in one object, a million strings or numbers in one array, or a million duplicate keys, on each surface: a 400 decided off the request thread', async () => {
  const keys = Object.fromEntries(Array.from({ length: 1_000_000 }, (_, i) => [`k${i}`, 1]))
  const strings = Array.from({ length: 1_000_000 }, (_, i) => `v${i}`)
  const numbers = Array.from({ length: 1_000_000 }, (_, i) => i)
  const duplicates = `{"model":"mock-gpt","messages":[{"role":"user","content":"hi"}],${'"temperature":1,'.repeat(1_000_000)}"top_p":1}`
  const cases: [string, unknown, string][] = [
    ['/api/alpha/v1/chat/completions', { model: 'mock-gpt', metadata: keys, messages: [{ role: 'user', content: 'hi' }] }, 'metadata: 1000000 keys'],
    ['/api/beta/v1/messages', { model: 'mock-claude', max_tokens: 10, stop_sequences: strings, messages: [{ role: 'user', content: 'hi' }] }, 'stop_sequences: 1000000 items'],
    ['/api/alpha/v1/responses', { model: 'mock-gpt', metadata: keys, input: 'hi' }, 'metadata: 1000000 keys'],
    ['/api/alpha/v1/chat/completions', { model: 'mock-gpt', metadata: { n: numbers }, messages: [{ role: 'user', content: 'hi' }] }, 'metadata.n: 1000000 items'],
    ['/api/alpha/v1/chat/completions', duplicates, 'a request body may hold'],
  ]
  for (const [path, body, named] of cases) {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    // a timer that should fire every few ms: its longest wait is how long the request thread was held
    let last = performance.now()
    let longest = 0
    const timer = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 2)
    const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'x-api-key': gw.key, 'content-type': 'application/json' }, body: text })
    clearInterval(timer)
    expect(r.status).toBe(400)
    expect(r.headers.get('x-request-id')).toBeTruthy()
    const error = ((await r.json()) as { error: string }).error
    expect(error).toContain(named)
    expect(error).toContain(`${MAX_BODY_VALUES} keys and array items`)
    // the gateway runs in this process: parsing a million keys here takes most of a second
    expect(longest).toBeLessThan(400)
  }
}, 60_000)

test('a long session under the bound is answered as usual', async () => {
  // 60,000 messages: more than a day of an agent's turns, a third of the bound
  const messages = Array.from({ length: 60_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }))
  messages.push({ role: 'user', content: 'mock: text fine' })
  const r = await post('/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages })
  expect(r.status).toBe(200)
}, 60_000)

test('a body with more brackets than the bound inside its strings is checked off the request thread and answered', async () => {
  // 300,000 `{` and `[` characters in one text part: the quick scan cannot tell them from parts
  const code = '{['.repeat(150_000)
  const r = await post('/api/alpha/v1/chat/completions', { model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text fine\n${code}` }] })
  expect(r.status).toBe(200)
})

test('a malformed body that holds many brackets gets the same 400 as any malformed body', async () => {
  const text = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: tiny(300_000) }] }).slice(0, -2)
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: text })
  expect(res.status).toBe(400)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(((await res.json()) as { error: string }).error).toStartWith('Malformed JSON body')
})

test('a large body is scanned for parts a slice at a time: the same answer as one pass, and timers run in between', async () => {
  const { mayHoldMoreParts, mayHoldMorePartsSoon } = await import('../../src/http/parts.ts')
  const dense = JSON.stringify(tiny(300_000))
  const sparse = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(5 << 20) }, { role: 'user', content: tiny(1_000) }] })
  let ticks = 0
  const timer = setInterval(() => ticks++, 0)
  try {
    const items = JSON.stringify({ stop: Array.from({ length: 400_000 }, (_, i) => `v${i}`), text: 'x'.repeat(2 << 20) })
    const cases: [string, { nodes: number; values: number }][] = [
      [dense, { nodes: MAX_BODY_NODES, values: Infinity }], [dense, { nodes: 700_000, values: Infinity }], [sparse, { nodes: 1_500, values: Infinity }], [sparse, { nodes: 1_000, values: Infinity }],
      [items, { nodes: 10, values: MAX_BODY_VALUES }], [items, { nodes: 10, values: 500_000 }],
    ]
    for (const [text, bound] of cases) expect(await mayHoldMorePartsSoon(text, bound)).toBe(mayHoldMoreParts(text, bound))
    expect(mayHoldMoreParts(items, { nodes: 10, values: MAX_BODY_VALUES })).toBe(true)
    expect(mayHoldMoreParts(items, { nodes: 10, values: 500_000 })).toBe(false)
  } finally {
    clearInterval(timer)
  }
  expect(ticks).toBeGreaterThan(0)
  // a small body is answered at once, with no turn of the loop
  expect(mayHoldMorePartsSoon('{"a":[1,2]}', { nodes: 1, values: 10 })).toBe(true)
  expect(mayHoldMorePartsSoon('{"a":[1,2,3]}', { nodes: 10, values: 3 })).toBe(true)
  expect(mayHoldMorePartsSoon('{"a":[1,2,3]}', { nodes: 10, values: 4 })).toBe(false)
})
