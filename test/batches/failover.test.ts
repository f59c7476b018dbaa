// Batch items fail over as interactive requests do: a deployment that answers 500 hands the
// item to the model's next deployment, and a model whose every deployment is down hands it to
// its fallback model. Either way the item is billed once, at the model that served: one record
// per item naming the provider that served and every call tried, and the key's spend is the
// sum of those records' costs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { chat, heldAfter, msg, recordsOf, startBatchRig, type BatchRig } from './helpers.ts'

const OPENAI = fixtureJson('openai/chat/nonstream-text.json')
const BOOM = { status: 500, json: { error: { message: 'boom', type: 'server_error' } } }

// house-a costs $1/$2 per million tokens, its fallback house-b $10/$20: the record's cost says which served
const PRICE_A = { input: 1, output: 2 }
const PRICE_B = { input: 10, output: 20 }
const costAt = (p: { input: number; output: number }) => (OPENAI.usage.prompt_tokens * p.input + OPENAI.usage.completion_tokens * p.output) / 1e6

let down: FakeUpstream
let up: FakeUpstream
let rig: BatchRig
beforeAll(async () => {
  ;[down, up] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  // every item is sent to `down` first (priority 1) and it never rests (failures_to_cool is out of reach)
  rig = await startBatchRig({
    upstream: false,
    yaml: `
providers:
  - { id: down, kind: openai, base_url: ${down.url}/v1, api_key: sk-down, max_retries: 0 }
  - { id: up, kind: openai, base_url: ${up.url}/v1, api_key: sk-up, max_retries: 0 }
models:
  - id: house-a
    family: openai
    deployments: [{ provider: down, priority: 1 }, { provider: up, priority: 2, upstream_id: house-a-2024 }]
    price: { input_mtok: ${PRICE_A.input}, output_mtok: ${PRICE_A.output} }
  - id: house-down
    family: openai
    deployments: [{ provider: down }]
    fallbacks: [house-b]
    price: { input_mtok: ${PRICE_A.input}, output_mtok: ${PRICE_A.output} }
  - id: house-b
    family: openai
    deployments: [{ provider: up }]
    price: { input_mtok: ${PRICE_B.input}, output_mtok: ${PRICE_B.output} }
routing: { cooldown_s: 600, failures_to_cool: 100000 }
`,
  })
  down.script(BOOM)
  let n = 0
  up.script(() => ({ json: { ...OPENAI, id: `chatcmpl-up-${++n}` } }))
})
afterAll(async () => {
  await rig.stop()
  await Promise.all([down.stop(), up.stop()])
})

/** A key of its own (so its spend is this test's alone), and its spend so far. */
async function freshKey(name: string) {
  const k = await rig.gw.services.keys.create({ name, credits: 100 })
  return { key: k.key, id: k.record.id, spent: async () => (await rig.gw.services.keys.get(k.record.id))!.spent }
}

const attemptsOf = (r: { attempts: string | null }) => (JSON.parse(r.attempts ?? '[]') as { provider: string; status: number }[]).map((a) => [a.provider, a.status])

describe('batch items fail over', () => {
  test('OpenAI batch from a JSONL file: every item is served by the second deployment after the first answers 500, billed once', async () => {
    const k = await freshKey('failover-file')
    const sentBefore = { down: down.requests.length, up: up.requests.length }
    const items = 6
    const file = await rig.upload(Array.from({ length: items }, (_, i) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: chat('house-a', `item ${i}`) })), k.key)
    const created = await rig.openai(k.key).batches.create({ input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' })
    const done = await rig.ended(created.id, k.key)
    expect(done.status).toBe('completed')
    expect(done.request_counts).toEqual({ total: items, completed: items, failed: 0 })
    const results = await rig.allResults(created.id, 1000, k.key)
    expect(results.every((r) => r.status === 'succeeded' && r.result.choices[0].message.content === OPENAI.choices[0].message.content)).toBe(true)

    // each item made one call to each deployment, the second under its own model id
    expect(down.requests.length - sentBefore.down).toBe(items)
    expect(up.requests.length - sentBefore.up).toBe(items)
    expect(up.requests.at(-1)!.json().model).toBe('house-a-2024')

    const recs = await recordsOf(rig, created.id)
    expect(recs).toHaveLength(items)
    for (const r of recs) {
      expect(r.model).toBe('house-a')
      expect(r.provider).toBe('up')
      expect(r.deployment).toBe('house-a-2024')
      expect(r.http_status).toBe(200)
      expect(attemptsOf(r)).toEqual([['down', 502], ['up', 200]])
      expect(r.cost).toBeCloseTo(costAt(PRICE_A), 12)
    }
    const sum = recs.reduce((a, r) => a + r.cost, 0)
    expect(await k.spent()).toBeCloseTo(sum, 12)
    expect(await heldAfter(rig, k.id)).toBe(0)
  })

  test("Anthropic message batch: a model whose deployments are all down is served by its fallback, at the fallback's price", async () => {
    const k = await freshKey('failover-fallback')
    const client = rig.anthropic(k.key)
    const batch = await client.messages.batches.create({
      requests: [
        { custom_id: 'fallback', params: msg('house-down', 'down, then the fallback') as any },
        { custom_id: 'next', params: msg('house-a', 'next deployment') as any },
      ],
    })
    const done = await rig.ended(batch.id, k.key)
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
    const results: any[] = []
    for await (const r of await client.messages.batches.results(batch.id)) results.push(r)
    for (const r of results) {
      expect(r.result.type).toBe('succeeded')
      expect(r.result.message.content[0].text).toBe(OPENAI.choices[0].message.content)
    }

    const recs = await recordsOf(rig, batch.id)
    expect(recs).toHaveLength(2)
    const byModel = Object.fromEntries(recs.map((r) => [r.model, r]))
    // the fallback served: its model and price are the record's
    const fb = byModel['house-b']
    expect(fb.provider).toBe('up')
    expect(fb.endpoint).toBe('anthropic.messages')
    expect(attemptsOf(fb)).toEqual([['down', 502], ['up', 200]])
    expect(fb.cost).toBeCloseTo(costAt(PRICE_B), 12)
    // the item of house-a went to its second deployment, at house-a's price
    const next = byModel['house-a']
    expect(next.provider).toBe('up')
    expect(next.cost).toBeCloseTo(costAt(PRICE_A), 12)
    expect(costAt(PRICE_A)).not.toBeCloseTo(costAt(PRICE_B), 12)

    expect(await k.spent()).toBeCloseTo(fb.cost + next.cost, 12)
    expect(await heldAfter(rig, k.id)).toBe(0)
  })
})
