// What a store holds of the database, whichever it is (SQLite or PostgreSQL): the connection's
// shape every store uses, and the embedded migrations as drizzle's migrator takes them.
import type { Database } from 'bun:sqlite'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import type { MIGRATIONS } from './migrations.gen.ts'
import type * as schema from './schema.ts'
import type { Dialect, Sql } from './sql.ts'

/**
 * drizzle over either dialect. Typed as the SQLite one: the stores only use the builder calls
 * both dialects share (select/insert/update/delete, `returning`, awaited), with `t`'s tables.
 */
export type Db = BunSQLiteDatabase<typeof schema>
export type Tables = typeof schema

export interface Storage {
  dialect: Dialect
  db: Db
  t: Tables
  sql: Sql
  /** PostgreSQL only: the client (LISTEN/NOTIFY). */
  pg?: import('bun').SQL
  /** SQLite only: the connection (checkpoints, pragmas). */
  sqlite?: Database
  /** SQLite only: the database file. */
  file?: string
  /** What the banner and `switchyard config` show (no secret). */
  describe: string
  close(): Promise<void>
}

export interface StorageOptions {
  dataDir: string
  /** postgres:// URL: PostgreSQL instead of the data dir's SQLite file. */
  databaseUrl?: string
  /** Connections in the PostgreSQL pool. */
  poolSize?: number
}

/** The embedded migrations as drizzle's migrator takes them. */
export function embedded(list: typeof MIGRATIONS) {
  return list.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: new Bun.CryptoHasher('sha256').update(m.sql).digest('hex'),
  }))
}
