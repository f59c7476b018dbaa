// The cache's settings are checked at start: a value no store can keep stops the gateway with
// the field named, rather than failing every answer's store at request time.
import { afterAll, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { startGateway, tempDir } from '../helpers/server.ts'

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The config as `serve` loads it at start. */
function load(yaml: string) {
  const config = join(dir, 'c.yaml')
  writeFileSync(config, yaml)
  return loadConfig({ flags: { config, 'data-dir': dir }, env: {}, cwd: dir })
}

test('cache.max_ttl_s past ten years stops the gateway at start, naming the field; ten years starts', async () => {
  // 10^16 s: its expiry in ms was past a PostgreSQL bigint and a Redis TTL, so every store failed
  expect(() => load('cache: { max_ttl_s: 10000000000000000 }\n')).toThrow(/cache\.max_ttl_s/)
  expect(() => load(`cache: { max_ttl_s: ${10 * 365 * 86_400 + 1} }\n`)).toThrow(/cache\.max_ttl_s/)
  const gw = await startGateway({ yaml: `cache: { max_ttl_s: ${10 * 365 * 86_400} }\n` })
  await gw.stop()
})
