// One SQLite file in the data dir, WAL mode, migrated at open from the embedded SQL.
import { Database } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { MIGRATIONS } from './migrations.gen.ts'
import * as schema from './schema.ts'

export type Db = BunSQLiteDatabase<typeof schema>

export interface Storage {
  db: Db
  sqlite: Database
  /** Path of the database file. */
  file: string
  close(): void
}

export function openStorage(dataDir: string): Storage {
  // Keys' hashes, records and uploads live here: a dir made here is owner-only (D10; a umask
  // only takes bits away). A dir the operator made is left as they made it (it may be shared,
  // or their working dir): what the gateway puts in it is owner-only on its own.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const file = join(dataDir, 'switchyard.db')
  // created owner-only before SQLite opens it, so it is never readable by others, not even
  // for the moment between SQLite creating it and the chmod below
  closeSync(openSync(file, 'a', 0o600))
  const sqlite = new Database(file, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  // SQLite creates the -wal and -shm files with the database file's mode
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600)
  sqlite.exec('PRAGMA busy_timeout = 5000')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  const db = drizzle({ client: sqlite, schema })
  migrate(db)
  return {
    db,
    sqlite,
    file,
    close() {
      try {
        sqlite.exec('PRAGMA optimize')
      } catch {}
      sqlite.close()
    },
  }
}

/** drizzle's own migrator, fed from memory instead of a folder. */
function migrate(db: Db) {
  const migrations = MIGRATIONS.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: new Bun.CryptoHasher('sha256').update(m.sql).digest('hex'),
  }))
  // dialect and session are drizzle internals with no public type
  const anyDb = db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown }
  anyDb.dialect.migrate(migrations, anyDb.session, { migrationsFolder: '(embedded)' })
}
