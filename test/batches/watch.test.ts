// `switchyard batches watch ID` as a user runs it: a separate process on the data dir of a
// running gateway, until the batch ends; exit 0 when it completed, 1 when it failed, 1 with a
// message for an unknown id.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runCli, startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from './helpers.ts'

let gw: Gateway
beforeAll(async () => {
  // paced, so that a batch is still running when the test acts on it
  gw = await startGateway({ env: NO_LIMITS, yaml: 'batches:\n  max_items_per_second: 40\n' })
})
afterAll(() => gw.stop())

const chat = (i: number) => ({ custom_id: `c${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: `item ${i}` }] } })
const call = (method: string, path: string, body?: BodyInit, type = 'application/json') =>
  fetch(gw.url + path, { method, body, headers: { authorization: `Bearer ${gw.key}`, ...(body ? { 'content-type': type } : {}) } })

test('watch draws a bar to 100 % and exits 0 when the batch completes', async () => {
  const res = await call('POST', '/api/v1/batches', JSON.stringify({ requests: Array.from({ length: 60 }, (_, i) => chat(i).body) }))
  expect(res.status).toBe(200)
  const b = (await res.json()) as { id: string }
  const out = await runCli(['batches', 'watch', b.id, '--data-dir', gw.dataDir])
  expect(out.stderr).toBe('')
  expect(out.code).toBe(0)
  expect(out.stdout).toContain(`[${'#'.repeat(30)}] 100%  60/60 (0 failed)`)
  expect(out.stdout).toContain(`batch ${b.id} completed: 60 completed, 0 failed of 60`)
  // paced, the batch ran for over a second: a line at the start, then the last one at 100 %
  const bars = out.stdout.split('\n').filter((l) => l.startsWith('['))
  expect(bars.length).toBeGreaterThanOrEqual(2)
  expect(bars[0]).not.toContain('100%')
  expect((await gw.services.batches!.store.byId(b.id))!.status).toBe('completed')
}, 30_000)

test('watch exits 1 when the batch fails (its input file deleted while it runs), naming why', async () => {
  const form = new FormData()
  form.set('purpose', 'batch')
  form.set('file', new File([Array.from({ length: 400 }, (_, i) => JSON.stringify(chat(i))).join('\n') + '\n'], 'in.jsonl'))
  const file = (await (await fetch(gw.url + '/api/v1/files', { method: 'POST', body: form, headers: { authorization: `Bearer ${gw.key}` } })).json()) as { id: string }
  const b = (await (await call('POST', '/api/v1/batches', JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions' }))).json()) as { id: string }
  expect(b.id).toStartWith('batch_')
  const watching = runCli(['batches', 'watch', b.id], { SWITCHYARD_DATA_DIR: gw.dataDir })
  await Bun.sleep(1500)
  expect((await call('DELETE', `/api/v1/files/${file.id}`)).status).toBe(200)
  const out = await watching
  expect(out.code).toBe(1)
  expect(out.stdout).toContain(`batch ${b.id} failed:`)
  expect(out.stdout).toContain(`the input file ${file.id} was deleted`)
  expect(out.stdout).toMatch(/\d+\/400/)
}, 30_000)

test('watch with an unknown id exits 1 and says so; without an id it is a usage error', async () => {
  const out = await runCli(['batches', 'watch', 'batch_nope', '--data-dir', gw.dataDir])
  expect(out.code).toBe(1)
  expect(out.stderr).toContain('no batch with id batch_nope')
  const bad = await runCli(['batches', 'watch', '--data-dir', gw.dataDir])
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('missing ID')
})

test('on a terminal the bar is redrawn in place on one line, then the summary', async () => {
  const { watchBatch } = await import('../../src/batches/watch.ts')
  const res = await call('POST', '/api/v1/batches', JSON.stringify({ requests: Array.from({ length: 40 }, (_, i) => chat(i).body) }))
  const b = (await res.json()) as { id: string }
  let out = ''
  const code = await watchBatch({ storage: gw.services.storage, id: b.id, tty: true, intervalMs: 100, write: (t) => void (out += t) })
  expect(code).toBe(0)
  const redraws = out.split('\r').slice(1)
  expect(redraws.length).toBeGreaterThan(2)
  for (const r of redraws.slice(0, -1)) expect(r).toMatch(/^\[[#.]{30}\] +\d+%  \d+\/40 \(0 failed\).*\x1b\[K$/)
  expect(redraws.at(-1)).toContain(`100%  40/40 (0 failed)`)
  expect(out).toEndWith(`batch ${b.id} completed: 40 completed, 0 failed of 40\n`)
}, 30_000)
