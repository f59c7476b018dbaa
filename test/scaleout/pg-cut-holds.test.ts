// A gateway whose PostgreSQL connections all drop (the server restarted, a proxy between them
// cut) is still running, and so are its requests: it must serve again once the database is back,
// take its owner number again, and keep its requests' credit holds, while another instance that
// sees its lock free meanwhile goes on refusing the key those holds use up. A cut longer than
// the few seconds another instance waits before deleting a free lock's holds (as for a dead
// gateway) has them written again by their gateway as soon as it is back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { PgLedger } from '../../src/billing/pg-ledger.ts'
import { OWNER_LOCKS } from '../../src/billing/pg-owner.ts'
import { PgSql } from '../../src/db/pg-sql.ts'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { startTcpProxy, type Proxy } from '../helpers/tcp-proxy.ts'

const schema = 'sy_t_pgcut_' + process.pid
let up: FakeUpstream
let proxy: Proxy
let gw: Gateway
let direct: SQL
let other: { ledger: PgLedger; client: SQL }
const never = new Promise<void>(() => {})

describe.skipIf(!onPostgres)('PostgreSQL connections cut under a running gateway with requests holding credit', () => {
  beforeAll(async () => {
    up = await startFakeUpstream()
    const enc = new TextEncoder()
    up.script((req) => {
      if (!req.json().stream) return { json: fixtureJson('openai/chat/nonstream-text.json') }
      // a reply that has begun and does not end while the test runs: its hold stays
      const body = new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: req.json().model, choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' }, finish_reason: null }] })}\n\n`))
          await never
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    })
    const url = await freshSchema(schema)
    const viaProxy = new URL(url)
    proxy = startTcpProxy(viaProxy.hostname, Number(viaProxy.port || 5432))
    viaProxy.host = `127.0.0.1:${proxy.port}`
    gw = await startGateway({ env: { SWITCHYARD_DATABASE_URL: viaProxy.toString(), OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_KEY_BURST_RPS: '1000' } })
    direct = new SQL({ url, max: 2 })
    // another instance, on a connection the proxy does not carry
    const client = new SQL({ url, max: 1 })
    other = { ledger: new PgLedger(new PgSql(direct), undefined, 60_000, false), client }
    await other.ledger.own(client)
  })
  afterAll(async () => {
    proxy?.restore()
    await other?.ledger.stop()
    await other?.client.close()
    await gw?.stop()
    proxy?.stop()
    await direct?.close()
    await up?.stop()
    await dropSchema(schema)
  })

  const chat = (key: string, stream: boolean) =>
    fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      // gpt-4o, 900 tokens out: about $0.0093 held; a cent admits two at once, not three
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 900, stream, messages: [{ role: 'user', content: 'A story' }] }),
    })
  const rowsOf = async (keyId: string) => ((await direct.unsafe('SELECT id FROM credit_reservations WHERE api_key_id = $1 ORDER BY id', [keyId])) as { id: string }[]).map((r) => r.id)
  const lockHeld = async (owner: number) =>
    ((await direct.unsafe(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = ${OWNER_LOCKS} AND objid = $1 AND objsubid = 2 AND granted`, [owner])) as { n: number }[])[0]!.n === 1
  /** The other instance asks for the key's credit every 100 ms for `ms`: what it was given. */
  async function othersAdmitted(figures: { id: string; credits: number; spent: number }, ms: number) {
    const admitted: string[] = []
    for (const until = performance.now() + ms; performance.now() < until; await Bun.sleep(100)) {
      const h = await other.ledger.reserve(figures, 0.0049)
      if (h.admitted) admitted.push(h.reservationId!)
    }
    return admitted
  }
  async function until(what: string, ok: () => Promise<boolean>, ms = 15_000) {
    for (const deadline = performance.now() + ms; !(await ok()); await Bun.sleep(100)) if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
  }

  async function twoInFlight(name: string) {
    const { key, record } = await gw.services.keys.create({ name, credits: 0.01 })
    const streams = [await chat(key, true), await chat(key, true)]
    expect(streams.map((r) => r.status)).toEqual([200, 200])
    const held = await rowsOf(record.id)
    expect(held.length).toBe(2)
    const owner = Number(held[0]!.split('_')[1])
    expect(await lockHeld(owner)).toBe(true)
    const figures = { id: record.id, credits: 0.01, spent: 0 }
    expect(await othersAdmitted(figures, 100)).toEqual([])
    return { key, record, streams, held, owner, figures }
  }

  test('a cut of a second or two: the gateway serves again and owns its number again, and its holds were never deleted', async () => {
    const a = await twoInFlight('short cut')
    proxy.cut()
    const during = othersAdmitted(a.figures, 1_500)
    await Bun.sleep(1_500)
    proxy.restore()
    expect(await during).toEqual([])
    // and after: the other instance's looks see the lock taken again before they would delete
    expect(await othersAdmitted(a.figures, 6_000)).toEqual([])
    expect(await lockHeld(a.owner)).toBe(true)
    expect(await rowsOf(a.record.id)).toEqual(a.held)
    // the gateway serves: an unlimited key's request, and the funded key is still refused
    expect((await chat(gw.key, false)).status).toBe(200)
    expect((await chat(a.key, false)).status).toBe(402)
    for (const s of a.streams) await s.body?.cancel()
  }, 60_000)

  test('a cut longer than the wait for a free lock: the holds deleted meanwhile are written again once the gateway is back', async () => {
    const a = await twoInFlight('long cut')
    proxy.cut()
    // the other instance finds the lock free for long enough, and takes the holds for a dead gateway's
    await until('the holds deleted', async () => (await other.ledger.releaseOrphans()) > 0 || (await rowsOf(a.record.id)).length === 0)
    expect(await rowsOf(a.record.id)).toEqual([])
    proxy.restore()
    await until('the holds written again', async () => (await rowsOf(a.record.id)).length === 2)
    expect(await rowsOf(a.record.id)).toEqual(a.held)
    await until('the lock taken again', () => lockHeld(a.owner))
    expect(await othersAdmitted(a.figures, 1_500)).toEqual([])
    expect((await chat(gw.key, false)).status).toBe(200)
    for (const s of a.streams) await s.body?.cancel()
  }, 60_000)
})
