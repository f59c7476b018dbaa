// A database with no room (a full data dir) must not make served generations vanish: their
// records stay queued with their cost held against the key, and are written once there is room.
// Past a bound on what waits, new generations are refused with 507 rather than served
// unrecorded; reads keep working. The full disk is made the database's own way: SQLite's page
// limit (SQLITE_FULL, what a full disk gives), PostgreSQL's disk_full error from a trigger.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { fillSqlite } from '../helpers/database.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const BACKLOG = 8
let g: Gateway

beforeAll(async () => {
  g = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_RECORDS_MAX_BACKLOG: String(BACKLOG) }, yaml: 'pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n' })
})
afterAll(() => g.stop())

async function fillDisk(): Promise<() => Promise<void>> {
  const sql = g.services.storage.sql
  if (sql.dialect === 'sqlite') {
    const free = fillSqlite(g.services.storage.sqlite!)
    return async () => free()
  }
  await sql.run(`CREATE FUNCTION sy_full() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$ LANGUAGE plpgsql`)
  await sql.run('CREATE TRIGGER sy_full BEFORE INSERT ON generations FOR EACH ROW EXECUTE FUNCTION sy_full()')
  return async () => {
    await sql.run('DROP TRIGGER sy_full ON generations')
    await sql.run('DROP FUNCTION sy_full()')
  }
}

const chat = (key: string, text: string) =>
  fetch(`${g.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ${text}` }] }),
  })

const recorded = async (keyId: string) =>
  (await g.services.storage.sql.get<{ n: number; c: number }>('SELECT count(*) AS n, coalesce(sum(cost), 0) AS c FROM generations WHERE api_key_id = ?', [keyId]))!

test('records wait for room with their cost held; past the bound generations get 507; all are written once there is room', async () => {
  const { key, record } = await g.services.keys.create({ name: 'full', credits: 100 })
  const free = await fillDisk()
  let served = 0
  let refused: Response | undefined
  try {
    for (let i = 0; i < 40 && !refused; i++) {
      const r = await chat(key, `n${i}`)
      if (r.status === 200) {
        served++
        await r.arrayBuffer()
      } else refused = r
      // let the recorder try (and fail) to write
      await Bun.sleep(30)
    }
    expect(served).toBeGreaterThanOrEqual(BACKLOG)
    expect(refused?.status).toBe(507)
    expect(refused!.headers.get('x-request-id')).toBeTruthy()
    expect(((await refused!.json()) as { error: string }).error).toContain('Insufficient storage')
    // reads still answer
    expect((await fetch(`${g.url}/api/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    // the cost of what was served is held against the key, though not every record is written yet
    const held = (await g.services.keys.authenticate(key))!.spent
    const written = await recorded(record.id)
    expect(written.n).toBeLessThan(served)
    expect(held).toBeGreaterThan(written.c)
  } finally {
    await free()
  }
  // room again: every served generation is written, with the spend it held
  let rows = { n: 0, c: 0 }
  for (const until = Date.now() + 10_000; rows.n < served && Date.now() < until; await Bun.sleep(100)) rows = await recorded(record.id)
  expect(rows.n).toBe(served)
  const spent = (await g.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [record.id]))!.spent
  expect(spent).toBeCloseTo(rows.c, 9)
  expect((await g.services.keys.authenticate(key))!.spent).toBeCloseTo(rows.c, 9)
  // and generations are served again
  expect((await chat(key, 'after')).status).toBe(200)
}, 60_000)
