// Two gateway processes on one PostgreSQL schema and one data dir (the output files' bytes on a
// shared volume), a fake OpenAI upstream, one bootstrap key: what the shared-database batch
// tests start from. `stop` ends whatever was started.
import { SQL } from 'bun'
import { freshSchema } from '../helpers/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

export interface TwoInstances {
  db: SQL
  up: FakeUpstream
  headers: Record<string, string>
  /** Spawns the two gateways (script the upstream first: they may take up work at once). */
  start(): Promise<[Spawned, Spawned]>
  stop(): Promise<void>
}

export async function twoInstances(schema: string): Promise<TwoInstances> {
  const url = await freshSchema(schema)
  const db = new SQL({ url, max: 1 })
  const up = await startFakeUpstream()
  const dataDir = tempDir(`switchyard-${schema}-`)
  const key = 'sk-sy-' + crypto.randomUUID().replaceAll('-', '')
  const env = { ...NO_LIMITS, SWITCHYARD_DATABASE_URL: url, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_BATCH_LEASE_MS: '2000' }
  const gateways: Spawned[] = []
  return {
    db,
    up,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    async start() {
      const [a, b] = await Promise.all([spawnGateway({ env, dataDir }), spawnGateway({ env, dataDir })])
      gateways.push(a, b)
      return [a, b]
    },
    async stop() {
      for (const g of gateways) {
        g.kill('SIGTERM')
        await g.exited
      }
      await db.close()
      await up.stop()
      cleanup(dataDir)
    },
  }
}
