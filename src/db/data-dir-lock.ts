// One serving gateway per embedded data dir. Two `serve` processes on one SQLite data dir each
// keep their own credit holds, rate limits and batch leases in memory: a key spent its credit
// twice over, a batch's items ran twice, and one instance's start-up swept the other's uploads
// in progress away. The second is refused at start. The lock is SQLite's own (a POSIX lock on
// a file of its own, `serve.lock`): the system lets it go with the process, kill -9 included,
// and it holds across containers that share the volume. The CLI's commands take no lock: they
// are meant to run beside the server. Instances configured to share stores (PostgreSQL, Redis,
// a bucket) are set up to run beside each other, and take none either. The same kind of lock,
// on `batches.lock`, picks the one process that runs the batches of a shared SQLite data dir
// (batches/runner-lock.ts).
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config/errors.ts'
import type { Config } from '../config/load.ts'

export interface DataDirLock {
  release(): void
}

/** Whether this configuration lets other gateways serve from the data dir beside this one (it shares a store with them): then no `serve.lock`. */
export function sharesDataDir(config: Pick<Config, 'database' | 'redis' | 's3'>): boolean {
  return !!(config.database.url || config.redis || config.s3)
}

export function lockDataDir(dataDir: string): DataDirLock {
  const lock = tryLockFile(dataDir, 'serve.lock')
  if (!lock) {
    throw new ConfigError(`data dir ${dataDir}: another gateway is serving from it (${join(dataDir, 'serve.lock')} is locked); stop it first, or give this one a data dir of its own (SWITCHYARD_DATA_DIR)`)
  }
  return lock
}

/** The data dir's lock file `name`, held until released or until this process ends; null while another process (or connection) holds it. */
export function tryLockFile(dataDir: string, name: string): DataDirLock | null {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const file = join(dataDir, name)
  const db = new Database(file, { create: true })
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
  } catch (e) {
    db.close()
    const code = (e as { code?: string })?.code
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return null
    throw e
  }
  let held = true
  return {
    release() {
      if (!held) return
      held = false
      try {
        db.exec('ROLLBACK')
      } catch {
        // nothing to roll back
      }
      db.close()
    },
  }
}
