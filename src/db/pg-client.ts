// PostgreSQL through Bun.SQL and drizzle-orm/bun-sql. Migrated at open from the embedded SQL
// on one reserved connection under a session advisory lock (drizzle's migrator, whose table this
// keeps, takes none): instances started together would otherwise race to create the same tables.
import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import { embedded, type Db, type Storage, type Tables } from './storage.ts'
import { PG_MIGRATIONS } from './migrations.gen.ts'
import { refuseNewerSchema } from './newer-schema.ts'
import { ConfigError, StartError } from '../config/errors.ts'
import * as pgSchema from './pg-schema.ts'
import { PgSql } from './pg-sql.ts'
import { maskUrl } from './pg-url.ts'

/** The advisory lock every instance's migration takes, one per schema (see migratePg). */
const LOCK_KEY = `hashtext('switchyard migrate ' || current_schema())`

export async function openPg(url: string, poolSize = 10): Promise<Storage> {
  // int8 as BigInt (pg-sql.ts turns them into numbers): never confused with a text column
  const client = new SQL({ url, max: poolSize, bigint: true, connectionTimeout: 5, idleTimeout: 30 })
  try {
    await migratePg(client)
  } catch (e) {
    await client.close().catch(() => {})
    // a refusal of the operator's to mend (a schema a newer version migrated) stays one
    if (e instanceof ConfigError) throw new ConfigError(`PostgreSQL at ${maskUrl(url)}: ${e.message}`)
    throw new StartError(`PostgreSQL at ${maskUrl(url)}: ${(e as Error).message}`, { cause: e })
  }
  const db = drizzle({ client, schema: pgSchema })
  return {
    dialect: 'pg',
    // drizzle's pg builder and pg tables, under the SQLite types the stores are written with
    db: db as unknown as Db,
    t: pgSchema as unknown as Tables,
    sql: new PgSql(client),
    pg: client,
    describe: `postgresql ${maskUrl(url)}`,
    async close() {
      await client.close({ timeout: 5 }).catch(() => {})
    },
  }
}

/**
 * What drizzle's migrator does, in its own table (`__drizzle_migrations`: a migration is pending
 * when it is newer than the last one recorded), but sent as one query of many statements: one
 * round trip and one implicit transaction instead of a prepared statement each, which is most of
 * a new schema's set-up time (every gateway of the tests' shared-store run makes one).
 */
async function applyPending(conn: SQL, schema: string): Promise<void> {
  const table = `"${schema.replaceAll('"', '""')}".__drizzle_migrations`
  await conn.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`)
  const [last] = (await conn.unsafe(`SELECT created_at FROM ${table} ORDER BY created_at DESC LIMIT 1`)) as { created_at: unknown }[]
  const after = last ? Number(last.created_at) : -Infinity
  const pending = embedded(PG_MIGRATIONS).filter((m) => after < m.folderMillis)
  if (pending.length === 0) return
  // the hash is hex and the time a number: both written as literals in the text
  const text = pending.flatMap((m) => [...m.sql.map((st) => st.trim()).filter(Boolean), `INSERT INTO ${table} (hash, created_at) VALUES ('${m.hash}', ${m.folderMillis})`]).join('\n;\n')
  // a query of several statements without BEGIN runs as one transaction: all of it or none
  await conn.unsafe(text).simple()
}

/**
 * The migrations on one reserved connection, holding a session advisory lock throughout:
 * instances that start together wait for the first, then find nothing left to do. The tables
 * and drizzle's own migrations table live in the connection's current schema (`public`, or
 * the URL's `?search_path=`), so one database can hold several gateways' schemas.
 */
export async function migratePg(client: SQL): Promise<void> {
  const conn = await client.reserve()
  try {
    const [{ schema }] = (await conn.unsafe('SELECT current_schema() AS schema')) as { schema: string | null }[]
    if (!schema) throw new Error('the search_path names no schema that exists: create it, or leave search_path unset for public')
    await conn.unsafe(`SELECT pg_advisory_lock(${LOCK_KEY})`)
    try {
      const [{ table }] = (await conn.unsafe(`SELECT to_regclass($1) AS table`, [`"${schema.replaceAll('"', '""')}".__drizzle_migrations`])) as { table: string | null }[]
      if (table) {
        const [{ at }] = (await conn.unsafe(`SELECT max(created_at) AS at FROM ${table}`)) as { at: unknown }[]
        refuseNewerSchema(at, PG_MIGRATIONS, `the PostgreSQL schema ${schema}`)
      }
      await applyPending(conn, schema)
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${LOCK_KEY})`)
    }
  } finally {
    conn.release()
  }
}
