// A gateway with 100,000 keys (a CI job that makes one a run, for a year): the admin's key
// listing is read and written a page at a time with a turn of the loop between, and the
// dashboard's session names the accounts from the keys in memory, and a full reload of the keys
// in memory reads them a page at a time, so other clients' requests go on meanwhile. Read at
// once, the listing held the gateway's loop about two seconds (18 MB of JSON), the session near
// one, the reload 0.6–1.3 s. The gateway runs in a process of its own: in this one,
// receiving 18 MB holds the test's loop as long, and would hide what the gateway does.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { spawnGateway, startGateway, tempDir, cleanup, type Spawned } from '../helpers/server.ts'
import { dropDatabaseFor, openDatabaseOf } from '../helpers/database.ts'
import { slowestHealth } from '../helpers/loop-gap.ts'
import { hashKey } from '../../src/auth/key-rows.ts'

const ADMIN = 'admin-many-keys-' + crypto.randomUUID()
const N = 100_000
const GONE = 'sk-sy-many-gone-' + crypto.randomUUID()
const GONE_ID = 'key_manygone'
const dir = tempDir()
let gw: Spawned

beforeAll(async () => {
  // the keys are written straight to the table (one by one over HTTP would take minutes) by a
  // gateway on the same data dir, stopped before the one under test starts and loads them
  const maker = await startGateway({ dataDir: dir })
  const old = Date.now() - 10 * 60_000
  await maker.services.storage.sql.tx(async (q) => {
    for (let i = 0; i < N; i += 500) {
      const rows: string[] = []
      const params: (string | number)[] = []
      for (let j = i; j < Math.min(N, i + 500); j++) {
        rows.push('(?,?,?,?,?,?,?,?,?)')
        // made in an order their ids do not follow: the listing is by creation all the same
        params.push(`key_m${String(N - j).padStart(6, '0')}`, `acct${j % 997}`, `many ${j}`, `hash-many-${j}`, 'sk-sy-many', 'active', 0, 1_700_000_000 + j, old)
      }
      await q.run(`INSERT INTO api_keys (id, account, name, key_hash, key_prefix, status, spent, created_at, updated_at) VALUES ${rows.join(',')}`, params)
    }
    // and one whose secret this test knows, made after them, to delete by hand
    await q.run('INSERT INTO api_keys (id, account, name, key_hash, key_prefix, status, spent, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)', [GONE_ID, 'default', 'gone', hashKey(GONE), 'sk-sy-many', 'active', 0, 1_700_000_000 + N, old])
  })
  await maker.stop()
  gw = await spawnGateway({ dataDir: dir, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_IP_RPM: '100000' } })
}, 120_000)

afterAll(async () => {
  gw?.kill()
  await gw?.exited
  cleanup(dir)
  await dropDatabaseFor(dir)
})

const admin = (path: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${ADMIN}` } })

/** The slowest answer to a ping every 5 ms while `work` runs: how long the gateway's loop was held. */
const slowestPing = (work: () => Promise<void>) => slowestHealth(gw.url, work, 5, gw.proc.pid)

test('GET /admin/v1/keys lists all 100,000 keys, oldest first, while the gateway goes on answering', async () => {
  // once, for what a first run of each statement costs
  await (await admin('/admin/v1/keys')).arrayBuffer()
  let raw = new ArrayBuffer(0)
  const slowest = await slowestPing(async () => {
    const res = await admin('/admin/v1/keys')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    raw = await res.arrayBuffer()
  })
  const body = JSON.parse(new TextDecoder().decode(raw)) as { object: string; data: { id: string; name: string; created_at: number }[] }
  expect(body.object).toBe('list')
  expect(body.data.length).toBe(N + 2)
  expect(body.data.slice(0, 3).map((k) => k.name)).toEqual(['many 0', 'many 1', 'many 2'])
  expect(body.data.at(-2)!.name).toBe('gone')
  // the bootstrap key was made when the first gateway started: after every one of these
  expect(body.data.at(-1)!.name).toBe('bootstrap')
  for (let i = 1; i < body.data.length; i++) if (body.data[i]!.created_at < body.data[i - 1]!.created_at) throw new Error(`out of order at ${i}`)
  // read at once: 2.0–2.1 s; joined into one Blob at the end, 150–300 ms. Now under about
  // 0.1 s on either store, some of it 18 MB going over the wire to this process
  expect(slowest).toBeLessThan(500)
}, 60_000)

test("the admin's session names every account once, sorted, while the gateway goes on answering", async () => {
  let body: { role: string; accounts: string[] } = { role: '', accounts: [] }
  const slowest = await slowestPing(async () => {
    for (let i = 0; i < 5; i++) {
      const res = await admin('/api/v1/dashboard/session')
      expect(res.status).toBe(200)
      body = await res.json()
    }
  })
  expect(body.role).toBe('admin')
  expect(body.accounts.length).toBe(998)
  expect(body.accounts).toEqual([...body.accounts].sort())
  expect(body.accounts).toContain('default')
  // read at once: 2.1 s for the five
  expect(slowest).toBeLessThan(500)
}, 60_000)

test('every key read again (a key deleted by hand) while the gateway goes on answering', async () => {
  // fewer rows is what only a full read of every key can see: the gateway's poll makes one
  const asGone = () => fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${GONE}` } })
  expect((await asGone()).status).toBe(200)
  const db = await openDatabaseOf(dir)
  try {
    const slowest = await slowestPing(async () => {
      await db.sql.run('DELETE FROM api_keys WHERE id = ?', [GONE_ID])
      // refused once the full read has replaced what memory held
      for (const until = Date.now() + 30_000; (await asGone()).status !== 401; await Bun.sleep(50)) if (Date.now() > until) throw new Error('the deleted key is still served')
    })
    // read at once: 1–3 s
    expect(slowest).toBeLessThan(500)
  } finally {
    await db.close()
  }
}, 60_000)
