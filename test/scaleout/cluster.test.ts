// `cluster: true` says other instances serve beside this one: a gateway told so refuses a
// store only it would see, and says which setting to change.
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, runCli, tempDir } from '../helpers/server.ts'

const dir = tempDir()
afterAll(() => cleanup(dir))

const serve = (yaml: string, env: Record<string, string> = {}) => {
  writeFileSync(join(dir, 'c.yaml'), yaml)
  // the harness would add a test database for --data-dir; these runs choose their own
  return runCli(['serve', '--port', '0', '--config', join(dir, 'c.yaml')], { SWITCHYARD_DATA_DIR: join(dir, 'data'), SWITCHYARD_DATABASE_URL: '', ...env })
}

test('cluster: true on SQLite refuses to start, naming database.url', async () => {
  const r = await serve('cluster: true\n')
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('cluster: true')
  expect(r.stderr).toContain('database.url')
})

test('cluster: true with a database but in-memory limits refuses to start, naming redis.url', async () => {
  // the check stops start-up before any connection: the URL need not answer
  const r = await serve('cluster: true\ndatabase:\n  url: postgres://u:secret-pw@127.0.0.1:1/none\n')
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('redis.url')
  expect(r.stderr).not.toContain('secret-pw')
})

test('SWITCHYARD_CLUSTER=true is the same setting', async () => {
  const r = await serve('{}\n', { SWITCHYARD_CLUSTER: 'true' })
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('database.url')
})

test('database.url that is not PostgreSQL is refused at start, not silently SQLite', async () => {
  const r = await serve('database:\n  url: mysql://x@y/z\n')
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('database.url')
})
