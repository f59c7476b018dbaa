// The states of a batch and the transitions the README documents: queued → processing →
// completed; cancel (in-flight items finish and keep their results, items not started never
// run); failed when the input file is deleted or the batch cannot run; expired past the
// completion window (unfinished items fail with batch_expired); a graceful restart resumes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { startGateway } from '../helpers/server.ts'
import { chat, NO_LIMITS, promptOf, recordsOf, replayFixtures, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ yaml: 'providers:\n  openai:\n    max_retries: 0\n' })
})
afterAll(() => rig.stop())

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}

const row = async (id: string) => (await rig.gw.services.batches!.store.byId(id))!

/** Holds every upstream request until `release()`; counts them by prompt. */
function gate() {
  let open!: () => void
  const released = new Promise<void>((r) => (open = r))
  const seen = replayFixtures(rig.up, { special: () => undefined })
  const started: string[] = []
  rig.up.script(async (req) => {
    const p = promptOf(req.json())
    started.push(p)
    seen.set(p, (seen.get(p) ?? 0) + 1)
    await released
    return { json: { id: `chatcmpl-${p}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `re ${p}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } }
  })
  return { started, seen, release: () => open() }
}

describe('cancel', () => {
  test('during processing: in-flight items finish and keep their results, the rest never run', async () => {
    const g = gate()
    const res = await rig.call('POST', '/api/v1/batches', { requests: Array.from({ length: 30 }, (_, i) => chat('gpt-4o-mini', `k${i}`)), settings: { concurrency: 3 } })
    const b = (await res.json()) as any
    await until('three items in flight', () => g.started.length === 3)
    const cancelled = (await (await rig.call('POST', `/api/v1/batches/${b.id}/cancel`)).json()) as any
    // cancelling while its items in flight still land, as OpenAI's is; cancelled once they have
    expect(cancelled.status).toBe('cancelling')
    expect(cancelled.cancelling_at).toBeGreaterThan(0)
    expect(cancelled.cancelled_at).toBeNull()
    g.release()
    const done = await rig.ended(b.id)
    expect(done.status).toBe('cancelled')
    expect(done.cancelled_at).toBeGreaterThanOrEqual(done.cancelling_at)
    expect(done.request_counts).toEqual({ total: 30, completed: 3, failed: 27 })
    expect(g.started.sort()).toEqual(['k0', 'k1', 'k2'])
    const results = await rig.allResults(b.id)
    expect(results).toHaveLength(30)
    expect(results.slice(0, 3).map((r) => r.result.choices[0].message.content)).toEqual(['re k0', 're k1', 're k2'])
    for (const r of results.slice(3)) expect(r).toMatchObject({ status: 'failed', result: null, error: { code: 'batch_cancelled', status: 499 } })
    // the output files carry both kinds; the cancelled items as OpenAI's error lines
    const errs = (await (await rig.openai().files.content(done.error_file_id)).text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(errs).toHaveLength(27)
    expect(errs[0]).toMatchObject({ response: null, error: { code: 'batch_cancelled' } })
    expect((await recordsOf(rig, b.id))).toHaveLength(3)
  })

  test('right after create: only the items already handed out run', async () => {
    const g = gate()
    const s = rig.gw.services.batches!
    const res = await rig.call('POST', '/api/v1/batches', { requests: [chat('gpt-4o-mini', 'q0')], settings: { concurrency: 1 } })
    const b = (await res.json()) as any
    const c = (await (await rig.call('POST', `/api/v1/batches/${b.id}/cancel`)).json()) as any
    expect(c.status).toBe('cancelling')
    g.release()
    await rig.ended(b.id)
    expect((await s.store.byId(b.id))!.status).toBe('cancelled')
    // concurrency 1: at most the one item already handed out ran
    expect(g.started.length).toBeLessThanOrEqual(1)
    expect((await s.store.byId(b.id))!.succeeded + (await s.store.byId(b.id))!.failed).toBe(1)
  })
})

describe('failed', () => {
  test('deleting the input file fails a processing batch; items done keep their results', async () => {
    const g = gate()
    const file = await rig.upload(Array.from({ length: 10 }, (_, i) => chat('gpt-4o-mini', `d${i}`)))
    const b = (await (await rig.call('POST', '/api/v1/batches', { input_file_id: file, settings: { concurrency: 2 } })).json()) as any
    await until('two in flight', () => g.started.length === 2)
    expect((await rig.openai().files.delete(file)).deleted).toBe(true)
    // the hook ran before the delete answered
    expect((await row(b.id)).status).toBe('failed')
    g.release()
    const done = await rig.ended(b.id)
    expect(done.status).toBe('failed')
    expect(done.failed_at).toBeGreaterThan(0)
    // a batch that ended otherwise than cancelled has no cancelled_at
    expect(done.cancelled_at).toBeNull()
    expect(done.errors.data[0]).toMatchObject({ code: 'input_file_deleted', message: expect.stringContaining(file) })
    expect(done.request_counts).toEqual({ total: 10, completed: 2, failed: 8 })
    expect((await rig.allResults(b.id)).slice(2).every((r) => r.error.code === 'batch_failed')).toBe(true)
    expect(g.started).toHaveLength(2)
  })

  test('a file deleted after the create looked at it and before the batch was stored: the batch fails at once, no item runs', async () => {
    const g = gate()
    const s = rig.gw.services.batches!
    const file = await rig.upload(Array.from({ length: 3 }, (_, i) => chat('gpt-4o-mini', `r${i}`)))
    // the delete lands in the create's gap: it looks for the batches reading the file before
    // this one is stored, and finds none
    const insert = s.store.insert
    s.store.insert = async (row) => {
      expect(await rig.gw.services.files.delete(row.apiKeyId, file)).not.toBeNull()
      return insert.call(s.store, row)
    }
    let res: Response
    try {
      res = await rig.call('POST', '/api/v1/batches', { input_file_id: file })
    } finally {
      delete (s.store as { insert?: unknown }).insert
    }
    expect(res.status).toBe(200)
    const b = (await res.json()) as any
    expect(b.status).toBe('failed')
    expect(b.errors.data[0]).toMatchObject({ code: 'input_file_deleted', message: `the input file ${file} was deleted` })
    const done = await rig.ended(b.id)
    expect(done.request_counts).toEqual({ total: 3, completed: 0, failed: 3 })
    g.release()
    expect(g.started).toHaveLength(0)
  })

  test('a file that expired while its lines were read: the create is a 400 that says it expired, and leaves no batch', async () => {
    const s = rig.gw.services.batches!
    const file = await rig.upload([chat('gpt-4o-mini', 'x0')])
    const ingest = s.pool.ingest
    s.pool.ingest = async (job) => {
      const out = await ingest.call(s.pool, job)
      // its expiry passed meanwhile; the expiry pass has not removed it yet
      await rig.gw.services.storage.sql.run('UPDATE files SET expires_at = ? WHERE id = ?', [Date.now() - 1, file])
      return out
    }
    let res: Response
    try {
      res = await rig.call('POST', '/api/v1/batches', { input_file_id: file })
    } finally {
      delete (s.pool as { ingest?: unknown }).ingest
    }
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toBe(`input_file_id: while the batch was being created, the file ${file} was removed when it expired`)
    expect((await (await rig.call('GET', '/api/v1/batches?limit=100')).json() as any).data.some((b: any) => b.input_file_id === file)).toBe(false)
  })

  test('deleting the input file of a finished batch leaves the batch as it was', async () => {
    replayFixtures(rig.up)
    const file = await rig.upload([chat('gpt-4o-mini', 'f0')])
    const b = (await (await rig.call('POST', '/api/v1/batches', { input_file_id: file })).json()) as any
    expect(await rig.ended(b.id)).toMatchObject({ status: 'completed', cancelled_at: null, cancelling_at: null })
    await rig.openai().files.delete(file)
    expect((await row(b.id)).status).toBe('completed')
  })

  test('a batch whose key is disabled cannot run: failed', async () => {
    const g = gate()
    const key = await rig.gw.services.keys.create({ name: 'to-disable' })
    const b = (await (await rig.call('POST', '/api/v1/batches', { requests: Array.from({ length: 6 }, (_, i) => chat('gpt-4o-mini', `x${i}`)), settings: { concurrency: 1 } }, key.key)).json()) as any
    await until('one in flight', () => g.started.length === 1)
    await rig.gw.services.keys.update(key.record.id, { status: 'inactive' })
    g.release()
    await until('ended', async () => (await row(b.id)).endedAt !== null)
    expect(await row(b.id)).toMatchObject({ status: 'failed', succeeded: 1, failed: 5 })
    expect(JSON.parse((await row(b.id)).errors!)[0].code).toBe('key_inactive')
  })

  test('a batch of a key made a moment ago on another instance runs: the key is read from the database, not taken for deleted', async () => {
    replayFixtures(rig.up)
    // another instance's key store on the same database: this instance is told nothing of the key
    const elsewhere = new KeyStore(rig.gw.services.storage)
    const made = await elsewhere.create({ name: 'made elsewhere' })
    expect(rig.gw.services.keys.current(made.record.id)).toBeUndefined()
    // created as that instance would (its front door knew the key); this one claims it
    const text = JSON.stringify({ requests: Array.from({ length: 3 }, (_, i) => chat('gpt-4o-mini', `elsewhere ${i}`)) })
    const b = await rig.gw.services.batches!.create('openai', made.record, text)
    // read from the row: a poll through the API would make this instance load the key itself
    await until('ended', async () => (await row(b.id)).endedAt !== null)
    expect(await row(b.id)).toMatchObject({ status: 'completed', succeeded: 3, failed: 0 })
  })
})

describe('expired', () => {
  test('past its completion window: unfinished items fail with batch_expired, in-flight ones finish', async () => {
    const g = gate()
    const b = (await (await rig.call('POST', '/api/v1/batches', { requests: Array.from({ length: 5 }, (_, i) => chat('gpt-4o-mini', `e${i}`)), settings: { concurrency: 1 } })).json()) as any
    expect(b.expires_at).toBe(b.created_at + 86_400)
    await until('one in flight', () => g.started.length === 1)
    // the window's end, as the scheduler's timer will find it
    await rig.gw.services.batches!.scheduler.checkExpiry(Date.now() + 86_400_000 + 1)
    g.release()
    const done = await rig.ended(b.id)
    expect(done.status).toBe('expired')
    expect(done.expired_at).toBeGreaterThan(0)
    expect(done.cancelled_at).toBeNull()
    expect(done.request_counts).toEqual({ total: 5, completed: 1, failed: 4 })
    const results = await rig.allResults(b.id)
    expect(results.slice(1).map((r) => r.error.code)).toEqual(Array(4).fill('batch_expired'))
    // Anthropic's view of the same counts
    expect(await row(b.id)).toMatchObject({ expiredItems: 4, cancelledItems: 0 })
  })
})

describe('restart', () => {
  test('a graceful stop mid-batch and a start on the same data dir: the batch completes, each index once', async () => {
    replayFixtures(rig.up, { delayMs: 30 })
    const dataDir = (await import('../helpers/server.ts')).tempDir()
    const env = { ...NO_LIMITS, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: rig.up.url }
    const first = await startGateway({ env, dataDir })
    const call = (gw: typeof first, path: string, body?: unknown) =>
      fetch(gw.url + path, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
    const b = (await (await call(first, '/api/v1/batches', { requests: Array.from({ length: 40 }, (_, i) => chat('gpt-4o-mini', `r${i}`)), settings: { concurrency: 4 } })).json()) as any
    await until('some results', async () => (await first.services.batches!.store.byId(b.id))!.succeeded >= 8)
    await first.stop()
    const second = await startGateway({ env: { ...env, SWITCHYARD_BOOTSTRAP_KEY: first.key }, dataDir })
    try {
      await until('ended', async () => (await second.services.batches!.store.byId(b.id))!.endedAt !== null, 20_000)
      const final = (await second.services.batches!.store.byId(b.id))!
      expect(final).toMatchObject({ status: 'completed', total: 40, succeeded: 40, failed: 0 })
      const idx = (await second.services.batches!.store.results(b.id, 0, 100, 100)).map((r) => r.idx)
      expect(idx).toEqual(Array.from({ length: 40 }, (_, i) => i))
      await second.services.recorder.flush()
      const recs = (await second.services.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM generations WHERE batch_id = ?', [b.id]))!
      expect(recs.n).toBe(40)
    } finally {
      await second.stop()
      ;(await import('node:fs')).rmSync(dataDir, { recursive: true, force: true })
    }
  }, 30_000)
})
