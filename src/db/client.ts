// The metadata store: one SQLite file in the data dir (WAL mode) by default, or PostgreSQL
// when a database URL is configured (pg-client.ts). Either way it is migrated at open from
// the SQL embedded in the binary, and the stores reach it through `sql` (sql.ts) or drizzle
// with this dialect's tables (`t`).
import { Database } from 'bun:sqlite'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { MIGRATIONS } from './migrations.gen.ts'
import { refuseNewerSchema } from './newer-schema.ts'
import * as schema from './schema.ts'
import { embedded, type Db, type Storage, type StorageOptions } from './storage.ts'
import { SqliteSql } from './sqlite-sql.ts'

export type { Db, Storage, StorageOptions, Tables } from './storage.ts'

export async function openStorage(opts: StorageOptions | string): Promise<Storage> {
  const o = typeof opts === 'string' ? { dataDir: opts } : opts
  if (o.databaseUrl) {
    const { openPg } = await import('./pg-client.ts')
    return openPg(o.databaseUrl, o.poolSize)
  }
  return openSqlite(o.dataDir)
}

export function openSqlite(dataDir: string): Storage {
  // Keys' hashes, records and uploads live here: a dir made here is owner-only (a umask
  // only takes bits away). A dir the operator made is left as they made it (it may be shared,
  // or their working dir): what the gateway puts in it is owner-only on its own.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const file = join(dataDir, 'switchyard.db')
  // Created owner-only before SQLite opens it, so it is never readable by others, not even
  // for the moment between SQLite creating it and the chmod below. Only when it does not exist
  // yet ('wx' opens nothing otherwise): closing any descriptor of the file drops every POSIX
  // lock this process holds on it, and a process whose connections (a batch worker's, the
  // checkpoint worker's) then hold no lock lets an outside sqlite3 or CLI checkpoint and
  // delete the WAL under it.
  createOwnerOnly(file)
  const sqlite = new Database(file, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  // SQLite creates the -wal and -shm files with the database file's mode
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600)
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  const db = drizzle({ client: sqlite, schema })
  try {
    const recorded = sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
    // (numbers only: SQLite sorts a text value above every number)
    if (recorded) refuseNewerSchema((sqlite.query("SELECT max(created_at) AS at FROM __drizzle_migrations WHERE typeof(created_at) IN ('integer', 'real')").get() as { at: unknown }).at, MIGRATIONS, `the database ${file}`)
    // a migration that fails closes the file too, as openPg closes its pool
    migrate(db)
  } catch (e) {
    sqlite.close()
    throw e
  }
  return {
    dialect: 'sqlite',
    db,
    t: schema,
    sql: new SqliteSql(sqlite),
    sqlite,
    file,
    describe: `sqlite ${file}`,
    async close() {
      try {
        sqlite.exec('PRAGMA optimize')
      } catch {}
      sqlite.close()
    },
  }
}

function createOwnerOnly(file: string) {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o600)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return
    throw e
  }
  closeSync(fd)
}

/** drizzle's own migrator, fed from memory instead of a folder. */
function migrate(db: Db) {
  // dialect and session are drizzle internals with no public type
  const anyDb = db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown }
  anyDb.dialect.migrate(embedded(MIGRATIONS), anyDb.session, { migrationsFolder: '(embedded)' })
}
