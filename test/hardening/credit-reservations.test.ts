// Credits never overshoot. A request is admitted while credits − spent −
// reserved > 0; it reserves its worst-case cost until it is recorded, and its real cost is
// settled in memory at record time. Real gateway, real HTTP, the official `openai` SDK.
// Sequential cases use the built-in mock (mock-gpt, priced by config); concurrent ones use
// gpt-4o at catalog prices on the fake upstream, which holds every answer 150 ms so that all
// 100 requests are admitted before the first is recorded (the in-process mock answers too fast
// for a burst to overlap).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { failGenerationWrites } from '../helpers/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

// mock-gpt at $1,000 per million tokens in and out ($0.001 a token): round, visible numbers
const YAML = `pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n`
const OK = [{ role: 'user' as const, content: 'mock: text ok' }]

// gpt-4o list prices: $2.50 / M input, $10 / M output
const UP_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
const UP_COST = (10 * 2.5 + 5 * 10) / 1e6

let g: Gateway
let up: FakeUpstream
let unit: number // the cost of one `mock: text ok` request on mock-gpt

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(() => ({
    waitMs: 150,
    json: { id: 'chatcmpl-d5', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: UP_USAGE },
  }))
  g = await startGateway({
    yaml: YAML,
    env: {
      OPENAI_API_KEY: 'sk-upstream-openai-secret',
      OPENAI_BASE_URL: up.url,
      // the limiter is not under test here: 100 requests at once from one key and one IP
      SWITCHYARD_KEY_RPM: '1000000',
      SWITCHYARD_KEY_BURST_RPS: '1000000',
      SWITCHYARD_IP_RPM: '1000000',
    },
  })
  const r = await clientOf(g.key).chat.completions.create({ model: 'mock-gpt', messages: OK })
  unit = (await generation(g.key, r.id)).cost
  expect(unit).toBeGreaterThan(0)
})
afterAll(async () => {
  await g.stop()
  await up.stop()
})

function clientOf(key: string) {
  return new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
}

async function generation(key: string, id: string) {
  const r = await fetch(`${g.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } })
  expect(r.status).toBe(200)
  return ((await r.json()) as { generation: any }).generation
}

async function funded(credits: number) {
  return await g.services.keys.create({ name: 'd5', credits })
}

/** The status of one chat request (402s are also checked for their JSON error). */
async function status(key: string, body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}): Promise<number> {
  try {
    await clientOf(key).chat.completions.create({ model: 'mock-gpt', messages: OK, ...body })
    return 200
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e
    if (e.status === 402) expect((e.error as { error?: string }).error ?? e.message).toMatch(/Credits exhausted/)
    return e.status ?? 0
  }
}

/** Wait until nothing is reserved any more (every admitted request was recorded). */
async function settled() {
  for (let i = 0; i < 200 && g.services.billing.open > 0; i++) await Bun.sleep(10)
  expect(g.services.billing.open).toBe(0)
}

/**
 * What admission counts against a key besides its credits: its spent plus what requests in
 * progress hold. In this process's ledger, or, when credits are shared (Redis, the shared-store
 * run), in the shared store, which admission reads there instead.
 */
async function held(key: string, id: string): Promise<number> {
  const shared = g.services.billing.figures(id)
  if (!shared) return (await g.services.keys.authenticate(key))!.spent + g.services.billing.reserved(id)
  const f = await shared
  return (f.spent ?? 0) + f.reserved
}

/**
 * Held by requests in progress: this process's ledger, or the shared store's (whose releases
 * land a moment after the reply), waited for until nothing is held or a second has passed.
 */
async function reservedFor(id: string): Promise<number> {
  const now = async () => g.services.billing.reserved(id) + ((await g.services.billing.figures(id))?.reserved ?? 0)
  let r = await now()
  for (let i = 0; i < 100 && r > 0; i++) {
    await Bun.sleep(10)
    r = await now()
  }
  return r
}

/** The shared store's spent for a key once its async settlements have landed (undefined without one). */
async function sharedSpent(id: string, expected: number): Promise<number | undefined> {
  const figures = () => g.services.billing.figures(id)
  if (!figures()) return undefined
  let spent = (await figures())!.spent
  for (let i = 0; i < 100 && Math.abs((spent ?? 0) - expected) > 1e-12; i++) {
    await Bun.sleep(10)
    spent = (await figures())!.spent
  }
  return spent ?? 0
}

const storedSpent = async (id: string) => (await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [id]))!.spent
const recordedCost = async (id: string) => (await g.services.storage.sql.get<{ c: number }>('SELECT coalesce(sum(cost), 0) AS c FROM generations WHERE api_key_id = ?', [id]))!.c


describe('sequential: exactly the covered requests, the one crossing zero included, none after', () => {
  for (const mode of ['records written as usual', 'records not yet written (flush held back)']) {
    test(mode, async () => {
      const recorder = g.services.recorder as unknown as { flushDelayMs: number }
      const before = recorder.flushDelayMs
      // held back, only the in-memory settlement can stop the ninth request
      if (mode.startsWith('records not')) recorder.flushDelayMs = 60_000
      try {
        // covers 7.5 requests: 7 leave a positive balance, the 8th crosses zero
        const { key, record } = await funded(unit * 7.5)
        const seen: number[] = []
        for (let i = 0; i < 12; i++) seen.push(await status(key))
        expect(seen).toEqual([...Array(8).fill(200), ...Array(4).fill(402)])
        await g.services.recorder.flush()
        expect(await recordedCost(record.id)).toBeCloseTo(unit * 8, 12)
        expect(await storedSpent(record.id)).toBeCloseTo(unit * 8, 12)
      } finally {
        recorder.flushDelayMs = before
      }
    })
  }
})

describe('concurrent: reservations stop a burst', () => {
  /** 100 requests at once to gpt-4o on the slow upstream; the statuses. */
  const burst = (key: string, body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
    Promise.all(Array.from({ length: 100 }, () => status(key, { model: 'gpt-4o', ...body })))

  test('100 at once with an output cap: covered + 1 served, the rest 402', async () => {
    const { key, record } = await funded(UP_COST * 7.5)
    const seen = await burst(key, { max_tokens: 5 })
    const served = seen.filter((s) => s === 200).length
    expect(seen.filter((s) => s !== 200 && s !== 402)).toEqual([])
    // the reservation bounds the prompt from above (its UTF-8 bytes, the body's JSON around it
    // included), so a burst may stop before the sequential count, never after it: at most the
    // 7 covered + the one crossing zero
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThanOrEqual(8)
    await settled()
    await g.services.recorder.flush()
    expect(await storedSpent(record.id)).toBeCloseTo(UP_COST * served, 12)
    expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(await storedSpent(record.id), 12)
  })

  test("the issue's repro: --credits 0.0001, 100 at once, no output cap", async () => {
    const { key, record } = await funded(0.0001)
    const seen = await burst(key)
    await settled()
    await g.services.recorder.flush()
    const served = seen.filter((s) => s === 200).length
    const covered = Math.floor(0.0001 / UP_COST)
    expect(covered).toBe(1)
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThanOrEqual(covered + 1)
    expect(seen.filter((s) => s !== 200 && s !== 402)).toEqual([])
    expect(await storedSpent(record.id)).toBeLessThanOrEqual(0.0001 + UP_COST)
  })
})

describe('every reservation is released', () => {
  test('failed requests (upstream error, bad directive) hold nothing afterwards', async () => {
    // each of these reserves ~16k output tokens ($16) against a $0.02 credit
    const { key, record } = await funded(unit * 4)
    for (let i = 0; i < 10; i++) {
      expect(await status(key, { messages: [{ role: 'user', content: 'mock: error 503' }] })).toBe(503)
      expect(await status(key, { messages: [{ role: 'user', content: 'mock: error 999' }] })).toBe(400)
    }
    await settled()
    expect(await reservedFor(record.id)).toBe(0)
    // nothing was produced, so nothing was spent, and the key is still served
    expect(await status(key)).toBe(200)
  })

  test('a stream the client drops holds nothing afterwards; what it produced is spent', async () => {
    const { key, record } = await funded(1)
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ')
    const stream = await clientOf(key).chat.completions.create({ model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: `mock: text ${words}` }] })
    for await (const _ of stream) {
      stream.controller.abort()
      break
    }
    // the drop is recorded (and settled) when the gateway notices it
    for (let i = 0; i < 200 && await recordedCost(record.id) === 0; i++) {
      await Bun.sleep(10)
      await g.services.recorder.flush()
    }
    expect(await storedSpent(record.id)).toBeGreaterThan(0)
    expect(await reservedFor(record.id)).toBe(0)
    expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(await storedSpent(record.id), 12)
  })

  test('an unpriced model reserves nothing and is served while the balance is above zero', async () => {
    const { key, record } = await funded(unit)
    const client = clientOf(key)
    for (let i = 0; i < 5; i++) {
      const r = await client.chat.completions.create({ model: 'mock-claude', messages: OK })
      expect((await generation(key, r.id)).unpriced).toBe(true)
    }
    expect(await reservedFor(record.id)).toBe(0)
    expect(await storedSpent(record.id)).toBe(0)
  })
})

describe("the key's cached spend never runs ahead of the database", () => {
  test('records that cannot be written: counted while retried, taken back when given up', async () => {
    const { key, record } = await funded(1)
    const undo = await failGenerationWrites(g.services.storage.sql)
    try {
      expect(await status(key)).toBe(200)
      expect(await status(key)).toBe(200)
      // the reply goes first; until the record is priced, on the next turn of the loop, the
      // request's reservation still holds its cost (at least the real one)
      expect(await held(key, record.id)).toBeGreaterThanOrEqual(unit * 2 - 1e-12)
      await new Promise((r) => setImmediate(r))
      // then settled in memory: the next admission sees both costs while the writes fail
      expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(unit * 2, 12)
      expect(await storedSpent(record.id)).toBe(0)
      // the recorder retries twice (100 ms, 200 ms), then gives the batch up
      for (let i = 0; i < 100 && g.services.billing.unwritten(record.id) > 0; i++) await Bun.sleep(20)
      expect(g.services.billing.unwritten(record.id)).toBe(0)
      expect((await g.services.keys.authenticate(key))!.spent).toBe(await storedSpent(record.id))
      // and taken back from the shared figures too, where admission reads them
      const shared = await sharedSpent(record.id, await storedSpent(record.id))
      if (shared !== undefined) expect(shared).toBeCloseTo(await storedSpent(record.id), 12)
    } finally {
      await undo()
    }
    expect(await status(key)).toBe(200)
    await g.services.recorder.flush()
    expect(await storedSpent(record.id)).toBeCloseTo(unit, 12)
    expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(await recordedCost(record.id), 12)
    // a reload from the database (the CLI changed something) shows the same
    await g.services.keys.invalidate()
    expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(await recordedCost(record.id), 12)
    const shared = await sharedSpent(record.id, await recordedCost(record.id))
    if (shared !== undefined) expect(shared).toBeCloseTo(await recordedCost(record.id), 12)
  })
})
