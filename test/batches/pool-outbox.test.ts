// A graceful stop whose grace runs out while the batch workers are still starting: the jobs
// handed to the pool wait in a worker's outbox for its start. A worker that became ready while
// it was being stopped was posted them after its stop, and they failed as if the worker had held
// them (the scheduler kept their items marked as maybe sent: batch_item_lost after the restart,
// though never sent). A job is the worker's only once posted before the stop; any other fails
// with a NotTakenError, and its item runs after the restart.
import { afterAll, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/load.ts'
import { createLogger } from '../../src/http/log.ts'
import { NotTakenError, WorkerPool } from '../../src/batches/pool.ts'
import { openSqlite } from '../../src/db/client.ts'
import { cleanup, tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-pool-outbox-')
afterAll(() => cleanup(dir))

test('a job still in the outbox when the stop comes fails as never taken, whenever the worker becomes ready', async () => {
  const config = loadConfig({ flags: { 'data-dir': dir } as any, env: { SWITCHYARD_DATA_DIR: dir }, cwd: dir })
  const storage = openSqlite(config.dataDir)
  const log = createLogger('error')
  try {
    // how long a start takes here: the stops below come from well before to just after it, so
    // that in some the workers become ready while they are being stopped
    const warm = new WorkerPool({ size: 1, config, log })
    const t0 = Date.now()
    await warm.warm()
    const startMs = Date.now() - t0
    await warm.close(0)
    const answers: string[] = []
    for (const grace of [0, startMs - 1_500, startMs - 1_100, startMs - 700, startMs - 300, startMs + 300]) {
      const pool = new WorkerPool({ size: 1, config, log })
      // an item of no batch: a worker that takes it answers at once (nothing stored, so no status: null)
      const job = { batchId: 'batch_none', idx: 0, endpoint: '/v1/chat/completions', apiKey: { id: 'key_none' } as any, requestId: 'req_none' }
      const answer = pool.run(job, 0).then(
        (status) => `ran: ${status}`,
        (e: Error) => (e instanceof NotTakenError ? 'not taken' : `held by its worker: ${e.message}`),
      )
      await pool.close(Math.max(0, grace))
      answers.push(await answer)
    }
    // ran before the stop, or never taken: none was held by a worker it reached after its stop
    expect(answers.filter((a) => a !== 'ran: null' && a !== 'not taken')).toEqual([])
  } finally {
    storage.close?.()
  }
}, 60_000)
