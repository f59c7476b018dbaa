// Real Services (temp data dir, real SQLite, the recorder as the server builds it) without
// an HTTP listener, for recorder-level tests.
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { createLogger } from '../../src/http/log.ts'
import { buildServices } from '../../src/server.ts'
import type { Services } from '../../src/services.ts'
import { databaseEnv, dropDatabaseFor } from '../helpers/database.ts'
import { tempDir } from '../helpers/server.ts'

export interface TestServices {
  s: Services
  logs: string[]
  close(): Promise<void>
}

export async function testServices(env: Record<string, string> = {}, yaml?: string): Promise<TestServices> {
  const dir = tempDir('switchyard-gen-')
  const flags: Record<string, string> = { 'data-dir': dir }
  if (yaml !== undefined) {
    flags.config = join(dir, 'c.yaml')
    writeFileSync(flags.config, yaml)
  }
  const logs: string[] = []
  const s = await buildServices(loadConfig({ flags, env: { ...(await databaseEnv(dir)), ...env }, cwd: dir }), createLogger('info', (l) => logs.push(l)))
  return {
    s,
    logs,
    async close() {
      for (const c of s.onClose) await c()
      await s.keys.stop()
      await s.storage.close()
      rmSync(dir, { recursive: true, force: true })
      await dropDatabaseFor(dir)
    },
  }
}

export function rollup(s: Services) {
  return s.storage.sql.all('SELECT * FROM usage_hourly ORDER BY account, hour, model') as Promise<{
    account: string
    model: string
    hour: number
    requests: number
    input_tokens: number
    output_tokens: number
    total_tokens: number
    cost: number
    unpriced_requests: number
    cache_read_tokens: number
    cache_write_tokens: number
    reasoning_tokens: number
    cache_write_1h_tokens: number
    input_audio_tokens: number
    output_audio_tokens: number
    web_search_requests: number
    file_search_requests: number
    image_tool_tokens: number
  }[]>
}
