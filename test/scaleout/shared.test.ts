// Two gateway processes on one PostgreSQL database (and one data dir for the file bytes, as a
// shared volume would be): keys, credits, files and responses threads are the same on both.
// Needs SWITCHYARD_TEST_DATABASE_URL (skipped without it).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import OpenAI from 'openai'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

if (!onPostgres) console.log('test/scaleout/shared.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const schema = 'sy_t_shared_' + process.pid
const ADMIN = 'admin-shared-' + crypto.randomUUID()
const KEY = 'sk-sy-shared-' + crypto.randomUUID().replaceAll('-', '')
const YAML = 'pricing:\n  overrides:\n    mock-gpt: { input_mtok: 100, output_mtok: 200 }\n'
let a: Spawned
let b: Spawned
let dir: string
let url: string
let up: FakeUpstream

describe.skipIf(!onPostgres)('two gateways, one database', () => {
  beforeAll(async () => {
    url = await freshSchema(schema)
    dir = tempDir()
    await Bun.write(`${dir}/c.yaml`, YAML)
    // gpt-4o-mini on a fake upstream: a prompt starting 'slow:' is answered after a second
    up = await startFakeUpstream()
    const reply = fixtureJson('openai/chat/nonstream-text.json')
    up.script((req) => ({ waitMs: String(req.json().messages?.[0]?.content).startsWith('slow:') ? 1_000 : 0, json: reply }))
    const env = { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_DATABASE_URL: url, SWITCHYARD_BOOTSTRAP_KEY: KEY, SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' }
    ;[a, b] = await Promise.all([spawnGateway({ env, dataDir: dir, args: ['--config', `${dir}/c.yaml`] }), spawnGateway({ env, dataDir: dir, args: ['--config', `${dir}/c.yaml`] })])
  }, 30_000)
  afterAll(async () => {
    for (const g of [a, b]) g?.kill()
    await Promise.all([a?.exited, b?.exited])
    cleanup(dir)
    await up?.stop()
    await dropSchema(schema)
  })

  const admin = (g: Spawned, method: string, path: string, body?: unknown) =>
    fetch(g.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
  const models = (g: Spawned, key: string) => fetch(g.url + '/api/v1/models', { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)
  const client = (g: Spawned, key = KEY) => new OpenAI({ apiKey: key, baseURL: g.url + '/api/alpha/v1' })

  async function within(ms: number, ok: () => Promise<boolean>): Promise<number> {
    const start = performance.now()
    while (!(await ok())) {
      if (performance.now() - start > ms) throw new Error(`not within ${ms} ms`)
      await Bun.sleep(20)
    }
    return performance.now() - start
  }

  test('a key made on one works on the other at once; disabled and enabled there, the other follows within 2 s', async () => {
    const made = (await (await admin(a, 'POST', '/admin/v1/keys', { name: 'roams' })).json()) as { id: string; key: string }
    expect(await models(b, made.key)).toBe(200)
    // b has the key in memory now; a disables it: b hears it (LISTEN/NOTIFY; b's poll is 5 s apart)
    expect((await admin(a, 'POST', `/admin/v1/keys/${made.id}/disable`)).status).toBe(200)
    expect(await within(2_000, async () => (await models(b, made.key)) === 401)).toBeLessThan(2_000)
    expect((await admin(b, 'POST', `/admin/v1/keys/${made.id}/enable`)).status).toBe(200)
    expect(await within(2_000, async () => (await models(a, made.key)) === 200)).toBeLessThan(2_000)
  })

  test('a key rotated on one: the old secret is refused on the other within 2 s, the new one served there; its spend and files stay', async () => {
    const made = (await (await admin(a, 'POST', '/admin/v1/keys', { name: 'rotated', credits: 1 })).json()) as { id: string; key: string }
    await client(b, made.key).chat.completions.create({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text before' }] })
    const file = await client(b, made.key).files.create({ file: new File(['kept'], 'kept.txt', { type: 'text/plain' }), purpose: 'user_data' })
    expect(await models(b, made.key)).toBe(200) // b holds the old secret in memory
    // b's charge written, so that a reads it
    const spentOn = async (g: Spawned) => ((await (await admin(g, 'GET', `/admin/v1/keys/${made.id}`)).json()) as { spent: number }).spent
    await within(2_000, async () => (await spentOn(a)) > 0)
    const r = await admin(a, 'POST', `/admin/v1/keys/${made.id}/rotate`)
    expect(r.status).toBe(200)
    const rotated = (await r.json()) as { key: string; spent: number }
    expect(rotated.spent).toBeGreaterThan(0)
    expect(await models(a, made.key)).toBe(401)
    // b is told through LISTEN/NOTIFY (asked the new secret first, it would read the row itself)
    expect(await within(2_000, async () => (await models(b, made.key)) === 401)).toBeLessThan(2_000)
    expect(await models(b, rotated.key)).toBe(200)
    expect((await client(b, rotated.key).files.list()).data.map((f) => f.id)).toContain(file.id)
    expect(await spentOn(b)).toBe(rotated.spent)
  })

  test('a key funded on one and spent on both: credits added on one reach the other within 2 s', async () => {
    const made = (await (await admin(a, 'POST', '/admin/v1/keys', { name: 'funded', credits: 0.0005 })).json()) as { id: string; key: string }
    const chat = (g: Spawned) => client(g, made.key).chat.completions.create({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text hi there' }] }).then(() => 200, (e) => e.status as number)
    // $0.0009 a request: the first crosses zero, the next is refused on either instance
    expect(await chat(a)).toBe(200)
    expect(await within(2_000, async () => (await chat(b)) === 402)).toBeLessThan(2_000)
    expect((await admin(b, 'POST', `/admin/v1/keys/${made.id}/credit`, { amount: 1 })).status).toBe(200)
    expect(await within(2_000, async () => (await chat(a)) === 200)).toBeLessThan(2_000)
  })

  test('one balance across both: requests alternating between them are served as on one instance, at most one more', async () => {
    // $0.0009 a request: $0.005 covers 5, and the rule serves the one crossing zero: 6 in all.
    // Per-instance ledgers would each see only their own spend and serve about twice that.
    // (7 was once seen under a loaded CI run: a release swept before its slow record was
    // written hid that cost from the other instance; the test below makes that happen.)
    const made = (await (await admin(a, 'POST', '/admin/v1/keys', { name: 'shared balance', credits: 0.005 })).json()) as { id: string; key: string }
    const chat = (g: Spawned) => client(g, made.key).chat.completions.create({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text hi there' }] }).then(() => 200, (e) => e.status as number)
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) statuses.push(await chat(i % 2 === 0 ? a : b))
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true)
    const served = statuses.filter((s) => s === 200).length
    expect(served).toBe(6)
    // and a concurrent burst on both finds nothing left
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(i % 2 === 0 ? a : b)))
    expect(burst.every((s) => s === 402)).toBe(true)
  })

  test('a cost whose record waits behind a slow write (a loaded database) is never hidden from the other instance', async () => {
    // a balance below any request's cost: the first request is served and holds more than is
    // left, so the next one must be refused, wherever it lands and however late the first's
    // record is written. Here the first ends while a write of its instance is held up (writes
    // to generations are locked for 3.5 s), so its record waits, and its release outlives the
    // 1 s after which a release no record took along is swept: the hold must not go before
    // the cost is written.
    const made = (await (await admin(a, 'POST', '/admin/v1/keys', { name: 'slow record', credits: 1e-9 })).json()) as { id: string; key: string }
    const funded = (g: Spawned, content: string) =>
      client(g, made.key).chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content }] }).then(() => 200, (e) => e.status as number)
    const db = new SQL({ url, max: 1 })
    try {
      const first = funded(a, 'slow: answered after a second')
      await Bun.sleep(200)
      let locked!: () => void
      const held = new Promise<void>((r) => (locked = r))
      const lock = db.begin(async (tx) => {
        await tx.unsafe('LOCK TABLE generations IN EXCLUSIVE MODE')
        locked()
        await Bun.sleep(3_500)
      })
      await held
      // an unlimited key's request: its record write on a blocks on the lock
      expect((await client(a).chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text hold the writer' }] })).choices.length).toBe(1)
      expect(await first).toBe(200)
      await Bun.sleep(1_600)
      expect(await funded(b, 'quick')).toBe(402)
      await lock
      expect(await funded(b, 'quick')).toBe(402)
    } finally {
      await db.close()
    }
  })

  test('a file uploaded through one is listed, read and deleted through the other', async () => {
    const file = await client(a).files.create({ file: new File(['shared bytes'], 'shared.txt', { type: 'text/plain' }), purpose: 'user_data' })
    const listed = await client(b).files.list()
    expect(listed.data.map((f) => f.id)).toContain(file.id)
    expect(await (await client(b).files.content(file.id)).text()).toBe('shared bytes')
    expect((await client(b).files.delete(file.id)).deleted).toBe(true)
    expect(await client(a).files.retrieve(file.id).then(() => 200, (e) => e.status)).toBe(404)
  })

  test('a batch made on one is taken up by the others at once: told on the bus, not found at a later look', async () => {
    // a third instance makes the batch and (nearly always) holds its two places, each item a
    // second upstream; the others, told of it, try for places every half second: once it stops
    // (its claims given back), one of them holds them within about that. A quiet instance looks
    // on its own only every few seconds.
    const env = { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_DATABASE_URL: url, SWITCHYARD_BOOTSTRAP_KEY: KEY, SWITCHYARD_ADMIN_TOKEN: ADMIN }
    const c = await spawnGateway({ env, dataDir: dir, args: ['--config', `${dir}/c.yaml`] })
    const db = new SQL({ url, max: 1 })
    try {
      const requests = Array.from({ length: 8 }, (_, i) => ({ custom_id: `bus-${i}`, model: 'gpt-4o-mini', messages: [{ role: 'user', content: `slow: item ${i}` }] }))
      const created = await fetch(`${c.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests, settings: { concurrency: 2 } }) })
      expect(created.status).toBe(200)
      const { id } = (await created.json()) as { id: string }
      const holders = async () => ((await db.unsafe('SELECT DISTINCT lease_owner AS o FROM batch_items WHERE batch_id = $1 AND lease_owner IS NOT NULL AND status IS NULL', [id])) as { o: string }[]).map((r) => r.o)
      await within(5_000, async () => (await holders()).length === 1)
      c.kill('SIGTERM')
      await c.exited
      // whoever held the places first (the maker, or one of the others if told sooner), the
      // batch is held by a live instance within a few tries after the maker is gone, before a
      // quiet instance's own look (every 5 s): 1.5 s was missed on a 2-core machine now and then
      expect(await within(3_000, async () => (await holders()).length > 0)).toBeLessThan(3_000)
    } finally {
      c.kill('SIGKILL')
      await db.close()
    }
  }, 30_000)

  test('a responses thread started on one continues on the other, at once', async () => {
    const first = await client(a).responses.create({ model: 'mock-gpt', input: 'mock: text the first turn' })
    const second = await client(b).responses.create({ model: 'mock-gpt', input: 'mock: text the second turn', previous_response_id: first.id })
    expect(second.previous_response_id).toBe(first.id)
    const third = await client(a).responses.create({ model: 'mock-gpt', input: 'mock: text the third turn', previous_response_id: second.id })
    expect(third.status).toBe('completed')
    // a generation record written by one is found through the other, once its write commits: the
    // writer queues records for 25 ms and its own lookups go first, the other's cannot (a loaded
    // CI lane once asked before the commit, three requests after the record's)
    const found = async () => (await fetch(`${b.url}/api/v1/generations?id=${first.id}`, { headers: { authorization: `Bearer ${KEY}` } })).status === 200
    expect(await within(3_000, found)).toBeLessThan(3_000)
  })
})
