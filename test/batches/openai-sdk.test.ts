// The `openai` SDK end to end, as a user runs a batch: files.create (JSONL, purpose batch) →
// batches.create → poll batches.retrieve → files.content(output_file_id / error_file_id),
// read back as OpenAI's batch output format; batches.list and batches.cancel; both roots.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson } from '../helpers/fake-upstream.ts'
import { chat, replayFixtures, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ yaml: 'providers:\n  openai:\n    max_retries: 0\n  anthropic:\n    max_retries: 0\n' })
})
afterAll(() => rig.stop())

const until = async <T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> => {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await get()
    if (ok(v)) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`)
    await Bun.sleep(20)
  }
}

test('files.create → batches.create → retrieve until completed → files.content parses as OpenAI batch output', async () => {
  replayFixtures(rig.up, { special: (p) => (p === 'refuse me' ? { status: 400, json: fixtureJson('openai/chat/error-400-unsupported-parameter.json') } : undefined) })
  const client = rig.openai(undefined, 'alpha/v1')
  const lines = [
    { custom_id: 'req-1', method: 'POST', url: '/v1/chat/completions', body: chat('gpt-4o-mini', 'first') },
    { custom_id: 'req-2', method: 'POST', url: '/v1/chat/completions', body: chat('gpt-4o-mini', 'second', { max_tokens: 50 }) },
    // a bare body with a custom_id is a line too
    { custom_id: 'req-3', ...chat('claude-3-5-haiku-latest', 'third') },
    { custom_id: 'req-4', method: 'POST', url: '/v1/chat/completions', body: chat('gpt-4o-mini', 'refuse me') },
  ]
  const file = await client.files.create({ file: new File([lines.map((l) => JSON.stringify(l)).join('\n')], 'batch.jsonl'), purpose: 'batch' })
  const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } })
  expect(created.id).toMatch(/^batch_/)
  expect(created.object).toBe('batch')
  expect(created.input_file_id).toBe(file.id)
  expect(['queued', 'processing']).toContain(created.status as string)
  expect(created.request_counts).toEqual({ total: 4, completed: 0, failed: 0 })
  expect(created.metadata).toEqual({ job: 'nightly' })
  expect((created as any).settings).toEqual({ concurrency: null })

  const done = await until('completed', () => client.batches.retrieve(created.id), (b) => b.status === 'completed')
  expect(done.request_counts).toEqual({ total: 4, completed: 3, failed: 1 })
  expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at)
  expect(done.in_progress_at).toBeGreaterThanOrEqual(done.created_at)
  expect(done.expires_at).toBe(done.created_at + 86_400)

  const out = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l))
  expect(out.map((l) => l.custom_id).sort()).toEqual(['req-1', 'req-2', 'req-3'])
  const want = fixtureJson('openai/chat/nonstream-text.json')
  for (const l of out) {
    expect(l.id).toMatch(/^batch_req_/)
    expect(l.error).toBeNull()
    expect(l.response.status_code).toBe(200)
    expect(typeof l.response.request_id).toBe('string')
    expect(l.response.body.object).toBe('chat.completion')
  }
  const first = out.find((l) => l.custom_id === 'req-1')
  expect(first.response.body.choices[0].message.content).toBe(want.choices[0].message.content)
  expect(first.response.body.usage.prompt_tokens).toBe(want.usage.prompt_tokens)
  // the Claude item went to the Anthropic upstream and came back as a chat completion
  expect(out.find((l) => l.custom_id === 'req-3').response.body.choices[0].message.content).toBe(fixtureJson('anthropic/messages/nonstream-text.json').content[0].text)

  const errs = (await (await client.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l))
  expect(errs).toHaveLength(1)
  expect(errs[0]).toMatchObject({ custom_id: 'req-4', error: null, response: { status_code: 400 } })
  expect(errs[0].response.body.error.message).toContain('max_tokens')

  // the output files are the key's own files, purpose batch_output
  const meta = await client.files.retrieve(done.output_file_id!)
  expect(meta.purpose as string).toBe('batch_output')
  expect(await client.files.retrieve(done.output_file_id!, { headers: { authorization: `Bearer ${rig.otherKey}` } }).then(() => 200, (e) => e.status)).toBe(404)
})

test('batches.list pages newest first with limit and after, on both roots', async () => {
  replayFixtures(rig.up)
  const client = rig.openai()
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await client.batches.create({ requests: [chat('mock-gpt', `list ${i}`)] } as any)).id)
  const page = await client.batches.list({ limit: 2 })
  expect(page.data.map((b) => b.id)).toEqual([ids[2], ids[1]])
  expect(page.has_more).toBe(true)
  const next = await client.batches.list({ limit: 2, after: ids[1] })
  expect(next.data[0]!.id).toBe(ids[0])
  // auto-paging walks every batch exactly once
  const all: string[] = []
  for await (const b of rig.openai(undefined, 'alpha/v1').batches.list({ limit: 2 })) all.push(b.id)
  expect(new Set(all).size).toBe(all.length)
  for (const id of ids) expect(all).toContain(id)
  // another key sees none of them
  expect((await rig.openai(rig.otherKey).batches.list()).data).toEqual([])
})

test('batches.cancel on a processing batch returns it cancelling, then it is cancelled; again is a 400', async () => {
  replayFixtures(rig.up, { delayMs: 200 })
  const client = rig.openai()
  const b = await client.batches.create({ requests: Array.from({ length: 20 }, (_, i) => chat('gpt-4o-mini', `slow ${i}`)), settings: { concurrency: 2 } } as any)
  await until('processing', () => client.batches.retrieve(b.id), (x) => (x.status as string) === 'processing')
  const c = await client.batches.cancel(b.id)
  expect(c.status).toBe('cancelling')
  expect(c.cancelling_at).toBeGreaterThan(0)
  expect(await client.batches.cancel(b.id).then(() => 200, (e) => e.status)).toBe(400)
  const ended = await rig.ended(b.id)
  expect(ended.status).toBe('cancelled')
  expect(ended.request_counts.total).toBe(20)
  expect(ended.request_counts.completed + ended.request_counts.failed).toBe(20)
})

test("output_expires_after counts from the output file's creation, not the batch's", async () => {
  replayFixtures(rig.up, { delayMs: 1_500 })
  const client = rig.openai()
  const b = await client.batches.create({ requests: [chat('gpt-4o-mini', 'expiring')], output_expires_after: { anchor: 'created_at', seconds: 3600 } } as any)
  const ended = await rig.ended(b.id)
  const file = await client.files.retrieve(ended.output_file_id)
  expect(file.created_at).toBeGreaterThan(b.created_at)
  expect(file.expires_at).toBe(file.created_at + 3600)
})
