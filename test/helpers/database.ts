// The shared-store run of the suites: with SWITCHYARD_TEST_DATABASE_URL set (a PostgreSQL
// URL whose role may create schemas in its database), every gateway a test starts gets a
// schema of its own (`?search_path=`), named after its data dir, so a restart on the same dir
// finds the same tables and no test sees another's rows. (A schema is made in milliseconds;
// a database takes seconds.) Unset, everything runs on SQLite in the data dir.
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { migratePg } from '../../src/db/pg-client.ts'
import { PgSql } from '../../src/db/pg-sql.ts'
import type { Sql } from '../../src/db/sql.ts'
import { SqliteSql } from '../../src/db/sqlite-sql.ts'

export const TEST_DATABASE_URL = process.env.SWITCHYARD_TEST_DATABASE_URL || undefined
export const onPostgres = TEST_DATABASE_URL !== undefined

const made = new Map<string, Promise<string>>()
let admin: SQL | undefined

function nameFor(dataDir: string): string {
  return 'sy_t_' + new Bun.CryptoHasher('sha256').update(dataDir).digest('hex').slice(0, 20)
}

/** The test database URL with its search_path set to `schema`. */
export function urlWithSchema(schema: string): string {
  const u = new URL(TEST_DATABASE_URL!)
  u.searchParams.set('search_path', schema)
  return u.toString()
}

function adminSql(): SQL {
  admin ??= new SQL({ url: TEST_DATABASE_URL!, max: 2, idleTimeout: 5 })
  return admin
}

/**
 * While this test process runs, it holds a shared advisory lock on a connection of its own:
 * `npm test` sweeps the schemas earlier runs left behind only when it can take that lock
 * exclusively, so a second run on the same database never drops a running one's schemas.
 */
export const RUN_LOCK = 7_310_013
let runLock: Promise<unknown> | undefined
function holdRunLock(): Promise<unknown> {
  runLock ??= new SQL({ url: TEST_DATABASE_URL!, max: 1, idleTimeout: 0 }).unsafe(`SELECT pg_advisory_lock_shared(${RUN_LOCK})`)
  return runLock
}

/** A fresh, empty schema (dropped first if a crashed run left it). */
export async function freshSchema(name: string): Promise<string> {
  await holdRunLock()
  const sql = adminSql()
  await sql.unsafe(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
  await sql.unsafe(`CREATE SCHEMA ${name}`)
  return urlWithSchema(name)
}

/**
 * Schemas migrated ahead, while the tests wait on other things: a new schema's tables take
 * PostgreSQL a few hundred milliseconds to make, and the shared-store run starts hundreds of
 * gateways. One is renamed to the name a data dir asks for (its tables go with it); the gateway
 * then finds nothing to migrate, as on a restart. Those left at the end are swept by the next run.
 */
const AHEAD = 2
const ahead: Promise<string | undefined>[] = []
let migrator: SQL | undefined
let lastMigration: Promise<unknown> = Promise.resolve()
function migrateAhead(): Promise<string | undefined> {
  const name = 'sy_t_ahead_' + crypto.randomUUID().replaceAll('-', '').slice(0, 16)
  // every schema made ahead on the same one connection, one schema at a time: a connection is a
  // server process (~20 ms of its CPU here); migratePg reserves that pool's only connection,
  // whose search_path is set first
  const made = lastMigration.then(async () => {
    await freshSchema(name)
    migrator ??= new SQL({ url: TEST_DATABASE_URL!, max: 1, idleTimeout: 5 })
    await migrator.unsafe(`SET search_path TO ${name}`)
    await migratePg(migrator)
    return name
  })
  lastMigration = made.catch(() => {})
  return made.catch(() => undefined)
}

/** A schema named `name` with every migration applied: one migrated ahead if there is one. */
async function migratedSchema(name: string): Promise<string> {
  // a drop of a schema of that name still under way goes first: it would take the new one with it
  await dropping.get(name)
  while (ahead.length < AHEAD) ahead.push(migrateAhead())
  const ready = await ahead.shift()!
  ahead.push(migrateAhead())
  if (!ready) return freshSchema(name)
  const sql = adminSql()
  await sql.unsafe(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
  await sql.unsafe(`ALTER SCHEMA ${ready} RENAME TO ${name}`)
  return urlWithSchema(name)
}

/** The database URL for a gateway on `dataDir` (its schema made and migrated the first time), or undefined on SQLite. */
export async function databaseFor(dataDir: string): Promise<string | undefined> {
  if (!TEST_DATABASE_URL) return undefined
  let p = made.get(dataDir)
  if (!p) made.set(dataDir, (p = migratedSchema(nameFor(dataDir))))
  return p
}

/**
 * A test gateway's pool of connections. Each new PostgreSQL connection is a process of the
 * server's (~20 ms of its CPU here) that then reads the catalog of every table it touches; a
 * gateway's start and its first requests fill a pool of the default 10 in bursts, and the
 * shared-store run starts hundreds of gateways for a second or two each, beside another run on
 * two cores: 3 took a third off that run's CPU. A test of its own pool sets its own; the
 * scale-out suites, which compose their own database env, keep the default.
 */
const TEST_POOL_SIZE = '3'

/** The environment a gateway or CLI on `dataDir` needs (the database URL and pool), or none on SQLite. */
export async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  const url = await databaseFor(dataDir)
  return url ? { SWITCHYARD_DATABASE_URL: url, SWITCHYARD_DATABASE_POOL_SIZE: TEST_POOL_SIZE } : {}
}

/**
 * Drops of schemas whose gateways have stopped, run one at a time on a connection of their own
 * while the tests go on: a drop of a schema's few dozen tables takes PostgreSQL a few hundred
 * milliseconds, which each gateway's stop waited for (hundreds of them in the shared-store run).
 * By name, so that a schema made again under the same name waits for its drop first. Those a
 * test process's exit cuts short are swept by the next run, as are a killed run's.
 */
const dropping = new Map<string, Promise<void>>()
let dropper: SQL | undefined
let lastDrop: Promise<unknown> = Promise.resolve()

/** Drops the schema of a data dir that is gone: started here, done in the background (above). */
export async function dropDatabaseFor(dataDir: string): Promise<void> {
  if (!TEST_DATABASE_URL || !made.has(dataDir)) return
  const name = nameFor(dataDir)
  const p = made.get(dataDir)!.catch(() => {})
  made.delete(dataDir)
  dropper ??= new SQL({ url: TEST_DATABASE_URL!, max: 1, idleTimeout: 5 })
  const sql = dropper
  const drop = (lastDrop = Promise.all([lastDrop, p]).then(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(
    () => {},
    () => {},
  ))
  dropping.set(name, drop)
  void drop.then(() => dropping.get(name) === drop && dropping.delete(name))
}

export async function dropSchema(name: string): Promise<void> {
  await adminSql()
    .unsafe(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
    .catch(() => {})
}

/**
 * The database of the gateway on `dataDir`, opened from outside it (as an operator would):
 * its SQLite file, or its PostgreSQL schema. Read and write through the store's own seam.
 */
export async function openDatabaseOf(dataDir: string, opts: { readonly?: boolean } = {}): Promise<{ sql: Sql; close(): Promise<void> }> {
  const url = await databaseFor(dataDir)
  if (url) {
    const client = new SQL({ url, max: 2, bigint: true })
    return { sql: new PgSql(client), close: () => client.close() }
  }
  const db = new Database(join(dataDir, 'switchyard.db'), opts.readonly ? { readonly: true } : {})
  return { sql: new SqliteSql(db), close: async () => db.close() }
}

/**
 * Makes every insert into generations fail, in the database's own way (a trigger); returns the
 * undo. With `replyId`, only the records of that reply id.
 */
export async function failGenerationWrites(sql: Sql, as: 'error' | 'full' = 'error', replyId?: string): Promise<() => Promise<void>> {
  // 'full': the failure a full database gives (SQLite's message, PostgreSQL's disk_full), which
  // the recorder tries again until it has room, never giving the records up
  const message = as === 'full' ? 'database or disk is full (simulated)' : 'simulated write failure'
  const only = replyId === undefined ? '' : ` WHEN (NEW.reply_id = '${replyId.replaceAll("'", "''")}')`
  if (sql.dialect === 'sqlite') {
    await sql.run(`CREATE TEMP TRIGGER test_fail_writes BEFORE INSERT ON main.generations${only} BEGIN SELECT RAISE(ABORT, '${message}'); END`)
    return async () => void (await sql.run('DROP TRIGGER test_fail_writes'))
  }
  const code = as === 'full' ? ` USING ERRCODE = '53100'` : ''
  await sql.run(`CREATE FUNCTION test_fail_writes() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION '${message}'${code}; END $$ LANGUAGE plpgsql`)
  await sql.run(`CREATE TRIGGER test_fail_writes BEFORE INSERT ON generations FOR EACH ROW${only} EXECUTE FUNCTION test_fail_writes()`)
  return async () => {
    await sql.run('DROP TRIGGER test_fail_writes ON generations')
    await sql.run('DROP FUNCTION test_fail_writes()')
  }
}

/**
 * Fills a SQLite database as a full disk would (SQLITE_FULL): its page count capped just past
 * what it has, and the room left in it taken by a filler table. Returns the undo.
 */
export function fillSqlite(db: Database): () => void {
  const pages = (db.query('PRAGMA page_count').get() as { page_count: number }).page_count
  db.exec(`PRAGMA max_page_count = ${pages + 2}`)
  db.exec('CREATE TABLE sy_filler (x BLOB)')
  for (const size of [512, 64, 8]) {
    try {
      for (;;) db.exec(`INSERT INTO sy_filler VALUES (randomblob(${size}))`)
    } catch {}
  }
  return () => {
    db.exec('DROP TABLE sy_filler')
    db.exec('PRAGMA max_page_count = 4294967294')
  }
}
