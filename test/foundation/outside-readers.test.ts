// An operator opens the running gateway's SQLite database from outside: a sqlite shell doing one
// read, a backup script, the CLI's `keys create` beside the server. SQLite's locks are POSIX
// locks, held per process and dropped when the process closes ANY descriptor of the file; a
// gateway that once did so (a batch worker opening the store) holds none, and the next outside
// connection believes it is alone, checkpoints and deletes the WAL under it. Afterwards the
// server writes to a deleted file and the database ends malformed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readlinkSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { onPostgres } from '../helpers/database.ts'
import { BUN, cleanup, runCli, spawnGateway, startGateway, type Spawned } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

const KEY = 'sk-sy-outside-readers-0123456789abcdef'

/** Runs a short script in a process of its own, with bun:sqlite on the gateway's database file. */
async function outside(file: string, script: string): Promise<string> {
  const p = Bun.spawn([BUN, '-e', `import { Database } from 'bun:sqlite'; const file = ${JSON.stringify(file)}; ${script}`], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited]
  if (code !== 0) throw new Error(`outside process failed: ${err}`)
  return out.trim()
}

function deletedDescriptors(pid: number): string[] {
  const dir = `/proc/${pid}/fd`
  return readdirSync(dir)
    .map((fd) => {
      try {
        return readlinkSync(join(dir, fd))
      } catch {
        return ''
      }
    })
    .filter((target) => target.includes('switchyard.db') && target.endsWith('(deleted)'))
}

const call = (g: Spawned, path: string, init: RequestInit = {}, key = KEY) =>
  fetch(g.url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } })

async function runOneItemBatch(g: Spawned) {
  const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] } })
  const form = new FormData()
  form.set('purpose', 'batch')
  form.set('file', new File([line + '\n'], 'in.jsonl'))
  const file = (await (await fetch(g.url + '/api/v1/files', { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form })).json()) as { id: string }
  const batch = (await (await call(g, '/api/v1/batches', { method: 'POST', body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) })).json()) as { id: string }
  for (const until = Date.now() + 20_000; Date.now() < until; await Bun.sleep(50)) {
    const b = (await (await call(g, `/api/v1/batches/${batch.id}`)).json()) as { status: string }
    if (b.status === 'completed') return
  }
  throw new Error('the batch did not complete')
}

describe.skipIf(onPostgres)('outside processes on the running gateway SQLite database', () => {
  let g: Spawned
  let file: string
  beforeAll(async () => {
    g = await spawnGateway({ env: { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: KEY } })
    file = join(g.dataDir, 'switchyard.db')
  })
  afterAll(async () => {
    g.kill()
    await g.exited
    cleanup(g.dataDir)
  })

  test('after a batch, outside readers, writers and the CLI leave the WAL in place and the database whole', async () => {
    await runOneItemBatch(g)
    // chat traffic throughout
    let serving = true
    const statuses: number[] = []
    const traffic = (async () => {
      while (serving) {
        const r = await call(g, '/api/alpha/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }) })
        statuses.push(r.status)
        await r.arrayBuffer()
      }
    })()

    expect(Number(await outside(file, `const db = new Database(file, { readonly: true }); console.log(db.query('select count(*) as n from generations').get().n); db.close()`))).toBeGreaterThan(0)
    // bun:sqlite keeps the WAL on close; the sqlite3 shell (and most tools) delete it when they
    // believe they are the last connection: this one behaves as they do
    await outside(file, `import { constants } from 'bun:sqlite'; const db = new Database(file); db.exec('PRAGMA busy_timeout = 5000'); db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 0); db.query('select count(*) from api_keys').get(); db.close()`)
    if (Bun.which('sqlite3')) expect(Bun.spawnSync(['sqlite3', file, 'select count(*) from generations']).exitCode).toBe(0)
    const made = JSON.parse((await runCli(['keys', 'create', '--name', 'outside', '--json', '--data-dir', g.dataDir])).stdout) as { id: string; key: string }
    await runCli(['keys', 'create', '--name', 'outside-2', '--data-dir', g.dataDir])
    await runCli(['keys', 'credit', made.id, '5', '--data-dir', g.dataDir])

    // a key the CLI made works on the server within 2 s
    let status = 0
    for (const until = Date.now() + 2_000; status !== 200 && Date.now() < until; await Bun.sleep(50)) status = (await call(g, '/api/v1/models', {}, made.key)).status
    expect(status).toBe(200)
    // and one it disabled is refused within 2 s
    await runCli(['keys', 'disable', made.id, '--data-dir', g.dataDir])
    for (const until = Date.now() + 2_000; status !== 401 && Date.now() < until; await Bun.sleep(50)) status = (await call(g, '/api/v1/models', {}, made.key)).status
    expect(status).toBe(401)

    serving = false
    await traffic
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.every((s) => s === 200)).toBe(true)
    expect(existsSync(`${file}-wal`)).toBe(true)
    expect(existsSync(`${file}-shm`)).toBe(true)
    expect(deletedDescriptors(g.proc.pid)).toEqual([])
    expect(await outside(file, `const db = new Database(file, { readonly: true }); console.log(db.query('pragma integrity_check').get().integrity_check); db.close()`)).toBe('ok')
    expect(((await (await fetch(g.url + '/health')).json()) as { status: string }).status).toBe('ok')
  }, 60_000)
})

describe.skipIf(onPostgres)('/health reads the SQLite store', () => {
  test('a WAL deleted under the gateway turns /health into a 503 naming the database', async () => {
    const gw = await startGateway()
    try {
      expect((await fetch(gw.url + '/health')).status).toBe(200)
      rmSync(join(gw.dataDir, 'switchyard.db-wal'))
      let res = await fetch(gw.url + '/health')
      for (const until = Date.now() + 3_000; res.status === 200 && Date.now() < until; await Bun.sleep(100)) res = await fetch(gw.url + '/health')
      expect(res.status).toBe(503)
      const body = (await res.json()) as { status: string; database: string; error: string }
      expect(body.database).toBe('down')
      expect(body.error).toContain('database')
      expect(res.headers.get('x-request-id')).toBeTruthy()
    } finally {
      await gw.stop()
    }
  })

  test('a data dir deleted under the gateway: nothing that writes is taken (its record would be lost), reads still answer', async () => {
    const gw = await startGateway()
    const auth = { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }
    const chat = () => fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }) })
    try {
      expect((await chat()).status).toBe(200)
      rmSync(gw.dataDir, { recursive: true, force: true })
      let res = await chat()
      for (const until = Date.now() + 3_000; res.status === 200 && Date.now() < until; await Bun.sleep(100)) res = await chat()
      expect(res.status).toBe(503)
      const body = (await res.json()) as { error: string }
      expect(body.error).toContain('database cannot be written')
      expect(res.headers.get('x-request-id')).toBeTruthy()
      // an upload and an admin write are refused the same way; a read is not
      const form = new FormData()
      form.set('purpose', 'batch')
      form.set('file', new File(['{}\n'], 'a.jsonl'))
      expect((await fetch(`${gw.url}/api/alpha/v1/files`, { method: 'POST', headers: { authorization: auth.authorization }, body: form })).status).toBe(503)
      expect((await fetch(`${gw.url}/api/v1/generations?limit=1`, { headers: { authorization: auth.authorization } })).status).toBe(200)
      expect((await fetch(gw.url + '/health')).status).toBe(503)
    } finally {
      await gw.stop()
    }
  })
})
