// A data dir a newer Switchyard migrated, opened by this one: it refuses to start, naming why.
// Its migrator would find nothing to do, start, then fail on tables it does not know and lose
// what it accepted (a row written to a table since dropped) — what an older version did.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { join } from 'node:path'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { cleanup, runCli, tempDir } from '../helpers/server.ts'

const dirs: string[] = []
const schema = 'sy_t_newer_' + process.pid
afterAll(async () => {
  for (const d of dirs) cleanup(d)
  if (onPostgres) await dropSchema(schema)
})

test('SQLite: a database migrated past this version is refused at start, and left as it was', async () => {
  const dataDir = tempDir()
  dirs.push(dataDir)
  const embedded = { SWITCHYARD_DATABASE_URL: '', DATABASE_URL: '' }
  expect((await runCli(['migrate', '--data-dir', dataDir], embedded)).code).toBe(0)
  const db = new Database(join(dataDir, 'switchyard.db'))
  db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', ['from-a-newer-version', MIGRATIONS.at(-1)!.when + 1000])
  // a text value (SQLite sorts text above every number) hides nothing
  db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', ['garbled', 'abc'])
  db.close()
  for (const command of ['migrate', 'serve']) {
    const r = await runCli([command, '--data-dir', dataDir, '--port', '0'], embedded)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('was migrated by a newer Switchyard')
    expect(r.stderr).toContain(MIGRATIONS.at(-1)!.tag)
  }
  const after = new Database(join(dataDir, 'switchyard.db'))
  expect((after.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(MIGRATIONS.length + 2)
  after.close()
})

test.skipIf(!onPostgres)('PostgreSQL: a schema migrated past this version is refused at start', async () => {
  const url = await freshSchema(schema)
  const dataDir = tempDir()
  dirs.push(dataDir)
  expect((await runCli(['migrate', '--data-dir', dataDir], { SWITCHYARD_DATABASE_URL: url })).code).toBe(0)
  const sql = new SQL({ url, max: 1 })
  await sql.unsafe(`INSERT INTO ${schema}.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-version', ${PG_MIGRATIONS.at(-1)!.when + 1000})`)
  await sql.close()
  const r = await runCli(['migrate', '--data-dir', dataDir], { SWITCHYARD_DATABASE_URL: url })
  expect(r.code).toBe(1)
  expect(r.stderr).toContain(`the PostgreSQL schema ${schema} was migrated by a newer Switchyard`)
  // one line, as an operator's error is said, not a stack
  expect(r.stderr.trim()).toStartWith('switchyard: PostgreSQL at')
  expect(r.stderr).not.toContain('pg-client.ts')
})
