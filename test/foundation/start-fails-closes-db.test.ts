// A start that fails after the database was opened and before the services hold it (the
// PostgreSQL ledger's `own` refused, here by a test hook) closes the database before it says so:
// an embedding process, or a supervisor that retries in-process, would otherwise keep a pool of
// connections open per failed start. Counted in pg_stat_activity by an application_name of the
// test's own, so other tests on the same server never count.
import { SQL } from 'bun'
import { afterAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/load.ts'
import { createLogger } from '../../src/http/log.ts'
import { buildServices } from '../../src/server.ts'
import { databaseFor, dropDatabaseFor, onPostgres, TEST_DATABASE_URL } from '../helpers/database.ts'
import { cleanup, tempDir } from '../helpers/server.ts'

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) {
    await dropDatabaseFor(d)
    cleanup(d)
  }
})

/** Connections with this application name, polled until none are left (a closed one leaves the view a moment later). */
async function connections(app: string, untilNone = false): Promise<number> {
  const admin = new SQL({ url: TEST_DATABASE_URL!, max: 1 })
  try {
    for (const until = Date.now() + 3_000; ; await Bun.sleep(50)) {
      const [row] = (await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${app}`) as { n: number }[]
      if (!untilNone || row!.n === 0 || Date.now() > until) return row!.n
    }
  } finally {
    await admin.close()
  }
}

describe.skipIf(!onPostgres)('a start that fails before its services are assembled', () => {
  test('the PostgreSQL ledger refused: no connection of it is left open', async () => {
    const dataDir = tempDir('start-fails-db-')
    dirs.push(dataDir)
    const app = `sy-start-fails-${crypto.randomUUID().slice(0, 8)}`
    const url = new URL((await databaseFor(dataDir))!)
    url.searchParams.set('application_name', app)
    const config = loadConfig({ flags: { port: '0', 'data-dir': dataDir }, env: { SWITCHYARD_DATABASE_URL: url.toString() }, cwd: dataDir })
    expect(await connections(app)).toBe(0)
    process.env.SWITCHYARD_TEST_FAIL_LEDGER_OWN = '1'
    let outcome: string
    try {
      outcome = await buildServices(config, createLogger('silent')).then(() => 'started', (e: Error) => e.message)
    } finally {
      delete process.env.SWITCHYARD_TEST_FAIL_LEDGER_OWN
    }
    expect(outcome).toContain('refused on purpose')
    expect(await connections(app, true)).toBe(0)
  }, 30_000)
})
