// The engine's promises that no single route shows: the request thread stays free while a
// large file is checked and its items run (the work is on the worker pool), a worker that
// dies mid-batch sends nothing twice and bills nothing twice, and config sizes the pool.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { loadConfig, parseConfigFile } from '../../src/config/load.ts'
import { recordsOf, startBatchRig, type BatchRig } from './helpers.ts'
import { worstGap } from '../helpers/loop-gap.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false, env: { SWITCHYARD_BATCH_WORKERS: '2', SWITCHYARD_BATCH_MAX_ITEMS_PER_SECOND: '0' } })
})
afterAll(() => rig.stop())

test('a 10,000-line file is checked and run off the request thread: its loop never stops for long', async () => {
  const lines = Array.from({ length: 10_000 }, (_, i) => ({ custom_id: `c${i}`, model: 'mock-gpt', messages: [{ role: 'system', content: 'Be brief. '.repeat(20) }, { role: 'user', content: `mock: text ${i}` }] }))
  const file = await rig.upload(lines)
  let id = ''
  const worst = await worstGap(async () => {
    const res = await rig.call('POST', '/api/v1/batches', { input_file_id: file })
    id = ((await res.json()) as any).id
    await rig.ended(id, undefined, 60_000)
  })
  const b = (await rig.gw.services.batches!.store.byId(id))!
  expect(b).toMatchObject({ status: 'completed', total: 10_000, succeeded: 10_000 })
  // checking 10,000 lines on this thread alone takes several hundred ms
  console.log(`worst loop delay while 10,000 lines were checked and run: ${worst.toFixed(1)} ms`)
  expect(worst).toBeLessThan(150)
  expect(rig.gw.services.batches!.pool.size).toBe(2)
}, 90_000)

test('a worker killed mid-batch: the items it had begun fail batch_item_lost, never sent again; the rest run; every index once, each answer billed once', async () => {
  const pool = rig.gw.services.batches!.pool as any
  const res = await rig.call('POST', '/api/v1/batches', { requests: Array.from({ length: 400 }, (_, i) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text k${i}` }] })), settings: { concurrency: 16 } })
  const id = ((await res.json()) as any).id
  const store = rig.gw.services.batches!.store
  for (let i = 0; i < 500 && (await store.byId(id))!.succeeded < 50; i++) await Bun.sleep(5)
  pool.slots[0].worker.terminate()
  const done = await rig.ended(id, undefined, 30_000)
  const results = await rig.allResults(id)
  expect(results.map((r) => r.index)).toEqual(Array.from({ length: 400 }, (_, i) => i))
  const failed = results.filter((r) => r.error)
  // at most what one worker held at once; each one it had begun, as a kill -9 would lose it
  expect(failed.length).toBeLessThanOrEqual(16)
  for (const r of failed) expect(r.error.code).toBe('batch_item_lost')
  expect(done.request_counts).toEqual({ total: 400, completed: 400 - failed.length, failed: failed.length })
  expect(await recordsOf(rig, id)).toHaveLength(400 - failed.length)
}, 60_000)

test('config: batches.* from the file and the environment, with defaults', () => {
  const d = loadConfig({ env: {}, cwd: '/nonexistent' }).batches
  expect(d).toMatchObject({ maxConcurrency: 64, maxRetries: 4, maxItemsPerSecond: 1000, maxItems: 50_000 })
  expect(d.workers).toBeGreaterThanOrEqual(1)
  const e = loadConfig({ env: { SWITCHYARD_BATCH_WORKERS: '3', SWITCHYARD_BATCH_MAX_CONCURRENCY: '8', SWITCHYARD_BATCH_MAX_ITEMS_PER_SECOND: '0' }, cwd: '/nonexistent' }).batches
  expect(e).toMatchObject({ workers: 3, maxConcurrency: 8, maxItemsPerSecond: 0 })
  const f = parseConfigFile('batches:\n  workers: 2\n  max_concurrency: 4\n  max_retries: 0\n  max_items_per_second: 50\n  max_items: 10\n', {}, 'f.yaml').batches
  expect(f).toEqual({ workers: 2, max_concurrency: 4, max_retries: 0, max_items_per_second: 50, max_items: 10 })
  expect(() => parseConfigFile('batches:\n  workers: 0\n', {}, 'f.yaml')).toThrow('batches.workers')
  expect(() => parseConfigFile('batches:\n  speed: 1\n', {}, 'f.yaml')).toThrow('batches')
})
