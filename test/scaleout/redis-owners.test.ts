// Three gateways in cluster mode (one PostgreSQL database, one Redis), each with requests holding
// one key's credit in Redis. One is killed outright (kill -9): the other two delete its holds, and
// the key is served again within seconds, not refused with a 402 for the minute its holds took to
// lapse. A live gateway's holds are never deleted: not while the others are refused on them, not
// while one gateway is stopped (SIGSTOP) a few seconds, not while Redis itself is paused longer
// than a dead gateway is given.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient, SQL } from 'bun'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, ownRedis, type OwnRedis } from '../helpers/redis.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const skip = !onPostgres || !Bun.which('redis-server')
if (skip) console.log('test/scaleout/redis-owners.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL unset or redis-server not installed')

const ADMIN = 'admin-redis-owners'
const schema = 'sy_t_rowners_' + process.pid
const prefix = freshPrefix()
let up: FakeUpstream
let db: SQL
let redis: OwnRedis
let raw: RedisClient
let dataDir: string
let env: Record<string, string>
const gws: Spawned[] = []
const never = new Promise<void>(() => {})

const chat = (g: Spawned, key: string, stream: boolean) =>
  fetch(`${g.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    // gpt-4o, 900 tokens out: about $0.0093 held; 2.7 cents admit three at once, not four
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: 900, stream, messages: [{ role: 'user', content: 'A story' }] }),
  })

/** The holds' ids of every key, as Redis has them. */
async function holds(): Promise<string[]> {
  const keys = (await raw.send('KEYS', [`${prefix}rsv:*`])) as string[]
  const ids: string[] = []
  for (const k of keys) for (const f of (await raw.send('HKEYS', [k])) as string[]) if (f.startsWith('rsr:')) ids.push(f)
  return ids.sort()
}
/** A hold's gateway: the first 12 of its id's last 32 hex digits. */
const ownerOf = (id: string) => id.slice(-32, -20)

/** A stream of `key` begun on `g` (kept in `streams`): the holds it made. */
async function holding(g: Spawned, key: string, streams: Response[]): Promise<string[]> {
  const before = new Set(await holds())
  streams.push(await chat(g, key, true))
  return (await holds()).filter((id) => !before.has(id))
}

async function newKey(g: Spawned, credits: number): Promise<string> {
  const made = await fetch(`${g.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'owners', credits }) })
  expect(made.status).toBe(201)
  return ((await made.json()) as { key: string }).key
}

describe.skipIf(skip)('gateways sharing Redis, one killed with requests holding credit', () => {
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
    // a Redis of this test's own: it is paused below, which would stall every other test on a shared one
    redis = await ownRedis()
    raw = new RedisClient(redis.url)
    dataDir = tempDir('switchyard-rowners-')
    env = {
      SWITCHYARD_CLUSTER: 'true',
      SWITCHYARD_DATABASE_URL: url,
      REDIS_URL: redis.url,
      SWITCHYARD_REDIS_PREFIX: prefix,
      SWITCHYARD_ADMIN_TOKEN: ADMIN,
      OPENAI_API_KEY: 'sk-up',
      OPENAI_BASE_URL: up.url,
      SWITCHYARD_KEY_RPM: '100000',
      SWITCHYARD_KEY_BURST_RPS: '1000',
    }
    gws.push(...(await Promise.all([spawnGateway({ env, dataDir }), spawnGateway({ env, dataDir }), spawnGateway({ env, dataDir })])))
  })
  afterAll(async () => {
    for (const g of gws) g.kill('SIGCONT')
    for (const g of gws) g.kill('SIGKILL')
    await Promise.all(gws.map((g) => g.exited))
    raw?.close()
    await redis?.stop()
    await db?.close()
    await up?.stop()
    await dropSchema(schema)
    cleanup(dataDir)
  })

  test("the two left delete the killed one's holds within seconds, and never each other's", async () => {
    const [a, b, c] = gws as [Spawned, Spawned, Spawned]
    const key = await newKey(a, 0.027)
    // a holds two requests' credit, b one: the key's credit is used up
    const streams: Response[] = []
    const aHolds = await holding(a, key, streams)
    aHolds.push(...(await holding(a, key, streams)))
    const [bHold] = await holding(b, key, streams)
    expect(streams.map((r) => r.status)).toEqual([200, 200, 200])
    expect(aHolds.length).toBe(2)
    expect(await holds()).toEqual([...aHolds, bHold!].sort())
    // each gateway's holds carry its id
    expect(ownerOf(aHolds[0]!)).toBe(ownerOf(aHolds[1]!))
    expect(ownerOf(bHold!)).not.toBe(ownerOf(aHolds[0]!))
    expect((await chat(c, key, false)).status).toBe(402)

    a.kill('SIGKILL')
    await a.exited
    // c is refused by a's holds until a has been silent a few seconds, then served
    const started = performance.now()
    let r = await chat(c, key, false)
    while (r.status === 402 && performance.now() - started < 20_000) {
      await Bun.sleep(250)
      r = await chat(c, key, false)
    }
    expect({ status: r.status, text: r.status === 200 ? '' : await r.text() }).toEqual({ status: 200, text: '' })
    expect(performance.now() - started).toBeLessThan(15_000)
    expect((await holds()).filter((id) => aHolds.includes(id))).toEqual([])
    expect(await holds()).toContain(bHold)

    // c's requests hold the rest: the key is used up by live gateways' holds, every refusal on
    // either looks at them, and they all stay
    streams.push(await chat(c, key, true), await chat(c, key, true))
    expect(streams.slice(3).map((r) => r.status)).toEqual([200, 200])
    const live = await holds()
    expect(live.length).toBeGreaterThanOrEqual(3)
    for (const until = performance.now() + 7_500; performance.now() < until; await Bun.sleep(300)) {
      expect([(await chat(b, key, false)).status, (await chat(c, key, false)).status]).toEqual([402, 402])
      expect(await holds()).toEqual(expect.arrayContaining(live))
    }

    // b stopped outright for less than a dead gateway is given (SIGSTOP): c is refused on its
    // hold meanwhile, and deletes nothing
    // (resumed on a timer of its own: a refusal may wait seconds for a second look, and the
    // stop must not last that much longer)
    b.kill('SIGSTOP')
    const resumed = Bun.sleep(4_500).then(() => b.kill('SIGCONT'))
    try {
      for (const until = performance.now() + 4_500; performance.now() < until; await Bun.sleep(300)) {
        expect((await chat(c, key, false)).status).toBe(402)
        expect(await holds()).toEqual(expect.arrayContaining(live))
      }
    } finally {
      await resumed
    }
    for (const until = performance.now() + 6_000; performance.now() < until; await Bun.sleep(300)) {
      expect([(await chat(b, key, false)).status, (await chat(c, key, false)).status]).toEqual([402, 402])
      expect(await holds()).toEqual(expect.arrayContaining(live))
    }

    // Redis itself paused longer than a dead gateway is given: every beat waits alike, and the
    // refusals queued meanwhile delete nothing once it resumes
    const paused = chat(c, key, false)
    await raw.send('CLIENT', ['PAUSE', '7000', 'ALL'])
    const during = [paused, chat(b, key, false), chat(c, key, false)]
    await Bun.sleep(7_000)
    // refused (a 402) or failed for want of Redis (a 503), never served
    for (const res of await Promise.all(during)) expect([402, 503]).toContain(res.status)
    // a gateway whose Redis client timed out in the pause answers 503 until it has its connection
    // back (a few seconds at most on a busy machine); refused either way, never served
    for (const until = performance.now() + 10_000; performance.now() < until; await Bun.sleep(300)) {
      const now = [(await chat(b, key, false)).status, (await chat(c, key, false)).status]
      for (const status of now) expect([402, 503]).toContain(status)
      if (!now.includes(503)) break
    }
    for (const until = performance.now() + 7_500; performance.now() < until; await Bun.sleep(300)) {
      expect([(await chat(b, key, false)).status, (await chat(c, key, false)).status]).toEqual([402, 402])
      expect(await holds()).toEqual(expect.arrayContaining(live))
    }
    for (const s of streams.slice(2)) await s.body?.cancel()
  }, 120_000)
})
