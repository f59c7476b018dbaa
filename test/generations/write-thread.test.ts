// SQLite's batched writes (records, responses threads) on the write thread (db/checkpointer.ts):
// the same rows, rollup and spend as in-thread, none of it through the request thread's
// connection, and nothing lost when the thread goes away.
import { afterEach, expect, test } from 'bun:test'
import { startCheckpointer } from '../../src/db/checkpointer.ts'
import type { Sql } from '../../src/db/sql.ts'
import { ThreadStore } from '../../src/surfaces/responses/thread.ts'
import { onPostgres } from '../helpers/database.ts'
import { genInput } from './input.ts'
import { rollup, testServices, type TestServices } from './services.ts'

let t: TestServices | undefined
let stopWriter: (() => Promise<void>) | undefined
afterEach(async () => {
  await stopWriter?.()
  stopWriter = undefined
  await t?.close()
  t = undefined
})

const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 }
const count = async (t: TestServices) => (await t.s.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM generations'))!.n

/** Counts the transactions the request thread's connection runs. */
function countTransactions(sql: Sql): () => number {
  let n = 0
  const tx = sql.tx.bind(sql)
  sql.tx = (fn) => (n++, tx(fn))
  return () => n
}

test.skipIf(onPostgres)('records, their rollup and spend are written on the write thread, not through the request thread', async () => {
  t = await testServices()
  stopWriter = await startCheckpointer(t.s.storage, t.s.log)
  expect(t.s.storage.writer).toBeDefined()
  const inThread = countTransactions(t.s.storage.sql)
  const key = (await t.s.keys.create({ name: 'w' })).record
  const g = genInput(t.s.catalog, key, { usage: USAGE })
  const ids = Array.from({ length: 300 }, (_, i) => t!.s.recorder.record({ ...g, id: `chatcmpl-w-${i}`, createdAt: g.createdAt + i })!)
  await t.s.recorder.flush()
  expect(inThread()).toBe(0)
  expect(await count(t)).toBe(300)
  expect((await t.s.recorder.get(ids[299]!))!.replyId).toBe('chatcmpl-w-299')
  expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(300)
  const one = (await t.s.recorder.get(ids[0]!))!.cost!
  expect((await t.s.keys.get(key.id))!.spent).toBeCloseTo(300 * one, 10)
})

test.skipIf(onPostgres)('a write thread that fails: what it owed is written in-thread, once', async () => {
  t = await testServices()
  const storage = t.s.storage
  let calls = 0
  // a thread that dies mid-job: it takes itself away and fails what it was given
  storage.writer = {
    run: async () => {
      calls++
      delete storage.writer
      throw new Error('the SQLite write thread failed')
    },
  }
  const key = (await t.s.keys.create({ name: 'w' })).record
  const g = genInput(t.s.catalog, key, { usage: USAGE })
  for (let i = 0; i < 40; i++) t.s.recorder.record({ ...g, id: `chatcmpl-f-${i}` })
  await t.s.recorder.flush()
  expect(calls).toBe(1)
  // the failed batch waits for its retry, then goes through the request thread's connection
  for (const end = Date.now() + 3000; (await count(t)) < 40 && Date.now() < end; ) await Bun.sleep(20)
  expect(await count(t)).toBe(40)
  expect((await rollup(t.s)).reduce((n, r) => n + r.requests, 0)).toBe(40)
})

test.skipIf(onPostgres)('responses threads: written on the write thread, readable at once, and in-thread after it stops', async () => {
  t = await testServices()
  const storage = t.s.storage
  stopWriter = await startCheckpointer(storage, t.s.log)
  const threads = new ThreadStore(storage.sql, 5, () => storage.writer)
  const inThread = countTransactions(storage.sql)
  const saved = (id: string) => ({ id, apiKeyId: 'k1', model: 'gpt-4o', status: 'completed', previousResponseId: null, conversation: null, inputItems: [{ type: 'message', role: 'user', content: 'hi' }], outputItems: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: id }] }] })
  threads.save(saved('resp_a') as never)
  // pending: found before it is written
  expect((await threads.history('k1', 'resp_a', 'previous_response_id')).items).toHaveLength(2)
  await threads.flush()
  expect(inThread()).toBe(0)
  const row = await storage.sql.get<{ id: string }>('SELECT id FROM responses WHERE id = ?', ['resp_a'])
  expect(row?.id).toBe('resp_a')
  await stopWriter()
  stopWriter = undefined
  expect(storage.writer).toBeUndefined()
  threads.save(saved('resp_b') as never)
  await threads.flush()
  expect(inThread()).toBe(1)
  expect((await storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM responses'))!.n).toBe(2)
})
