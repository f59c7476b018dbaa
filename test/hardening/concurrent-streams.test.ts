// Streams whose source never waits on I/O (the mock) must not starve timers. Under 30
// concurrent mock streams of 2,000 words each: records reach the database within 200 ms of
// their stream's end (the recorder's flush timer fires; on PostgreSQL 400 ms, see below), a
// key disabled from the CLI is refused within 2 s, and a 3 MB upload keeps its speed. The gateway runs as a subprocess,
// so the clients' own work here cannot be mistaken for the gateway's.
import { afterAll, expect, test } from 'bun:test'
import { onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { cleanup, runCli, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const dirs: string[] = []
const procs: Spawned[] = []
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  for (const d of dirs) cleanup(d)
})

const WORDS = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ')

test('30 concurrent mock streams: records within 200 ms, a disabled key refused within 2 s, uploads keep their speed', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const create = async (name: string) => JSON.parse((await runCli(['keys', 'create', '--name', name, '--json', '--data-dir', dir])).stdout) as { id: string; key: string }
  const key = (await create('load')).key
  const other = await create('victim')
  const gw = await spawnGateway({ dataDir: dir, env: { SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
  procs.push(gw)
  const db = await openDatabaseOf(dir, { readonly: true })

  const ended = new Map<string, number>()
  const streams = Array.from({ length: 30 }, async () => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: `mock: text ${WORDS}` }] }),
    })
    const text = await res.text()
    ended.set(/"id":"([^"]+)"/.exec(text)![1]!, performance.now())
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
  })

  // records: the first moment each stream's record is in the database, by polling the file
  const seen = new Map<string, number>()
  let polling = true
  const poller = (async () => {
    while (polling) {
      for (const r of await db.sql.all<{ reply_id: string }>('SELECT reply_id FROM generations')) if (!seen.has(r.reply_id)) seen.set(r.reply_id, performance.now())
      await Bun.sleep(10)
    }
  })()

  await Bun.sleep(150)
  // a key disabled while the streams run is refused within 2 s
  const call = () => fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${other.key}` } }).then((r) => r.status)
  expect(await call()).toBe(200)
  expect((await runCli(['keys', 'disable', other.id, '--data-dir', dir])).code).toBe(0)
  const t0 = performance.now()
  while ((await call()) !== 401) {
    expect(performance.now() - t0).toBeLessThan(2000)
    await Bun.sleep(25)
  }

  // a 3 MB upload keeps its speed (it took 5.4 s under this load before the fix)
  const form = new FormData()
  form.append('purpose', 'batch')
  form.append('file', new Blob([new Uint8Array(3 * 1024 * 1024).fill(97)]), 'big.txt')
  const u0 = performance.now()
  const up = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
  const uploadMs = performance.now() - u0
  expect(up.status).toBe(200)

  await Promise.all(streams)
  await Bun.sleep(300)
  polling = false
  await poller
  await db.close()

  expect(ended.size).toBe(30)
  const lags = [...ended].map(([id, at]) => (seen.get(id) ?? Infinity) - at)
  // 200 ms, plus the 10 ms of this poll's own interval. On PostgreSQL a write is three round
  // trips, each a turn of a loop these streams keep busy, on two cores shared with the server
  // and this test's clients: 60-290 ms measured there. Timers starved by the streams showed a
  // lag past 330 ms on SQLite.
  expect(Math.max(...lags)).toBeLessThan(onPostgres ? 410 : 210)
  expect(uploadMs).toBeLessThan(1000)
}, 60_000)
