// The shared-store run of the suites: with SWITCHYARD_TEST_DATABASE_URL set (a PostgreSQL
// URL whose role may create databases), every gateway a test starts gets a database of its
// own, named after its data dir, so a restart on the same dir finds the same database and
// no test sees another's rows. Unset, everything runs on SQLite in the data dir.
import { SQL } from 'bun'

export const TEST_DATABASE_URL = process.env.SWITCHYARD_TEST_DATABASE_URL || undefined
export const onPostgres = TEST_DATABASE_URL !== undefined

const made = new Map<string, Promise<string>>()

function nameFor(dataDir: string): string {
  return 'sy_t_' + new Bun.CryptoHasher('sha256').update(dataDir).digest('hex').slice(0, 20)
}

function urlWith(db: string): string {
  const u = new URL(TEST_DATABASE_URL!)
  u.pathname = '/' + db
  return u.toString()
}

/** The database URL for a gateway on `dataDir` (created empty the first time), or undefined on SQLite. */
export async function databaseFor(dataDir: string): Promise<string | undefined> {
  if (!TEST_DATABASE_URL) return undefined
  let p = made.get(dataDir)
  if (!p) {
    p = (async () => {
      const name = nameFor(dataDir)
      const admin = new SQL({ url: TEST_DATABASE_URL, max: 1 })
      try {
        const [row] = await admin.unsafe('SELECT 1 AS one FROM pg_database WHERE datname = $1', [name])
        if (!row) await admin.unsafe(`CREATE DATABASE ${name}`)
      } finally {
        await admin.close()
      }
      return urlWith(name)
    })()
    made.set(dataDir, p)
  }
  return p
}

/** The environment a gateway or CLI on `dataDir` needs (the database URL), or none on SQLite. */
export async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  const url = await databaseFor(dataDir)
  return url ? { SWITCHYARD_DATABASE_URL: url } : {}
}

/** Drops the database of a data dir that is gone. */
export async function dropDatabaseFor(dataDir: string): Promise<void> {
  if (!TEST_DATABASE_URL || !made.has(dataDir)) return
  made.delete(dataDir)
  const admin = new SQL({ url: TEST_DATABASE_URL, max: 1 })
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${nameFor(dataDir)} WITH (FORCE)`)
  } catch {
    // still in use by a process that outlived its test: left for the run's end
  } finally {
    await admin.close()
  }
}
