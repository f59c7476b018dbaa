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
