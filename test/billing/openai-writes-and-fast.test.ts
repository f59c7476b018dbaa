// Two things OpenAI bills that the gateway read as cheaper:
// - gpt-5.6 and later price a prompt written to the cache at 1.25× input, and write one unasked
//   (an implicit breakpoint): the usage says how many (`cache_write_tokens`, part of the prompt).
//   Read as plain input, each write cost its key a fifth less than the operator paid, and a hold
//   that took the prompt as input fell short by as much.
// - Priority processing was renamed Fast mode: a request asking `service_tier: "fast"` is served
//   at priority's price (the reply says `priority`), but was held at standard's.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
})
afterAll(async () => {
  await rig.stop()
})

const catalog = buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' }))
const none = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
const priced = (model: string, u: Partial<typeof none>) => catalog.cost(catalog.resolve(model)!, { ...none, ...u })!
const ask = [{ role: 'user' as const, content: 'Hello.' }]

describe("OpenAI's cache writes, at the write price", () => {
  test('chat and Responses replies on gpt-5.6-sol: the written part of the prompt at 1.25× input', async () => {
    // 10,000 prompt tokens: 2,000 read from the cache, 6,000 written to it, 2,000 neither
    const want = priced('gpt-5.6-sol', { inputTokens: 2000, cacheReadTokens: 2000, cacheWriteTokens: 6000, outputTokens: 100 })
    expect(want).toBeGreaterThan(priced('gpt-5.6-sol', { inputTokens: 8000, cacheReadTokens: 2000, outputTokens: 100 }))

    const completion = fixtureJson('openai/chat/nonstream-text.json')
    completion.id = 'chatcmpl-written'
    completion.model = 'gpt-5.6-sol'
    completion.usage = { prompt_tokens: 10_000, completion_tokens: 100, total_tokens: 10_100, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 6000 }, completion_tokens_details: { reasoning_tokens: 0 } }
    rig.up.script({ json: JSON.stringify(completion) })
    const c = await rig.client.chat.completions.create({ model: 'gpt-5.6-sol', messages: ask })
    const g = await rig.generation(c.id)
    expect(g.cost).toBeCloseTo(want, 12)
    // the client is told of the writes as OpenAI told them
    expect(c.usage?.prompt_tokens).toBe(10_000)

    const response = {
      ...fixtureJson('openai/responses/nonstream-text.json'),
      id: 'resp_written',
      model: 'gpt-5.6-sol',
      usage: { input_tokens: 10_000, input_tokens_details: { cached_tokens: 2000, cache_write_tokens: 6000 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10_100 },
    }
    rig.up.script({ json: JSON.stringify(response) })
    const r = await rig.client.responses.create({ model: 'gpt-5.6-sol', input: 'Hello.', store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(want, 12)
    expect(r.usage?.input_tokens).toBe(10_000)
  })

  test('a model that prices no write apart costs the same written or not', async () => {
    const completion = fixtureJson('openai/chat/nonstream-text.json')
    completion.id = 'chatcmpl-written-4o'
    completion.model = 'gpt-4o'
    completion.usage = { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1000 } }
    rig.up.script({ json: JSON.stringify(completion) })
    const c = await rig.client.chat.completions.create({ model: 'gpt-4o', messages: ask })
    expect((await rig.generation(c.id)).cost).toBeCloseTo(priced('gpt-4o', { inputTokens: 1000, outputTokens: 10 }), 12)
  })
})

/** What one chat request holds on a funded key while the upstream answers it. */
async function holdOf(body: Record<string, unknown>): Promise<number> {
  const { key, record } = await rig.gw.services.keys.create({ name: 'held', credits: 1000 })
  const completion = fixtureJson('openai/chat/nonstream-text.json')
  completion.model = body.model
  rig.up.script({ waitMs: 400, json: JSON.stringify(completion) })
  const pending = fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  let usd = 0
  for (let i = 0; i < 100 && usd === 0; i++) {
    await Bun.sleep(10)
    const f = await rig.gw.services.billing.figures(record.id)
    usd = f ? f.reserved : rig.gw.services.billing.reserved(record.id)
  }
  expect((await pending).status).toBe(200)
  return usd
}

describe('held at what it can be billed', () => {
  test("a request asking for fast mode is held at priority's price, as one asking for priority", async () => {
    // gpt-4.1's priority price is 1.75× standard; `auto` and `fast` are the same length, so the prompt bounds are equal
    const body = { model: 'gpt-4.1', max_completion_tokens: 1000, messages: ask }
    const standard = await holdOf({ ...body, service_tier: 'auto' })
    expect(standard).toBeGreaterThan(0)
    expect((await holdOf({ ...body, service_tier: 'fast' })) / standard).toBeCloseTo(1.75, 9)
  })

  test('a gpt-5.6 prompt with no breakpoint is held as a cache write, which OpenAI makes unasked', async () => {
    // a long prompt and one output token: the hold is the prompt's price, at the write rate
    const body = { model: 'gpt-5.6-sol', max_completion_tokens: 1, messages: [{ role: 'user', content: 'word '.repeat(20_000) }] }
    const held = await holdOf(body)
    const written = priced('gpt-5.6-sol', { cacheWriteTokens: 1e5 }) / priced('gpt-5.6-sol', { inputTokens: 1e5 })
    expect(written).toBeCloseTo(1.25, 9)
    // the prompt bound is at least its 100,000 bytes: held at the write price, not input's
    expect(held).toBeGreaterThanOrEqual(priced('gpt-5.6-sol', { cacheWriteTokens: 100_000 }))
  })
})
