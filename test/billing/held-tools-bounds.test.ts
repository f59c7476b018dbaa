// What a request's tools add to its hold, where that is not what its upstream can bill:
// - A Claude model on the Responses surface goes through the IR, which leaves OpenAI's hosted
//   tools out (web_search, file_search): Anthropic runs no search and no loop of calls for it, yet
//   it was held for ten searches and eleven calls of its output cap, dozens of times its price,
//   so a funded key ran one such request at a time (Codex sends web_search with every turn).
// - A server tool's `max_uses` or `max_content_tokens` is the client's number: a huge one made the
//   worst case Infinity, which is held as nothing (a burst all admitted), or a finite sum so large
//   that the key's other holds were lost in its float rounding when it was given back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { heldOnceTold, postAs } from '../helpers/burst.ts'

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

const post = (key: string, path: string, body: unknown) => postAs(g, key, path, body)

/** What a key's requests in progress hold, wherever the ledger keeps it. */
async function reserved(keyId: string): Promise<number> {
  const f = await g.services.billing.figures(keyId)
  return f ? f.reserved : g.services.billing.reserved(keyId)
}

/** The hold of one request while its upstream takes its time (polled until it shows). */
async function holdOf(path: string, body: unknown): Promise<number> {
  const { key, record } = await g.services.keys.create({ name: 'one hold', credits: 100 })
  const r = post(key, path, body)
  let usd = 0
  for (let i = 0; i < 100 && usd === 0; i++) {
    await Bun.sleep(10)
    usd = await reserved(record.id)
  }
  expect((await r).status).toBe(200)
  return usd
}

const claudeReply = (req: { json(): any }) => {
  const body = req.json()
  return { waitMs: 300, json: { id: `msg_${crypto.randomUUID().slice(0, 8)}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Fine.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 5 } } }
}

describe("a Claude model's hold on the Responses surface", () => {
  test("OpenAI's hosted search, Claude's web search for a Claude model, holds its searches and their loop of calls as the messages surface's tool does; kept off the live web (left out), nothing", async () => {
    up.script(claudeReply)
    const ask = { model: 'claude-sonnet-4-5', max_output_tokens: 1000, store: false, input: 'News from Paris?' }
    const plain = await holdOf('/api/alpha/v1/responses', ask)
    const searching = await holdOf('/api/alpha/v1/responses', { ...ask, max_tool_calls: 2, tools: [{ type: 'web_search' }] })
    const asMessages = await holdOf('/api/beta/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'News from Paris?' }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] })
    const offline = await holdOf('/api/alpha/v1/responses', { ...ask, tools: [{ type: 'web_search', external_web_access: false }] })
    expect(plain).toBeGreaterThan(0)
    expect(searching).toBeGreaterThan(plain * 2)
    expect(searching).toBeGreaterThan(asMessages * 0.9)
    expect(searching).toBeLessThan(asMessages * 1.1)
    // the tool's few bytes count in the prompt's bound; nothing else is added
    expect(offline).toBeLessThan(plain * 1.1)
  })
})

describe("a server tool's bounds as the client gives them", () => {
  test('a max_uses past any count: held at a finite sum, so a burst on a nearly spent key is served once', async () => {
    up.script(claudeReply)
    const { key, record } = await g.services.keys.create({ name: 'near its credit', credits: 0.01 })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1e200 }], messages: [{ role: 'user', content: 'Weather?' }] }
    const statuses = await Promise.all(Array.from({ length: 10 }, async () => {
      const r = await post(key, '/api/beta/v1/messages', body)
      await r.arrayBuffer()
      return r.status
    }))
    expect(statuses.filter((s) => s === 200).length).toBe(1)
    for (let i = 0; i < 200 && g.services.billing.open > 0; i++) await Bun.sleep(10)
    await g.services.recorder.flush()
    expect(await heldOnceTold(g, record.id)).toBe(0)
  })

  test("a fetch's max_content_tokens past any count, likewise", async () => {
    up.script(claudeReply)
    const { key } = await g.services.keys.create({ name: 'near its credit', credits: 0.01 })
    const body = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2, max_content_tokens: 1e308 }], messages: [{ role: 'user', content: 'Read it.' }] }
    const statuses = await Promise.all(Array.from({ length: 10 }, async () => {
      const r = await post(key, '/api/beta/v1/messages', body)
      await r.arrayBuffer()
      return r.status
    }))
    expect(statuses.filter((s) => s === 200).length).toBe(1)
  })

  test("a huge hold given back leaves the key's other holds as they were (not lost in its rounding)", async () => {
    const { key, record } = await g.services.keys.create({ name: 'two at once', credits: 5 })
    // the first request is slow; the second, with a huge max_uses, answers at once
    up.script((req) => ({ ...claudeReply(req), waitMs: req.json().tools ? 0 : 800 }))
    const slow = post(key, '/api/beta/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'Think.' }] })
    let first = 0
    for (let i = 0; i < 100 && first === 0; i++) {
      await Bun.sleep(10)
      first = await reserved(record.id)
    }
    expect(first).toBeGreaterThan(0)
    const huge = await post(key, '/api/beta/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 1000, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1e12 }], messages: [{ role: 'user', content: 'Search.' }] })
    expect(huge.status).toBe(200)
    await huge.arrayBuffer()
    // the huge hold is given back once its record is told
    await g.services.recorder.flush()
    let left = 0
    for (let i = 0; i < 50; i++) {
      left = await reserved(record.id)
      if (Math.abs(left - first) < 1e-9) break
      await Bun.sleep(10)
    }
    expect(left).toBeCloseTo(first, 9)
    expect((await slow).status).toBe(200)
  })
})

describe("OpenAI's fast mode (priority's new name) asked of a Claude model", () => {
  test('is passed over as priority is, not refused as a tier the translation does not know', async () => {
    up.script(claudeReply)
    for (const [path, body] of [
      ['/api/alpha/v1/chat/completions', { model: 'claude-sonnet-4-5', max_tokens: 100, service_tier: 'fast', messages: [{ role: 'user', content: 'Hi.' }] }],
      ['/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', max_output_tokens: 100, service_tier: 'fast', store: false, input: 'Hi.' }],
    ] as const) {
      const r = await post(g.key, path, body)
      expect(r.status).toBe(200)
      await r.arrayBuffer()
    }
  })
})
