// The CLI as a user runs it: keys on a data dir a running server also uses, config, version.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import pkg from '../../package.json'
import { cleanup, runCli, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { onPostgres } from '../helpers/database.ts'

const dirs: string[] = []
const procs: Spawned[] = []
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  for (const d of dirs) cleanup(d)
})

test('keys create prints the key alone on its first line; --json gives id and key', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const plain = await runCli(['keys', 'create', '--name', 'ci', '--credits', '5', '--rpm', '30', '--data-dir', dir])
  expect(plain.code).toBe(0)
  const first = plain.stdout.split('\n')[0]!
  expect(first).toMatch(/^sk-sy-[A-Za-z0-9_-]{40,}$/)
  const json = await runCli(['keys', 'create', '--name', 'j', '--account', 'acme', '--json'], { SWITCHYARD_DATA_DIR: dir })
  const obj = JSON.parse(json.stdout) as { id: string; key: string; account: string }
  expect(obj.key).toStartWith('sk-sy-')
  expect(obj.id).toStartWith('key_')
  expect(obj.account).toBe('acme')
  const list = await runCli(['keys', 'list', '--json', '--data-dir', dir])
  const keys = JSON.parse(list.stdout) as { name: string; credits: number | null; rpm: number | null }[]
  expect(keys.map((k) => k.name)).toEqual(['ci', 'j'])
  expect(keys[0]).toMatchObject({ credits: 5, rpm: 30 })
  expect(list.stdout).not.toContain(first) // keys are stored hashed, never listed
  const bad = await runCli(['keys', 'create', '--data-dir', dir])
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('--name')
  // the admin routes' rules for the text an operator reads back: no control characters, 200 at most
  const tab = await runCli(['keys', 'create', '--name', 'a\tb', '--data-dir', dir])
  expect({ code: tab.code, named: tab.stderr.includes('--name') && tab.stderr.includes('control') }).toEqual({ code: 2, named: true })
  const long = await runCli(['keys', 'create', '--name', 'ok', '--account', 'x'.repeat(201), '--data-dir', dir])
  expect({ code: long.code, named: long.stderr.includes('--account') && long.stderr.includes('200') }).toEqual({ code: 2, named: true })
  expect((JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout) as unknown[]).length).toBe(2)
})

test('a running server sees disable / enable / credit made by the CLI within 2 seconds', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const created = JSON.parse((await runCli(['keys', 'create', '--name', 'live', '--credits', '0.5', '--json', '--data-dir', dir])).stdout) as { id: string; key: string }
  const gw = await spawnGateway({ dataDir: dir })
  procs.push(gw)
  const call = () => fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${created.key}` } }).then((r) => r.status)
  const waitFor = async (status: number) => {
    const t0 = Date.now()
    while (Date.now() - t0 < 2000) {
      if ((await call()) === status) return Date.now() - t0
      await Bun.sleep(50)
    }
    throw new Error(`status ${status} not seen within 2 s`)
  }
  expect(await call()).toBe(200)
  expect((await runCli(['keys', 'disable', created.id, '--data-dir', dir])).code).toBe(0)
  expect(await waitFor(401)).toBeLessThan(2000)
  expect((await runCli(['keys', 'enable', created.id, '--data-dir', dir])).code).toBe(0)
  expect(await waitFor(200)).toBeLessThan(2000)
  const credited = await runCli(['keys', 'credit', created.id, '1.5', '--json', '--data-dir', dir])
  expect(JSON.parse(credited.stdout).credits).toBe(2)
  gw.kill('SIGTERM')
  expect(await gw.exited).toBe(0)
})

test('first start with no keys: a generated key is printed once and works; the next start prints none', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const gw = await spawnGateway({ dataDir: dir })
  procs.push(gw)
  expect(gw.key).toMatch(/^sk-sy-/)
  expect((await fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(200)
  expect(gw.output()).toContain('mock provider')
  // a newcomer finds the dashboard and how to sign in to it
  expect(gw.output()).toContain(`dashboard: ${gw.url}/ui   sign in with a gateway key`)
  gw.kill('SIGINT')
  expect(await gw.exited).toBe(0)
  const again = await spawnGateway({ dataDir: dir })
  procs.push(again)
  expect(again.output()).not.toContain('API key')
  again.kill('SIGTERM')
  expect(await again.exited).toBe(0)
})

test('config: YAML with ${ENV} expansion, printed masked; a bad file exits non-zero naming the field', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const file = join(dir, 'switchyard.yaml')
  writeFileSync(file, 'providers:\n  openai:\n    api_key: ${MY_OPENAI_KEY}\n    base_url: http://127.0.0.1:9/v1\nlimits:\n  key_rpm: 42\npricing:\n  discount: 0.25\n')
  const ok = await runCli(['config', '--config', file], { MY_OPENAI_KEY: 'sk-upstream-secret-value' })
  expect(ok.code).toBe(0)
  const cfg = JSON.parse(ok.stdout)
  expect(cfg.limits.keyRpm).toBe(42)
  expect(cfg.pricing.discount).toBe(0.25)
  expect(cfg.providers.openai.baseUrl).toBe('http://127.0.0.1:9/v1')
  expect(ok.stdout).not.toContain('sk-upstream-secret-value')
  expect(cfg.providers.openai.apiKey).toContain('chars')

  // ./switchyard.yaml is picked up from the working directory; SWITCHYARD_CONFIG names another
  writeFileSync(file, 'limits:\n  key_rpm: "many"\n')
  const bad = await runCli(['config', '--config', file])
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain('limits.key_rpm')
  writeFileSync(file, 'limitz: {}\n')
  const unknown = await runCli(['config'], { SWITCHYARD_CONFIG: file })
  expect(unknown.code).not.toBe(0)
  expect(unknown.stderr).toContain('limitz')
  const missingEnv = join(dir, 'env.yaml')
  writeFileSync(missingEnv, 'providers:\n  anthropic:\n    api_key: ${NOT_SET_ANYWHERE}\n')
  const m = await runCli(['config', '--config', missingEnv])
  expect(m.code).not.toBe(0)
  expect(m.stderr).toContain('providers.anthropic.api_key')
})

test('version and usage errors', async () => {
  const v = await runCli(['version'])
  expect(v.stdout.trim()).toBe(pkg.version)
  const u = await runCli(['frobnicate'])
  expect(u.code).toBe(2)
  expect(u.stderr).toContain('unknown command')
})

// A mistyped data dir must not answer "no keys" from a new empty database it just made.
test.skipIf(onPostgres)('keys and batches commands on a data dir with no database are refused naming it; keys create says it makes one', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const typo = join(dir, 'nope')
  for (const args of [['keys', 'list'], ['keys', 'credit', 'key_x', '5'], ['batches', 'watch', 'batch_x']]) {
    const r = await runCli([...args, '--data-dir', typo])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`data dir ${typo} has no database`)
  }
  expect((await runCli(['keys', 'frob', '--data-dir', typo])).stderr).toContain('unknown keys command "frob"')
  const made = await runCli(['keys', 'create', '--name', 'first', '--data-dir', typo])
  expect(made.code).toBe(0)
  expect(made.stderr).toContain(`a new database in data dir ${typo}`)
  const again = await runCli(['keys', 'create', '--name', 'second', '--data-dir', typo])
  expect(again.stderr).not.toContain('a new database')
  expect(JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', typo])).stdout)).toHaveLength(2)
})

// Two serving gateways on one embedded data dir would each hold the credits, limits and batch
// leases in memory of their own: a key would spend its credit twice over and a batch's items
// would run twice. The CLI's commands still run beside the one that serves.
test.skipIf(onPostgres)('one serving gateway per data dir: a second is refused naming it; the CLI runs beside; after a kill -9 the dir is free again', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const first = await spawnGateway({ dataDir: dir })
  procs.push(first)
  const second = await runCli(['serve', '--port', '0', '--data-dir', dir])
  expect(second.code).toBe(1)
  expect(second.stderr).toContain(`data dir ${dir}: another gateway is serving from it`)
  expect(second.stderr).not.toContain('    at ')
  expect((await runCli(['keys', 'create', '--name', 'beside', '--data-dir', dir])).code).toBe(0)
  first.kill('SIGKILL')
  await first.exited
  const after = await spawnGateway({ dataDir: dir })
  procs.push(after)
  expect((await fetch(after.url + '/api/v1/models', { headers: { authorization: `Bearer ${first.key}` } })).status).toBe(200)
  after.kill('SIGTERM')
  expect(await after.exited).toBe(0)
})

test('a start that cannot listen (its port in use) says so in one line, and leaves no key no one was shown', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const busy = Bun.serve({ port: 0, fetch: () => new Response('') })
  try {
    const r = await runCli(['serve', '--port', String(busy.port), '--data-dir', dir])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`switchyard: could not listen on 127.0.0.1:${busy.port}`)
    expect(r.stderr).not.toContain('    at ')
  } finally {
    busy.stop(true)
  }
  const list = await runCli(['keys', 'list', '--json', '--data-dir', dir])
  expect(JSON.parse(list.stdout)).toEqual([])
})

test('a closed terminal (SIGHUP) stops the gateway as SIGTERM does: gracefully, its records written', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const gw = await spawnGateway({ dataDir: dir })
  procs.push(gw)
  const res = await fetch(gw.url + '/api/alpha/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
  })
  const { id } = (await res.json()) as { id: string }
  gw.kill('SIGHUP')
  expect(await gw.exited).toBe(0)
  expect(gw.output()).toContain('"signal":"SIGHUP"')
  const after = await spawnGateway({ dataDir: dir })
  procs.push(after)
  expect((await fetch(`${after.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(200)
  after.kill('SIGTERM')
  expect(await after.exited).toBe(0)
})

// on the embedded database: the shared-store run hands every data dir a PostgreSQL schema
test.skipIf(onPostgres)('a data dir or config the gateway cannot use stops it with one line saying what is wrong, never a stack trace', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const file = join(dir, 'a-file')
  writeFileSync(file, 'x')
  const garbage = join(dir, 'garbage')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(garbage)
  writeFileSync(join(garbage, 'switchyard.db'), Buffer.alloc(4096, 7))
  const cases: [string[], string][] = [
    [['serve', '--port', '0', '--data-dir', file], 'switchyard: a file stands where a directory must be'],
    [['serve', '--port', '0', '--data-dir', garbage], `switchyard: data dir ${garbage}: its database file is not a SQLite database`],
    [['serve', '--port', '0', '--data-dir', join(dir, 'ok'), '--config', dir], 'switchyard: a directory where a file was expected'],
  ]
  for (const [args, said] of cases) {
    const r = await runCli(args)
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toStartWith(said)
  }
  // a database that does not answer: its address said, its password not
  for (const command of ['serve', 'migrate']) {
    const r = await runCli([command, '--port', '0', '--data-dir', join(dir, 'pg')], { SWITCHYARD_DATABASE_URL: 'postgres://u:secret-pw-000@127.0.0.1:1/db' })
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toStartWith('switchyard: PostgreSQL at postgres://u:***@127.0.0.1:1/db: ')
    expect(r.stderr).not.toContain('secret-pw-000')
  }
})
