// Configuration for several instances: redis.* and blobs.s3.* from the file or the environment, which store
// each shared concern uses in `switchyard config` and the start-up banner, secrets masked.
// Nothing here needs a running Redis or S3: a gateway starts while Redis is away.
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { onPostgres } from '../helpers/database.ts'
import { cleanup, runCli, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const dirs: string[] = []
const procs: Spawned[] = []
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  for (const d of dirs) cleanup(d)
})

test('unset: memory and disk, as a single gateway always was', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const r = await runCli(['config', '--data-dir', dir])
  expect(r.code).toBe(0)
  const cfg = JSON.parse(r.stdout)
  expect(cfg.redis).toBeNull()
  expect(cfg.s3).toBeNull()
  // every database setting is shown, not only its (masked) URL
  expect(cfg.database).toMatchObject({ takeAhead: true })
  // the suites' PostgreSQL run gives every CLI a database: then credits and the bus are on it
  const pg = onPostgres ? cfg.stores.database : null
  if (onPostgres) expect(pg).toStartWith('postgresql postgres://')
  expect(cfg.stores).toEqual({
    database: pg ?? `sqlite ${dir}/switchyard.db`,
    rate_limits: 'memory (this instance only)',
    credits: pg ? `${pg} (reservations shared)` : 'memory + database (this instance only)',
    change_bus: pg ? `${pg} LISTEN/NOTIFY` : 'memory (this instance; the data dir is polled every second)',
    blobs: `disk ${dir}/blobs`,
  })
}, 30_000)

test('from the environment: REDIS_URL and the S3_* / AWS_* names; passwords and secrets masked', async () => {
  const r = await runCli(['config'], {
    REDIS_URL: 'redis://app:redis-password-123@10.0.0.5:6379/2',
    S3_BUCKET: 'sy-files',
    S3_ENDPOINT: 'http://minio:9000',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEKEY',
    AWS_SECRET_ACCESS_KEY: 's3-secret-value-456',
  })
  expect(r.code).toBe(0)
  expect(r.stdout).not.toContain('redis-password-123')
  expect(r.stdout).not.toContain('s3-secret-value-456')
  expect(r.stdout).not.toContain('AKIAEXAMPLEKEY')
  const cfg = JSON.parse(r.stdout)
  expect(cfg.redis).toMatchObject({ url: 'redis://app:***@10.0.0.5:6379/2', onError: 'deny', timeoutMs: 500 })
  expect(cfg.s3).toMatchObject({ bucket: 'sy-files', endpoint: 'http://minio:9000', region: 'eu-west-1', pathStyle: true, redirectDownloads: false })
  expect(cfg.stores.rate_limits).toBe('redis redis://app:***@10.0.0.5:6379/2 (on_error: deny)')
  expect(cfg.stores.blobs).toBe('s3 bucket sy-files at http://minio:9000')
}, 30_000)

test("blobs.s3: the S3_* variables win over the file, as every setting's; the ambient AWS_* ones only fill what both leave out", () => {
  const dir = tempDir()
  dirs.push(dir)
  const file = join(dir, 'switchyard.yaml')
  writeFileSync(file, 'blobs:\n  s3:\n    bucket: file-bucket\n    endpoint: http://file:9000\n    region: auto\n    prefix: fromfile\n')
  const env = { S3_BUCKET: 'env-bucket', S3_ENDPOINT: 'http://env:9000', SWITCHYARD_S3_PREFIX: 'fromenv', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIAAMBIENT' }
  expect(loadConfig({ flags: { config: file }, env, cwd: dir }).s3).toMatchObject({ bucket: 'env-bucket', endpoint: 'http://env:9000', prefix: 'fromenv', region: 'auto', accessKeyId: 'AKIAAMBIENT' })
  expect(loadConfig({ flags: { config: file }, env: { ...env, S3_REGION: 'eu-west-3' }, cwd: dir }).s3?.region).toBe('eu-west-3')
  expect(loadConfig({ flags: { config: file }, env: {}, cwd: dir }).s3).toMatchObject({ bucket: 'file-bucket', endpoint: 'http://file:9000', prefix: 'fromfile', region: 'auto' })
})

test('from the file: redis and blobs.s3; a bad value names its field', () => {
  const dir = tempDir()
  dirs.push(dir)
  const file = join(dir, 'switchyard.yaml')
  writeFileSync(file, 'redis:\n  url: rediss://cache:6380\n  on_error: allow\n  timeout_ms: 250\nblobs:\n  s3:\n    bucket: b1\n    redirect_downloads: true\n    presign_ttl_s: 60\n')
  const c = loadConfig({ flags: { config: file }, env: {}, cwd: dir })
  expect(c.redis).toEqual({ url: 'rediss://cache:6380', onError: 'allow', timeoutMs: 250, prefix: 'switchyard:', takeAhead: true })
  writeFileSync(file, 'redis:\n  url: redis://cache:6379\n  take_ahead: false\n')
  expect(loadConfig({ flags: { config: file }, env: {}, cwd: dir }).redis?.takeAhead).toBe(false)
  expect(loadConfig({ flags: { config: file }, env: { SWITCHYARD_REDIS_TAKE_AHEAD: 'true' }, cwd: dir }).redis?.takeAhead).toBe(true)
  writeFileSync(file, 'redis:\n  url: redis://cache:6379\n  take_ahead: sometimes\n')
  expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/take_ahead/)
  // without Redis, the database's ledger takes ahead too: on unless turned off
  expect(c.database.takeAhead).toBe(true)
  writeFileSync(file, 'database:\n  url: postgres://db/sy\n  take_ahead: false\n')
  expect(loadConfig({ flags: { config: file }, env: {}, cwd: dir }).database).toEqual({ url: 'postgres://db/sy', takeAhead: false, poolSize: 10 })
  expect(loadConfig({ flags: { config: file }, env: { SWITCHYARD_DATABASE_TAKE_AHEAD: 'true' }, cwd: dir }).database.takeAhead).toBe(true)
  writeFileSync(file, 'database:\n  take_ahead: 1\n')
  expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/take_ahead/)
  // the request thread's pool: from the file or the environment, a whole number 1-1000
  writeFileSync(file, 'database:\n  url: postgres://db/sy\n  pool_size: 3\n')
  expect(loadConfig({ flags: { config: file }, env: {}, cwd: dir }).database.poolSize).toBe(3)
  expect(loadConfig({ flags: { config: file }, env: { SWITCHYARD_DATABASE_POOL_SIZE: '25' }, cwd: dir }).database.poolSize).toBe(25)
  for (const bad of ['0', '2.5', '1001', 'ten']) expect(() => loadConfig({ flags: { config: file }, env: { SWITCHYARD_DATABASE_POOL_SIZE: bad }, cwd: dir })).toThrow(/SWITCHYARD_DATABASE_POOL_SIZE/)
  for (const bad of ['0', '2.5', '1001']) {
    writeFileSync(file, `database:\n  pool_size: ${bad}\n`)
    expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/database\.pool_size/)
  }
  expect(c.s3).toMatchObject({ bucket: 'b1', redirectDownloads: true, presignTtlS: 60, pathStyle: false })
  writeFileSync(file, 'redis:\n  url: http://cache:6379\n')
  expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/redis\.url/)
  writeFileSync(file, 'redis:\n  on_error: maybe\n')
  expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/redis\.on_error/)
  writeFileSync(file, 'blobs:\n  s3:\n    region: x\n')
  expect(() => loadConfig({ flags: { config: file }, env: {}, cwd: dir })).toThrow(/blobs\.s3\.bucket/)
})

test('the banner names each concern\'s store; a gateway starts even while Redis is away', async () => {
  const g = await spawnGateway({ env: { REDIS_URL: 'redis://:banner-secret@127.0.0.1:1', SWITCHYARD_REDIS_TIMEOUT_MS: '100' } })
  procs.push(g)
  dirs.push(g.dataDir)
  const out = g.output()
  expect(out).toContain('rate limits → redis redis://:***@127.0.0.1:1 (on_error: deny)')
  expect(out).toContain('credits     → redis')
  expect(out).toContain('change bus  → redis')
  expect(out).toContain(`blobs       → disk ${g.dataDir}/blobs`)
  expect(out).not.toContain('banner-secret')
  // and it answers: 503 for what needs Redis, 200 for what does not
  expect((await fetch(g.url + '/health')).status).toBe(200)
  const r = await fetch(g.url + '/api/v1/models', { headers: { authorization: 'Bearer sk-sy-whatever' } })
  expect(r.status).toBe(503)
  expect(((await r.json()) as { error: string }).error).toContain('Redis')
}, 30_000)
