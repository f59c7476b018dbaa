// A request's hold lasts as long as the request: a stream of a long reply may run past the
// minute after which a hold nobody renewed lapses (a request that died without a record). Its
// hold is renewed while it runs; before, the key's whole credit could be admitted again each
// time the holds lapsed while the first streams still ran, and each was billed in full.
// The clock is moved by hand: Date.now is replaced before the gateway starts (the ledger and
// billing read it), and the renewal the gateway's timer makes every 20 seconds is called as
// the timer would call it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { RESERVATION_TTL_MS } from '../../src/billing/ledger.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

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
  const chunk = (o: unknown) => enc.encode(`data: ${JSON.stringify(o)}\n\n`)
  // a reply that goes on until the test lets it end
  up.script((req) => {
    const max = req.json().max_tokens
    const base = { id: `chatcmpl-${crypto.randomUUID()}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-2024-08-06' }
    const body = new ReadableStream({
      async start(c) {
        c.enqueue(chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' }, finish_reason: null }] }))
        await released
        c.enqueue(chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }))
        c.enqueue(chunk({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: max, total_tokens: 10 + max } }))
        c.enqueue(enc.encode('data: [DONE]\n\n'))
        c.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  })
  g = await startGateway({
    logLevel: 'silent',
    env: { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' },
  })
})
afterAll(async () => {
  release()
  Date.now = realNow
  await g?.stop()
  await up?.stop()
})

test('a stream that runs past the lapse of a forgotten hold keeps its hold, and the key stays refused', async () => {
  // gpt-4o, 1,000 tokens out: about $0.0103 held a request; $0.05 admits five
  const { key, record } = await g.services.keys.create({ name: 'long streams', credits: 0.05 })
  const ask = () =>
    fetch(`${g.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'A long story' }] }),
    })
  const open: Promise<string>[] = []
  for (let i = 0; i < 5; i++) {
    const r = await ask()
    expect(r.status).toBe(200)
    open.push(r.text())
  }
  const refusedNow = await ask()
  expect(refusedNow.status).toBe(402)
  await refusedNow.text()
  // what the five hold (on Redis, there: its lapse is on Redis's clock, which the test does not move)
  const held = async () => (await g.services.billing.figures(record.id))?.reserved ?? g.services.billing.reserved(record.id)
  expect(await held()).toBeGreaterThan(0.05)

  // twenty minutes of streaming, the renewal every two thirds of a lapse (the gateway's timer: every third)
  for (let ms = 0; ms < 20 * 60_000; ms += (RESERVATION_TTL_MS * 2) / 3) {
    offset += (RESERVATION_TTL_MS * 2) / 3
    g.services.billing.renew()
    expect(await held()).toBeGreaterThan(0.05)
  }
  expect(await held()).toBeGreaterThan(0.05)
  const refusedLater = await ask()
  expect(refusedLater.status).toBe(402)
  await refusedLater.text()

  // they end: their holds end with them, and are not renewed after
  release()
  await Promise.all(open)
  for (let i = 0; i < 200 && (await held()) > 0; i++) await Bun.sleep(10)
  expect(await held()).toBe(0)
  await g.services.recorder.flush()
  const row = await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [record.id])
  // five served, each billed its 1,000 tokens: one request past the credit at most
  expect(Number(row!.spent)).toBeGreaterThan(0.05)
  expect(Number(row!.spent)).toBeLessThan(0.05 + 0.0103)
})
