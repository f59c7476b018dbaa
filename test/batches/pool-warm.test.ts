// The batch worker pool started ahead of a claim (cluster mode: a claim is taken for sent, so
// none is made before the workers can take it) stops again after its idle time when no job came:
// an instance kept out of a batch by the others kept its workers, and their database services,
// for ever.
import { afterAll, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/load.ts'
import { createLogger } from '../../src/http/log.ts'
import { WorkerPool } from '../../src/batches/pool.ts'
import { openSqlite } from '../../src/db/client.ts'
import { cleanup, tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-pool-warm-')
afterAll(() => cleanup(dir))

test('workers started by warm() with no job to follow stop after the idle time', async () => {
  const config = loadConfig({ flags: { 'data-dir': dir } as any, env: { SWITCHYARD_DATA_DIR: dir }, cwd: dir })
  const storage = openSqlite(config.dataDir)
  const pool = new WorkerPool({ size: 2, config, log: createLogger('error'), idleMs: 1_500 })
  try {
    await pool.warm()
    expect(pool.size).toBe(2)
    for (let i = 0; i < 300 && pool.size > 0; i++) await Bun.sleep(20)
    expect(pool.size).toBe(0)
  } finally {
    await pool.close(100)
    storage.close?.()
  }
})

// The workers' database refuses them: warm() says so, and the next start waits (pool.ts). The
// idle stop may come while that start waits: warm() must still answer (it stood unanswered for
// good, and the batch's fills, chained behind it, with it).
test('warm() answers when the idle stop comes while a start waits after a failed one', async () => {
  const refusedDir = tempDir('switchyard-pool-refused-')
  const env = { SWITCHYARD_DATA_DIR: refusedDir, SWITCHYARD_DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' }
  const config = loadConfig({ flags: { 'data-dir': refusedDir } as any, env, cwd: refusedDir })
  const pool = new WorkerPool({ size: 1, config, log: createLogger('error'), idleMs: 100 })
  try {
    expect(await pool.warm()).toBe(false)
    // the next start waits 250 ms or more; the idle stop comes 100 ms after the first answer
    const answer = await Promise.race([pool.warm(), Bun.sleep(5_000).then(() => 'no answer')])
    expect(answer).toBe(false)
  } finally {
    await pool.close(100)
    cleanup(refusedDir)
  }
}, 20_000)
