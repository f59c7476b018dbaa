// PostgreSQL: instances started together on an empty database migrate it once, under the
// advisory lock, and all come up. Needs SWITCHYARD_TEST_DATABASE_URL (skipped without it).
import { afterAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { cleanup, runCli, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

if (!onPostgres) console.log('test/scaleout/migrate.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const schema = 'sy_t_migrate_' + process.pid
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) cleanup(d)
  await dropSchema(schema)
})

test.skipIf(!onPostgres)('four gateways started at once on an empty database: all come up, each migration recorded once', async () => {
  const url = await freshSchema(schema)
  const env = { SWITCHYARD_DATABASE_URL: url, SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-migrate-' + crypto.randomUUID() }
  const gateways: Spawned[] = await Promise.all(
    Array.from({ length: 4 }, () => {
      const dataDir = tempDir()
      dirs.push(dataDir)
      return spawnGateway({ env, dataDir })
    }),
  )
  try {
    for (const g of gateways) {
      const health = await fetch(g.url + '/health')
      expect(health.status).toBe(200)
      const models = await fetch(g.url + '/api/v1/models', { headers: { authorization: `Bearer ${env.SWITCHYARD_BOOTSTRAP_KEY}` } })
      expect(models.status).toBe(200)
    }
    const sql = new SQL({ url, max: 1 })
    try {
      const rows = await sql.unsafe(`SELECT hash FROM ${schema}.__drizzle_migrations`)
      expect(rows.length).toBe(PG_MIGRATIONS.length)
      // one bootstrap key, however many instances saw an empty table at once
      const keys = await sql.unsafe(`SELECT count(*)::int AS n FROM ${schema}.api_keys`)
      expect(keys[0].n).toBe(1)
    } finally {
      await sql.close()
    }
  } finally {
    for (const g of gateways) g.kill()
    await Promise.all(gateways.map((g) => g.exited))
  }
  for (const g of gateways) expect(g.output()).not.toContain('error')
}, 60_000)

test.skipIf(!onPostgres)('migrate, banner and config name PostgreSQL with the password masked', async () => {
  const url = await freshSchema(schema + '_b')
  const dataDir = tempDir()
  dirs.push(dataDir)
  try {
    const migrated = await runCli(['migrate', '--data-dir', dataDir], { SWITCHYARD_DATABASE_URL: url })
    expect(migrated.code).toBe(0)
    expect(migrated.stdout).toContain('postgresql postgres://')
    // DATABASE_URL is read too (SWITCHYARD_DATABASE_URL, when set, wins)
    const config = await runCli(['config', '--data-dir', dataDir], { SWITCHYARD_DATABASE_URL: '', DATABASE_URL: url })
    expect(config.code).toBe(0)
    const secret = `:${new URL(url).password}@`
    expect(config.stdout).not.toContain(secret)
    expect(JSON.parse(config.stdout).stores.database).toBe(`postgresql ${url.replace(secret, ':***@')}`)
    expect(JSON.parse(config.stdout).stores.database).toStartWith('postgresql postgres://')
    const g = await spawnGateway({ env: { SWITCHYARD_DATABASE_URL: url }, dataDir })
    try {
      expect(g.output()).toContain('database: postgresql postgres://')
      expect(g.output()).not.toContain(secret)
    } finally {
      g.kill()
      await g.exited
    }
  } finally {
    await dropSchema(schema + '_b')
  }
}, 60_000)
