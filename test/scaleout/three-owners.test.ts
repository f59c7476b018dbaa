// Three gateways on one PostgreSQL database (no Redis), each with requests holding one key's
// credit. One is killed outright (kill -9): the other two delete its holds (a request of the
// key is served again within seconds), and neither ever deletes a live gateway's hold.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const ADMIN = 'admin-three-owners'
const schema = 'sy_t_owners3_' + process.pid
let up: FakeUpstream
let db: SQL
let dataDir: string
let env: Record<string, string>
const gws: Spawned[] = []
const never = new Promise<void>(() => {})

describe.skipIf(!onPostgres)('three gateways on one database, one killed with requests holding credit', () => {
  beforeAll(async () => {
    up = await startFakeUpstream()
    const enc = new TextEncoder()
    up.script((req) => {
      if (!req.json().stream) return { json: fixtureJson('openai/chat/nonstream-text.json') }
      // a reply that has begun and does not end: its request holds credit while the test runs
      const body = new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: req.json().model, choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' }, finish_reason: null }] })}\n\n`))
          await never
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    })
    const url = await freshSchema(schema)
    db = new SQL({ url, max: 1 })
    dataDir = tempDir('switchyard-owners3-')
    env = { SWITCHYARD_DATABASE_URL: url, SWITCHYARD_ADMIN_TOKEN: ADMIN, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_KEY_BURST_RPS: '1000' }
  })
  afterAll(async () => {
    for (const g of gws) g.kill('SIGKILL')
    await Promise.all(gws.map((g) => g.exited))
    await db?.close()
    await up?.stop()
    await dropSchema(schema)
    cleanup(dataDir)
  })

  const chat = (g: Spawned, key: string, stream: boolean) =>
    fetch(`${g.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      // gpt-4o, 900 tokens out: about $0.0093 held; 2.7 cents admit three at once, not four
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 900, stream, messages: [{ role: 'user', content: 'A story' }] }),
    })
  const rows = async () => ((await db.unsafe('SELECT id FROM credit_reservations ORDER BY id')) as { id: string }[]).map((r) => r.id)
  const ownerOf = (id: string) => id.split('_')[1]

  test("the two left delete the killed one's holds, and never each other's", async () => {
    const a = await spawnGateway({ env, dataDir })
    gws.push(a)
    const made = await fetch(`${a.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'three owners', credits: 0.027 }) })
    expect(made.status).toBe(201)
    const key = ((await made.json()) as { key: string }).key
    const [b, c] = await Promise.all([spawnGateway({ env, dataDir }), spawnGateway({ env, dataDir })])
    gws.push(b!, c!)

    // a holds two requests' credit, b one: the key's credit is used up
    const streams = [await chat(a, key, true), await chat(a, key, true), await chat(b!, key, true)]
    expect(streams.map((r) => r.status)).toEqual([200, 200, 200])
    const held = await rows()
    expect(held.length).toBe(3)
    const owners = [...new Set(held.map(ownerOf))]
    expect(owners.length).toBe(2)
    const bHold = held.find((id) => held.filter((x) => ownerOf(x) === ownerOf(id)).length === 1)!
    expect((await chat(c!, key, false)).status).toBe(402)

    a.kill('SIGKILL')
    await a.exited
    // c's requests are refused by a's holds a moment (a refusal looks for dead gateways' holds at
    // most once a second), then wait for them to be seen a dead gateway's, and are served
    const started = performance.now()
    let r = await chat(c!, key, false)
    while (r.status === 402 && performance.now() - started < 2_000) r = await chat(c!, key, false)
    expect({ status: r.status, text: r.status === 200 ? '' : await r.text() }).toEqual({ status: 200, text: '' })
    expect(performance.now() - started).toBeLessThan(10_000)
    const aOwner = owners.find((o) => o !== ownerOf(bHold))
    expect((await rows()).filter((id) => ownerOf(id) === aOwner)).toEqual([])
    expect(await rows()).toContain(bHold)
    // c's requests hold the rest: the key is used up by live gateways' holds, and every refusal
    // on either looks for dead gateways' holds; b's and c's stay through those looks and their
    // every-10-seconds ones
    streams.push(await chat(c!, key, true), await chat(c!, key, true))
    expect(streams.slice(3).map((r) => r.status)).toEqual([200, 200])
    // (and rows of c's requests that ended, until their records are written)
    const cOwner = ownerOf((await rows()).find((id) => ownerOf(id) !== ownerOf(bHold))!)
    const live = async () => (await rows()).filter((id) => id === bHold || ownerOf(id) === cOwner)
    const streamsHeld = await live()
    expect(streamsHeld.length).toBeGreaterThanOrEqual(3)
    for (const until = performance.now() + 6_500; performance.now() < until; await Bun.sleep(300)) {
      expect([(await chat(b!, key, false)).status, (await chat(c!, key, false)).status]).toEqual([402, 402])
      expect(await live()).toContain(bHold)
      expect((await live()).filter((id) => ownerOf(id) === cOwner).length).toBeGreaterThanOrEqual(2)
    }
    expect((await rows()).filter((id) => ownerOf(id) !== cOwner && id !== bHold)).toEqual([])
    for (const s of streams.slice(2)) await s.body?.cancel()
  }, 90_000)
})
