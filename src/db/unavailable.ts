// When the database cannot be reached: the request that needed it gets a 503 saying so (not
// a 500), and /health reports the store as down. Bun.SQL reconnects by itself on the next
// query, so nothing here has to bring the gateway back: the next answer does.
import type { Storage } from './client.ts'

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

const PROBE_EVERY_MS = 1_000
const PROBE_TIMEOUT_MS = 2_000

/**
 * The store's health for /health, answered from the last probe so that /health never waits
 * on the database; a probe runs at most once a second, when asked. SQLite is in-process: up.
 */
export function storeHealth(storage: Storage): () => { database: 'up' | 'down' } {
  if (storage.dialect === 'sqlite') return () => ({ database: 'up' })
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
