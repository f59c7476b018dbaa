// An ended batch's items (request bodies and results) are kept `batches.retention_days` after
// it ended, then removed; its row, counts and output files stay, and its results answer a 404
// that says why rather than an empty list that looks whole. One that ended recently is not
// touched, however long ago it was made.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ITEMS_CHUNK } from '../../src/retention.ts'
import { chat, startBatchRig, type BatchRig } from './helpers.ts'

const DAY = 86_400_000
let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false, env: { SWITCHYARD_BATCH_RETENTION_DAYS: '29' } })
})
afterAll(() => rig.stop())

const items = (id: string) => rig.gw.services.storage.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM batch_items WHERE batch_id = ?', [id]).then((r) => Number(r!.n))
const endedDaysAgo = (id: string, days: number) => rig.gw.services.storage.sql.run('UPDATE batches SET ended_at = ? WHERE id = ?', [Date.now() - days * DAY, id])

test('the items of a batch that ended past the retention go; its row, counts and output file stay; its results are a 404 naming the setting', async () => {
  const client = rig.openai()
  // more items than two steps of a pass remove (every step must run), not thousands: each is run first
  const n = 2 * ITEMS_CHUNK + 50
  const lines = Array.from({ length: n }, (_, i) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: chat('mock-gpt', `mock: text n${i}`) }))
  const old = await client.batches.create({ input_file_id: await rig.upload(lines), endpoint: '/v1/chat/completions', completion_window: '24h' })
  const recent = await client.batches.create({ input_file_id: await rig.upload(lines.slice(0, 3)), endpoint: '/v1/chat/completions', completion_window: '24h' })
  const done = await rig.ended(old.id, undefined, 60_000)
  await rig.ended(recent.id)
  await endedDaysAgo(old.id, 30)
  await endedDaysAgo(recent.id, 28)
  // counted from its end, not from its creation
  await rig.gw.services.storage.sql.run('UPDATE batches SET created_at = ? WHERE id = ?', [Date.now() - 60 * DAY, recent.id])

  await rig.gw.services.retention.prune()
  // every step of the pass ran
  expect(await items(old.id)).toBe(0)
  expect(await items(recent.id)).toBe(3)

  const b = await client.batches.retrieve(old.id)
  expect(b.status).toBe('completed')
  expect(b.request_counts).toEqual({ total: n, completed: n, failed: 0 })
  const out = (await (await client.files.content(done.output_file_id)).text()).trim().split('\n')
  expect(out).toHaveLength(n)

  for (const path of [`/api/v1/batches/${old.id}/results`, `/api/v1/batches/${old.id}/export`, `/api/alpha/v1/batches/${old.id}/export?format=zip`]) {
    const r = await rig.call('GET', path)
    expect(r.status).toBe(404)
    expect(r.headers.get('x-request-id')).toBeTruthy()
    const body = (await r.json()) as any
    expect(JSON.stringify(body)).toContain('batches.retention_days')
  }
  expect((await rig.allResults(recent.id)).length).toBe(3)
})

test("a message batch's results past the retention: the SDK's results() gets the 404; retrieve and delete still work", async () => {
  const client = rig.anthropic()
  const batch = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: { model: 'mock-claude', max_tokens: 64, messages: [{ role: 'user', content: 'mock: text hi' }] } }] })
  await rig.ended(batch.id)
  await endedDaysAgo(batch.id, 40)
  await rig.gw.services.retention.prune()

  const b = await client.messages.batches.retrieve(batch.id)
  expect(b.request_counts.succeeded).toBe(1)
  const err = await client.messages.batches.results(batch.id).catch((e) => e)
  expect(err.status).toBe(404)
  expect(err.message).toContain('no longer kept')
  expect((await client.messages.batches.delete(batch.id)).type).toBe('message_batch_deleted')
})
