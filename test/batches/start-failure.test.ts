// A start that fails after the batch service started (its port in use, or anything later) lets
// go of what it took before it says so: the data dir's batch runner lock (`batches.lock`) and its
// serve lock, so another gateway on the same data dir takes over at once, not when this process
// exits (an embedding process, or a supervisor that retries in-process, may live on for long).
import { afterAll, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/load.ts'
import { RUNNER_LOCK } from '../../src/batches/runner-lock.ts'
import { tryLockFile } from '../../src/db/data-dir-lock.ts'
import { createLogger } from '../../src/http/log.ts'
import { startServer } from '../../src/server.ts'
import { onPostgres } from '../helpers/database.ts'
import { cleanup, tempDir } from '../helpers/server.ts'

// the locks are the SQLite data dir's (on PostgreSQL the instances share items under leases)
const dirs: string[] = []
afterAll(() => dirs.forEach(cleanup))

function start(port: number) {
  const dataDir = tempDir('switchyard-start-fails-')
  dirs.push(dataDir)
  const key = 'sk-sy-fails-' + crypto.randomUUID().replaceAll('-', '')
  const config = loadConfig({ flags: { port: String(port), 'data-dir': dataDir }, env: { SWITCHYARD_BOOTSTRAP_KEY: key }, cwd: dataDir })
  return { dataDir, started: startServer(config, createLogger('silent')) }
}

/** Each of the data dir's locks can be taken by another at once (and is let go again). */
function locksFree(dataDir: string) {
  for (const name of [RUNNER_LOCK, 'serve.lock']) {
    const lock = tryLockFile(dataDir, name)
    expect({ name, free: lock !== null }).toEqual({ name, free: true })
    lock?.release()
  }
}

test.skipIf(onPostgres)('a start that cannot listen (its port in use) has let go of the data dir\'s locks when it fails', async () => {
  const busy = Bun.serve({ port: 0, fetch: () => new Response('') })
  try {
    const { dataDir, started } = start(busy.port!)
    expect(await started.then(() => 'started', (e: Error) => e.message)).toContain('could not listen')
    locksFree(dataDir)
  } finally {
    busy.stop(true)
  }
})

test.skipIf(onPostgres)('a start that fails once it listens lets go of the locks and the port before it fails', async () => {
  const probe = Bun.serve({ port: 0, fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  process.env.SWITCHYARD_TEST_FAIL_START_AFTER_LISTEN = '1'
  let outcome: string
  let dataDir: string
  try {
    const s = start(port)
    dataDir = s.dataDir
    outcome = await s.started.then(() => 'started', (e: Error) => e.message)
  } finally {
    delete process.env.SWITCHYARD_TEST_FAIL_START_AFTER_LISTEN
  }
  expect(outcome).toContain('start failed on purpose')
  locksFree(dataDir)
  // the port is free again too
  const again = Bun.serve({ port, fetch: () => new Response('') })
  again.stop(true)
})
