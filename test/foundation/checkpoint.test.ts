// WAL checkpoints run in a Worker, never in a request's commit on the main thread.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { onPostgres } from '../helpers/database.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

// SQLite's own WAL: nothing to check on PostgreSQL
test.skipIf(onPostgres)('the server connection never checkpoints; the worker moves the WAL into the database file', async () => {
  const sqlite = gw.services.storage.sqlite!
  const file = gw.services.storage.file!
  expect((sqlite.query('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint).toBe(0)
  const before = statSync(file).size
  const key = (await gw.services.keys.create({ name: 'ckpt' })).record
  const model = gw.services.catalog.resolve('gpt-4o-mini')!
  for (let i = 0; i < 3000; i++) {
    gw.services.recorder.record({ id: `ckpt-${i}`, apiKey: key, endpoint: 'openai.chat.completions', stream: false, model, createdAt: Date.now(), usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: 'stop', latencyMs: 1, ttftMs: 1 })
  }
  ;(gw.services.recorder as unknown as { flush(): void }).flush()
  expect(statSync(file + '-wal').size).toBeGreaterThan(100_000)
  // with no automatic checkpoint, only the worker can have copied the pages into the file
  const deadline = Date.now() + 5000
  while (statSync(file).size <= before + 100_000 && Date.now() < deadline) await Bun.sleep(100)
  expect(statSync(file).size).toBeGreaterThan(before + 100_000)
})
