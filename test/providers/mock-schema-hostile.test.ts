// The mock builds a reply from the client's JSON schema on the server's one thread: a schema a
// client sends must not make that work grow past the schema's own size, nor a small schema
// make a huge reply. Each case here held the thread for seconds (and the next request with it):
// - `$ref`s to an object of many properties, each merged with the ref's siblings anew;
// - `allOf` branches merged one onto the next, every merge copying all before it;
// - 81 bytes asking for 10,000 strings of a 3,999-character pattern, each built a character
//   at a time (40 MB of reply).
// And bounds at the ends of the doubles gave Infinity, which JSON writes as null.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

let g: Gateway
let client: OpenAI
beforeAll(async () => {
  g = await startGateway({ logLevel: 'silent' })
  client = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0, timeout: 120_000 })
})
afterAll(async () => {
  await g?.stop()
})

/** The mock's reply to a request held to `schema`, and how long it took. */
async function replyTo(schema: Record<string, unknown>): Promise<{ text: string; ms: number }> {
  const t = performance.now()
  const r = await client.chat.completions.create({
    model: 'mock-gpt',
    messages: [{ role: 'user', content: 'Fill it in.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
  })
  return { text: r.choices[0]!.message.content ?? '', ms: performance.now() - t }
}

/**
 * Work a small machine does in well under this; each case took several seconds before. On a
 * machine busy with other work, a benign schema whose reply is as large is given five times its
 * own time: what is bounded here is the work's growth, not the machine's speed.
 */
const QUICK_MS = 2_000
async function bound(benign: Record<string, unknown>): Promise<number> {
  return Math.max(QUICK_MS, 5 * (await replyTo(benign)).ms)
}

describe("the mock's example of a hostile schema is bounded", () => {
  test('many properties each a $ref to the root: no merge of the whole property list per property', async () => {
    const properties = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { $ref: '#' }]))
    const most = await bound({ type: 'object', properties: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: 'object' }])) })
    const { text, ms } = await replyTo({ type: 'object', properties })
    expect(ms).toBeLessThan(most)
    expect(Object.keys(JSON.parse(text))).toContain('p4999')
  })

  test('many allOf branches of many properties: merged in time linear in the schema', async () => {
    const allOf = Array.from({ length: 1_000 }, (_, k) => ({ properties: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`a${k}_${i}`, { type: 'string' }])) }))
    const most = await bound({ type: 'object', properties: Object.assign({}, ...allOf.map((b) => b.properties)) })
    const { text, ms } = await replyTo({ type: 'object', allOf })
    expect(ms).toBeLessThan(most)
    expect(JSON.parse(text)).toHaveProperty('a0_0')
  })

  test('a tiny schema asking for 10,000 long pattern strings gives no 40 MB reply', async () => {
    const most = await bound({ type: 'array', minItems: 10_000, items: { type: 'string' } })
    const { text, ms } = await replyTo({ type: 'array', minItems: 10_000, items: { type: 'string', pattern: '^a{3999}$' } })
    expect(ms).toBeLessThan(most)
    expect(text.length).toBeLessThan(2_000_000)
    // the first strings still match the pattern
    expect((JSON.parse(text) as string[])[0]).toBe('a'.repeat(3999))
  })

  test('bounds at the ends of the doubles give a number between them, never Infinity (null in JSON)', async () => {
    const { text } = await replyTo({ type: 'object', properties: { x: { type: 'number', exclusiveMinimum: -1.7e308, exclusiveMaximum: 1.7e308 } }, required: ['x'] })
    const x = JSON.parse(text).x
    expect(typeof x).toBe('number')
    expect(x).toBeGreaterThan(-1.7e308)
    expect(x).toBeLessThan(1.7e308)
  })
})
