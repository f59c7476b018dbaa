// Token counting is shared between keys: one key's large prompts (the mock counts every
// prompt in the token workers) must not make another key's small requests wait for them.
// Before, a single worker counted in arrival order: ten 1 MB prompts of one key held the
// other key's next request for about a second each.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let keyA = ''
let keyB = ''

beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000' } })
  keyA = (await gw.services.keys.create({ name: 'heavy' })).key
  keyB = (await gw.services.keys.create({ name: 'light' })).key
})
afterAll(async () => {
  await gw.stop()
})

/** One long run of letters with no space: the dear case of BPE (about a second each, capped). */
function letters(n: number): string {
  let x = 12345
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    out[i] = 97 + (x % 26)
  }
  return new TextDecoder().decode(out)
}

async function chat(key: string, body: string) {
  const t0 = performance.now()
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })
  const json = (await res.json()) as { usage?: { prompt_tokens: number } }
  return { status: res.status, ms: performance.now() - t0, promptTokens: json.usage?.prompt_tokens ?? 0 }
}

const small = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text hello' }] })

test("another key's small requests go on while one key's ten 1 MB prompts are counted", async () => {
  for (let i = 0; i < 20; i++) expect((await chat(keyB, small)).status).toBe(200)
  const big = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ok\n${letters(1 << 20)}` }] })
  let heavyDone = 0
  const heavy = Promise.all(
    Array.from({ length: 10 }, async () => {
      const r = await chat(keyA, big)
      heavyDone++
      return r
    }),
  )
  const during: number[] = []
  while (heavyDone < 10) {
    const r = await chat(keyB, small)
    expect(r.status).toBe(200)
    during.push(r.ms)
  }
  const answered = await heavy
  for (const r of answered) {
    expect(r.status).toBe(200)
    // counted, or (past the key's backlog) bounded from the length: never nothing
    expect(r.promptTokens).toBeGreaterThan(1000)
  }
  during.sort((a, b) => a - b)
  // the light key was served all along, never a whole count of the heavy key's behind
  expect(during.length).toBeGreaterThanOrEqual(10)
  expect(during[Math.ceil(during.length * 0.99) - 1]!).toBeLessThan(400)
}, 60_000)

test('the same prompt alone counts the same each time (the mock stays deterministic when idle)', async () => {
  const body = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ok\n${letters(200_000)}` }] })
  const a = await chat(keyB, body)
  const b = await chat(keyA, body)
  expect(a.status).toBe(200)
  expect(a.promptTokens).toBe(b.promptTokens)
})
