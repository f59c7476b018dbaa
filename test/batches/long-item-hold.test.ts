// A batch item's hold lasts as long as the item runs, as an interactive request's does: one that
// outlives the fifteen minutes after which a hold nobody settled lapses is renewed while it runs.
// Before, the holds of a batch's running items lapsed, and the key's credit was free again while
// they still ran. The clock is moved by hand, as in test/billing/long-request-hold.test.ts.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from './helpers.ts'

const realNow = Date.now
let offset = 0
let up: FakeUpstream
let g: Gateway
let release!: () => void
const released = new Promise<void>((r) => (release = r))

beforeAll(async () => {
  Date.now = () => realNow() + offset
  up = await startFakeUpstream()
  const enc = new TextEncoder()
  // a reply whose body comes when the test lets it (its head at once)
  up.script((req) => {
    const max = req.json().max_tokens
    const body = new ReadableStream({
      async start(c) {
        await released
        c.enqueue(enc.encode(JSON.stringify({ id: `chatcmpl-${crypto.randomUUID()}`, object: 'chat.completion', created: 1, model: 'gpt-4o-2024-08-06', choices: [{ index: 0, message: { role: 'assistant', content: 'Once' }, finish_reason: 'length' }], usage: { prompt_tokens: 10, completion_tokens: max, total_tokens: 10 + max } })))
        c.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'application/json' } })
  })
  g = await startGateway({ logLevel: 'silent', env: { ...NO_LIMITS, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url } })
})
afterAll(async () => {
  release()
  Date.now = realNow
  await g?.stop()
  await up?.stop()
})

test("a batch's items that run past the lapse of a forgotten hold keep their holds, and the key stays refused", async () => {
  // gpt-4o, 1,000 tokens out: about $0.0103 held an item; $0.05 admits five
  const { key, record } = await g.services.keys.create({ name: 'long items', credits: 0.05 })
  const item = { model: 'gpt-4o', max_tokens: 1000, messages: [{ role: 'user', content: 'A long story' }] }
  const created = await fetch(`${g.url}/api/v1/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: Array.from({ length: 10 }, (_, i) => ({ custom_id: `long-${i}`, ...item })) }),
  })
  expect(created.status).toBe(200)
  const { id } = (await created.json()) as { id: string }
  // what the running items hold (on Redis, there: its lapse is on Redis's clock, which the test does not move)
  const held = async () => (await g.services.billing.figures(record.id))?.reserved ?? g.services.billing.reserved(record.id)
  for (let i = 0; i < 1_000 && (await held()) <= 0.05; i++) await Bun.sleep(10)
  expect(await held()).toBeGreaterThan(0.05)
  const ask = async () => {
    const r = await fetch(`${g.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(item) })
    await r.arrayBuffer()
    return r.status
  }
  expect(await ask()).toBe(402)

  // twenty minutes of running, the renewal every ten (the gateway's timer: every five)
  for (let minutes = 0; minutes < 20; minutes += 10) {
    offset += 10 * 60_000
    g.services.billing.renew()
  }
  expect(await held()).toBeGreaterThan(0.05)
  expect(await ask()).toBe(402)

  // they end: their holds end with them; the rest of the batch runs on what is left
  release()
  const store = g.services.batches!.store
  for (let i = 0; i < 2_000 && !(await store.byId(id))!.endedAt; i++) await Bun.sleep(10)
  expect(await store.byId(id)).toMatchObject({ status: 'completed', total: 10 })
  for (let i = 0; i < 200 && (await held()) > 0; i++) await Bun.sleep(10)
  expect(await held()).toBe(0)
  await g.services.recorder.flush()
  const row = await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [record.id])
  // each served item billed its 1,000 tokens: one past the credit at most
  expect(Number(row!.spent)).toBeGreaterThan(0.05)
  expect(Number(row!.spent)).toBeLessThan(0.05 + 0.0103)
}, 60_000)
