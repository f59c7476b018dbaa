// Anthropic's fast mode (`speed: "fast"`: six times the standard price on Opus 4.6 and 4.7,
// twice on 4.8) and US-only inference (`inference_geo: "us"`, or a workspace's default that the
// usage reports unasked: 1.1× from the 4.6 models on) cost more than the price library's
// standard rates. Recorded at standard, a fast-mode reply cost its key a sixth of what the
// operator paid, and a burst on a funded key was served six times what it could pay for.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import { heldPremiums, premiumFactor } from '../../src/config/claude-premiums.ts'
import { usageFromAnthropic } from '../../src/providers/anthropic/usage.ts'

let up: FakeUpstream
let g: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  g = await startGateway({
    logLevel: 'silent',
    env: { ANTHROPIC_API_KEY: 'sk-up-a', ANTHROPIC_BASE_URL: up.url, SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' },
  })
})
afterAll(async () => {
  await g?.stop()
  await up?.stop()
})

const post = (key: string, body: unknown) =>
  fetch(`${g.url}/api/beta/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** A reply whose usage says how it was served, as Anthropic's does. */
function replying(served: { speed?: string; inference_geo?: string }) {
  up.script((req) => {
    const body = req.json()
    const usage = { input_tokens: 1000, output_tokens: body.max_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: 'standard', ...served }
    return { waitMs: 150, json: { id: `msg_${crypto.randomUUID().slice(0, 8)}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Fast.' }], stop_reason: 'max_tokens', stop_sequence: null, usage } }
  })
}

async function recordedCost(id: string): Promise<number> {
  await g.services.recorder.flush()
  const rec = await (await fetch(`${g.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${g.key}` } })).json()
  return rec.generation.cost
}

/** What the catalog's standard rates make of 1,000 tokens in and `out` out. */
const standard = (model: string, out: number) => buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' })).cost(buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' })).resolve(model)!, { inputTokens: 1000, outputTokens: out, cacheReadTokens: 0, cacheWriteTokens: 0 })!

describe("a reply served in one of Anthropic's dearer modes is recorded at its price", () => {
  test('fast mode on Opus 4.6: six times the standard price', async () => {
    replying({ speed: 'fast' })
    const r = await post(g.key, { model: 'claude-opus-4-6', max_tokens: 100, speed: 'fast', messages: [{ role: 'user', content: 'Quick.' }] })
    expect(r.status).toBe(200)
    const reply = (await r.json()) as { id: string }
    expect(await recordedCost(reply.id)).toBeCloseTo(6 * standard('claude-opus-4-6', 100), 9)
  })

  test('fast mode said at the stream\'s start, through the pass-through and through the chat surface\'s translation', async () => {
    // Anthropic says how it serves in message_start's usage; message_delta's usage leaves it out
    const sse = fixture('anthropic/messages/stream-text.sse')
      .replace('"usage":{"input_tokens":27,"output_tokens":1}', '"usage":{"input_tokens":27,"output_tokens":1,"speed":"fast","inference_geo":"us"}')
      .replaceAll('claude-3-opus-20240229', 'claude-opus-4-7')
    up.script(() => ({ sse }))
    const std = buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' }))
    const m = std.resolve('claude-opus-4-7')!
    const priced = async (id: string) => {
      await g.services.recorder.flush()
      const rec = await (await fetch(`${g.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${g.key}` } })).json()
      const u = rec.generation.usage as { prompt_tokens: number; completion_tokens: number }
      expect(u.completion_tokens).toBeGreaterThan(0)
      return { cost: rec.generation.cost as number, standard: std.cost(m, { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens, cacheReadTokens: 0, cacheWriteTokens: 0 })! }
    }
    const passed = await (await post(g.key, { model: 'claude-opus-4-7', max_tokens: 100, speed: 'fast', stream: true, messages: [{ role: 'user', content: 'Quick.' }] })).text()
    const a = await priced(/"id":"(msg_[^"]+)"/.exec(passed)![1]!)
    expect(a.cost).toBeCloseTo(6.6 * a.standard, 9)
    const chat = await fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-opus-4-7', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Quick.' }] }) })
    const b = await priced(/"id":"([^"]+)"/.exec(await chat.text())![1]!)
    expect(b.cost).toBeCloseTo(6.6 * b.standard, 9)
  })

  test("US-only inference the workspace chose, which the request never named: 1.1× on a 4.6 model, standard on a 4.5 one", async () => {
    replying({ inference_geo: 'us' })
    for (const [model, factor] of [['claude-sonnet-4-6', 1.1], ['claude-sonnet-4-5', 1]] as const) {
      const r = await post(g.key, { model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi.' }] })
      expect(r.status).toBe(200)
      expect(await recordedCost(((await r.json()) as { id: string }).id)).toBeCloseTo(factor * standard(model, 100), 9)
    }
  })

  test('a client that leaves before the reply said how it was served pays for its prompt in the mode it asked for', async () => {
    up.script(() => ({ waitMs: 3000, json: {} }))
    const costs: number[] = []
    for (const speed of ['standard', 'fast']) {
      const { key } = await g.services.keys.create({ name: `leaves ${speed}` })
      const sent = up.requests.length
      const ac = new AbortController()
      const asked = fetch(`${g.url}/api/beta/v1/messages`, { method: 'POST', signal: ac.signal, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-opus-4-6', max_tokens: 100, speed, messages: [{ role: 'user', content: 'A long question. '.repeat(200) }] }) }).catch((e) => e)
      for (let i = 0; i < 300 && up.requests.length === sent; i++) await Bun.sleep(10)
      ac.abort()
      await asked
      let rows: { data: { cost: number; error: string | null }[] } = { data: [] }
      for (let i = 0; i < 300 && rows.data.length === 0; i++) {
        await Bun.sleep(10)
        await g.services.recorder.flush()
        rows = (await (await fetch(`${g.url}/api/v1/generations`, { headers: { authorization: `Bearer ${key}` } })).json()) as typeof rows
      }
      expect(rows.data[0]!.error).toBe('client disconnected')
      costs.push(rows.data[0]!.cost)
    }
    expect(costs[0]).toBeGreaterThan(0)
    expect(costs[1]! / costs[0]!).toBeCloseTo(6, 6)
  }, 30_000)

  test('a burst in fast mode on a nearly spent key is held at fast-mode prices: served what the key can pay for, not six times it', async () => {
    replying({ speed: 'fast' })
    // one request: 1,000 tokens in, 1,000 out on Opus 4.6 fast, $0.18, held at about $0.17 (its
    // prompt bound is its bytes, its cap 1,000): the key's $0.30 admits a second while the first is
    // held, not a third (at standard prices it admitted eleven)
    const { key, record } = await g.services.keys.create({ name: 'fast and nearly spent', credits: 0.3 })
    const statuses = await Promise.all(Array.from({ length: 12 }, async () => {
      const r = await post(key, { model: 'claude-opus-4-6', max_tokens: 1000, speed: 'fast', messages: [{ role: 'user', content: 'Quick.' }] })
      await r.arrayBuffer()
      return r.status
    }))
    for (let i = 0; i < 200 && g.services.billing.open > 0; i++) await Bun.sleep(10)
    await g.services.recorder.flush()
    const row = await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [record.id])
    expect(statuses.filter((s) => s === 200).length).toBe(2)
    // overshoot by at most one request
    expect(Number(row!.spent)).toBeLessThan(0.3 + 6 * standard('claude-opus-4-6', 1000))
  })
})

describe('the factors, read from a table', () => {
  test('fast mode by model, US-only inference by generation; the two multiply; an unknown model at the highest', () => {
    expect(premiumFactor('claude-opus-4-6', { speed: 'fast' })).toBe(6)
    expect(premiumFactor('claude-opus-4-7-20260416', { speed: 'fast' })).toBe(6)
    expect(premiumFactor('claude-opus-4-8', { speed: 'fast' })).toBe(2)
    expect(premiumFactor('claude-opus-9', { speed: 'fast' })).toBe(6)
    expect(premiumFactor('claude-opus-4-7', { speed: 'fast', inferenceGeo: 'us' })).toBeCloseTo(6.6, 12)
    expect(premiumFactor('claude-haiku-4-5', { inferenceGeo: 'us' })).toBe(1)
    expect(premiumFactor('claude-3-7-sonnet', { inferenceGeo: 'us' })).toBe(1)
    expect(premiumFactor('claude-sonnet-5', { inferenceGeo: 'us' })).toBe(1.1)
    expect(premiumFactor('claude-sonnet-4-6', {})).toBe(1)
    // the same model however a deployment spells it: dated, Vertex's @version, a context suffix, Bedrock's
    for (const id of ['claude-opus-4-8-20260601', 'claude-opus-4-8@20260601', 'claude-opus-4-8[1m]', 'us.anthropic.claude-opus-4-8-20260601-v1:0', 'anthropic.claude-opus-4-8-v1']) {
      expect({ id, factor: premiumFactor(id, { speed: 'fast', inferenceGeo: 'us' }) }).toEqual({ id, factor: 2 * 1.1 })
    }
  })

  test("a request is held at what it asks for, and at the US price unless it asks for global (the workspace's default is not known)", () => {
    expect(heldPremiums({ speed: 'fast' })).toEqual({ speed: 'fast', inferenceGeo: 'us' })
    expect(heldPremiums({ speed: 'standard', inference_geo: 'global' })).toEqual({})
  })

  test('a message_delta that leaves the modes out keeps what message_start said; one that says standard takes it back', () => {
    const start = usageFromAnthropic({ input_tokens: 5, output_tokens: 1, speed: 'fast', inference_geo: 'us' })
    expect(start).toMatchObject({ speed: 'fast', inferenceGeo: 'us' })
    expect(usageFromAnthropic({ input_tokens: 5, speed: 'standard', inference_geo: 'global' })).not.toHaveProperty('speed')
  })
})
