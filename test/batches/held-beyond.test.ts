// A batch item's hold covers what an interactive request's does: the searches its server tools
// run upstream (and the text they bring back), and a fallback model dearer than its own, held at
// that model's price before it is called. Held at the item's prompt, cap and model alone, a batch
// on a key funded for 5.5 items ran 64 of them, as many as it ran at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { completedBatch, expectBatchBounded } from '../helpers/burst.ts'
import { NO_LIMITS } from './helpers.ts'
import { promptWritesOf } from '../../src/batches/item-hold.ts'

let up: FakeUpstream
let g: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  g = await startGateway({
    logLevel: 'silent',
    yaml: `
providers:
  - { id: anth, kind: anthropic, base_url: ${up.url}, api_key: sk-up-a, max_retries: 0 }
  - { id: oai, kind: openai, base_url: ${up.url}, api_key: sk-up, max_retries: 0 }
models:
  - { id: claude-haiku-4-5, family: anthropic, fallbacks: [claude-opus-4-1] }
routing: { failures_to_cool: 1000 }
`,
    // an item whose fallback cannot be held ends with its model's failure at once, not after retries
    env: { ...NO_LIMITS, SWITCHYARD_BATCH_MAX_RETRIES: '0' },
  })
})
afterAll(async () => {
  await g?.stop()
  await up?.stop()
})

const post = (key: string, path: string, body: unknown) =>
  fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** What one request costs, served interactively on the unlimited key. */
async function unitCost(path: string, body: unknown): Promise<number> {
  const r = await post(g.key, path, body)
  expect(r.status).toBe(200)
  const { id } = (await r.json()) as { id: string }
  await g.services.recorder.flush()
  const rec = (await (await fetch(`${g.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { generation: { cost: number } }
  expect(rec.generation.cost).toBeGreaterThan(0)
  return rec.generation.cost
}

/** The key's spend once its batch has ended and every hold is back. */
async function spentOf(keyId: string): Promise<number> {
  for (let i = 0; i < 500 && g.services.billing.open > 0; i++) await Bun.sleep(10)
  await g.services.recorder.flush()
  const row = await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [keyId])
  return Number(row!.spent)
}

/**
 * What a key's requests in progress hold once their ends have been told, wherever the ledger keeps
 * it (Redis: there, told a few ms after each end).
 */
async function heldOf(keyId: string): Promise<number> {
  let usd = 0
  for (let i = 0; i < 100; i++) {
    const f = await g.services.billing.figures(keyId)
    usd = f ? f.reserved : g.services.billing.reserved(keyId)
    if (usd === 0) break
    await Bun.sleep(20)
  }
  return usd
}

describe("a batch item's server tools are held", () => {
  test("Claude's web search in a message batch: 100 items on a key funded for 5.5 run 6 or 7", async () => {
    up.script((req) => {
      const body = req.json()
      const usage = { input_tokens: 6039, output_tokens: body.max_tokens, server_tool_use: { web_search_requests: 5 } }
      return { waitMs: 100, json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage } }
    })
    const params = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }], messages: [{ role: 'user', content: 'Weather in Paris?' }] }
    const unit = await unitCost('/api/beta/v1/messages', params)
    const { key, record } = await g.services.keys.create({ name: 'claude searches', credits: unit * 5.5 })
    await expectBatchBounded(g, await post(key, '/api/beta/v1/messages/batches', { requests: Array.from({ length: 100 }, (_, i) => ({ custom_id: `s${i}`, params })) }))
    expect(await spentOf(record.id)).toBeLessThanOrEqual(unit * 7.01)
  }, 60_000)

  test('the Responses web search in a batch: 100 items on a key funded for 5.5 run 6 or 7', async () => {
    up.script((req) => {
      const body = req.json()
      const base = fixtureJson('openai/responses/nonstream-text.json')
      const calls = Array.from({ length: 5 }, (_, i) => ({ type: 'web_search_call', id: `ws_${i}`, status: 'completed', action: { type: 'search', query: `q${i}` } }))
      return { waitMs: 100, json: { ...base, id: `resp_${crypto.randomUUID().replaceAll('-', '')}`, store: false, output: [...calls, ...base.output], usage: { input_tokens: 40_000, input_tokens_details: { cached_tokens: 0 }, output_tokens: body.max_output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 } } }
    })
    const body = { model: 'gpt-4o-mini', max_output_tokens: 100, store: false, tools: [{ type: 'web_search' }], input: 'News from Paris?' }
    const unit = await unitCost('/api/alpha/v1/responses', body)
    const { key, record } = await g.services.keys.create({ name: 'responses searches', credits: unit * 5.5 })
    await expectBatchBounded(g, await post(key, '/api/v1/batches', { endpoint: '/v1/responses', requests: Array.from({ length: 100 }, (_, i) => ({ custom_id: `r${i}`, ...body })) }))
    expect(await spentOf(record.id)).toBeLessThanOrEqual(unit * 7.01)
  }, 60_000)
})

describe("a batch item's fallback model", () => {
  test('dearer than its own is held at its own price before it is called: the spend stays within one item of the credit', async () => {
    up.script((req) => {
      const body = req.json()
      if (body.model === 'claude-haiku-4-5') return { status: 503, json: { type: 'error', error: { type: 'overloaded_error', message: 'down' } } }
      return { waitMs: 100, json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 10, output_tokens: body.max_tokens } } }
    })
    const params = { model: 'claude-haiku-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }
    // served by the fallback (claude-opus-4-1: 15 times the price)
    const unit = await unitCost('/api/beta/v1/messages', params)
    const { key, record } = await g.services.keys.create({ name: 'falls back', credits: unit * 5.5 })
    const sent = up.requests.length
    const created = await post(key, '/api/beta/v1/messages/batches', { requests: Array.from({ length: 100 }, (_, i) => ({ custom_id: `f${i}`, params })) })
    const row = await completedBatch(g, created)
    // held at the cheap model's price only, dozens were served by the dear one
    expect(row.succeeded).toBeGreaterThanOrEqual(1)
    expect(row.succeeded).toBeLessThanOrEqual(7)
    expect(await spentOf(record.id)).toBeLessThanOrEqual(unit * 7.01)
    // a fallback the key could not be held for was not called: the item ended with its model's
    // failure (or, once the key was spent with nothing held, it was refused before it ran)
    expect(up.requests.slice(sent).filter((r) => r.json().model === 'claude-opus-4-1')).toHaveLength(row.succeeded)
    const errors = await g.services.storage.sql.all<{ error: string }>(`SELECT error FROM batch_items WHERE batch_id = ? AND status = 'failed'`, [row.id])
    expect(errors).toHaveLength(100 - row.succeeded)
    const refusals = errors.map((e) => JSON.parse(e.error) as { status: number; message: string })
    expect(refusals.filter((e) => !(e.status === 503 && e.message.includes('down')) && e.status !== 402)).toEqual([])
    expect(refusals.some((e) => e.status === 503)).toBe(true)
    // and every hold went with its item, the ones moved to the fallback's price too
    expect(await heldOf(record.id)).toBe(0)
  }, 60_000)
})

describe("a batch item's prompt", () => {
  test('is held at the price its breakpoints allow, as the batch was checked: none, 5 minutes, an hour', async () => {
    up.script((req) => ({ waitMs: 10, json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: req.json().model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 2 } } }))
    const params = (cache_control?: object) => ({ model: 'claude-haiku-4-5', max_tokens: 10, system: [{ type: 'text', text: 'rules', ...(cache_control ? { cache_control } : {}) }], messages: [{ role: 'user', content: 'hi' }] })
    const { key } = await g.services.keys.create({ name: 'caches some', credits: 1 })
    const r = await post(key, '/api/beta/v1/messages/batches', { requests: [
      { custom_id: 'none', params: params() },
      { custom_id: 'five', params: params({ type: 'ephemeral' }) },
      { custom_id: 'hour', params: params({ type: 'ephemeral', ttl: '1h' }) },
    ] })
    expect(r.status).toBe(200)
    const { id } = (await r.json()) as { id: string }
    const rows = await g.services.storage.sql.all<{ custom_id: string; beyond: string | null }>('SELECT custom_id, beyond FROM batch_items WHERE batch_id = ? ORDER BY idx', [id])
    expect(rows.map((row) => [row.custom_id, promptWritesOf(row.beyond)])).toEqual([['none', 'none'], ['five', '5m'], ['hour', '1h']])
  })
})
