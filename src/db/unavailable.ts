// When the database cannot be reached: the request that needed it gets a 503 saying so (not
// a 500), and /health reports the store as down. Bun.SQL reconnects by itself on the next
// query, so nothing here has to bring the gateway back: the next answer does.
import { statSync } from 'node:fs'
import type { Storage } from './client.ts'
import { names } from './columns.ts'
import { apiKeys } from './schema.ts'

const ak = names(apiKeys)
/** The SQLite probe reads a table page: one key's id. */
const READ_PAGE = `SELECT ${ak.id} FROM ${ak.$table} LIMIT 1`

export const STORE_DOWN_MESSAGE = 'The database is unavailable; nothing was changed. Retry shortly'

/**
 * A failure to reach the database, as opposed to an error in a statement: Bun.SQL's
 * connection errors, PostgreSQL's connection-exception class (08…) and shutdown codes (57P0…).
 */
export function isStoreDown(e: unknown, depth = 0): boolean {
  const err = e as { code?: unknown; errno?: unknown; cause?: unknown } | null
  // drizzle wraps the driver's error in its own ("Failed query: …"), the driver's as its cause
  if (err?.cause !== undefined && depth < 3 && isStoreDown(err.cause, depth + 1)) return true
  const code = typeof err?.code === 'string' ? err.code : ''
  const errno = typeof err?.errno === 'string' ? err.errno : ''
  return /^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|CONNECTION_TIMEOUT)/.test(code) || /^(08|57P0[1-3])/.test(errno) || /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)$/.test(code)
}

/**
 * A database that has no room (a full disk or data dir, a quota): SQLite's SQLITE_FULL,
 * PostgreSQL's class 53 (insufficient resources: disk_full 53100). Writes are kept and tried
 * again until it has room, never given up.
 */
export function isStoreFull(e: unknown, depth = 0): boolean {
  const err = e as { code?: unknown; errno?: unknown; cause?: unknown; message?: unknown } | null
  if (err?.cause !== undefined && depth < 3 && isStoreFull(err.cause, depth + 1)) return true
  const code = typeof err?.code === 'string' ? err.code : ''
  const errno = typeof err?.errno === 'string' ? err.errno : ''
  const message = typeof err?.message === 'string' ? err.message : ''
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100' || errno === '53100' || /database or disk is full|No space left on device/.test(message)
}

/** The database cannot take a write for now (away, or without room): what waits for it is kept and tried again. */
export const isStoreAway = (e: unknown): boolean => isStoreDown(e) || isStoreFull(e)

/**
 * A transaction that lost a race with another (PostgreSQL's class 40: a deadlock, a serialization
 * failure; 55P03: a lock not had in time; SQLite's BUSY or LOCKED): nothing about its rows, so the
 * same write may well pass a moment later.
 */
export function isStoreContended(e: unknown, depth = 0): boolean {
  const err = e as { code?: unknown; errno?: unknown; cause?: unknown } | null
  if (err?.cause !== undefined && depth < 3 && isStoreContended(err.cause, depth + 1)) return true
  const code = typeof err?.code === 'string' ? err.code : ''
  const errno = typeof err?.errno === 'string' ? err.errno : ''
  return /^(40|55P03$)/.test(errno) || /^SQLITE_(BUSY|LOCKED)/.test(code)
}

const PROBE_EVERY_MS = 1_000
const PROBE_TIMEOUT_MS = 2_000

/**
 * SQLite is in-process, so its probe runs inline, at most once a second: the header and a table
 * page are read, and the database and WAL files on disk must still be the ones the gateway
 * opened (same inode). An outside process that deleted the WAL under the gateway leaves its
 * connections writing to a file no one else will ever read, while new ones start a fresh WAL.
 */
function sqliteHealth(storage: Storage, onDown?: (why: string) => void): () => { database: 'up' | 'down' } {
  let up = true
  let checkedAt = 0
  const files = storage.file ? [storage.file, `${storage.file}-wal`, `${storage.file}-shm`] : []
  const opened = new Map<string, number>()
  const inode = (f: string) => statSync(f, { throwIfNoEntry: false })?.ino
  for (const f of files) {
    const ino = inode(f)
    if (ino !== undefined) opened.set(f, ino)
  }
  return () => {
    if (Date.now() - checkedAt < PROBE_EVERY_MS) return { database: up ? 'up' : 'down' }
    checkedAt = Date.now()
    const was = up
    let why = ''
    try {
      storage.sqlite?.query('PRAGMA schema_version').get()
      storage.sqlite?.query(READ_PAGE).get()
      const gone = files.find((f) => {
        const now = inode(f)
        if (!opened.has(f) && now !== undefined) opened.set(f, now)
        return now === undefined || now !== opened.get(f)
      })
      up = gone === undefined
      if (gone) why = `${gone} was deleted or replaced under the running gateway: restart it`
    } catch (e) {
      up = false
      why = `it cannot be read (${(e as Error)?.message ?? e})`
    }
    if (was && !up) onDown?.(why)
    return { database: up ? 'up' : 'down' }
  }
}

/**
 * The store's health for /health, answered from the last probe so that /health never waits
 * on the database; a probe runs at most once a second, when asked. SQLite is in-process: up.
 */
export function storeHealth(storage: Storage, onDown?: (why: string) => void): () => { database: 'up' | 'down' } {
  if (storage.dialect === 'sqlite') return sqliteHealth(storage, onDown)
  let up = true
  let checkedAt = 0
  let probing = false
  const probe = async () => {
    probing = true
    try {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS).unref?.())
      await Promise.race([storage.sql.get('SELECT 1 AS one'), timeout])
      up = true
    } catch {
      up = false
    } finally {
      checkedAt = Date.now()
      probing = false
    }
  }
  void probe()
  return () => {
    if (!probing && Date.now() - checkedAt >= PROBE_EVERY_MS) void probe()
    return { database: up ? 'up' : 'down' }
  }
}
