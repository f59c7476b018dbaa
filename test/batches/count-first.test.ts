// With Redis, a batch results write has the costs it may store counted in the shared ledger
// before its transaction begins (so a kill after the commit leaves Redis no cost short of the
// database), and puts the count right after it: what it did not store is taken back, what it
// stored beyond the count (a price the count did not foresee) is counted then, and a write that
// fails takes all of it back. The
// writer here is the real one with the results writer thread's own services, on real SQLite; the
// ledger's side is a stub that writes down what it is asked, in order, beside the writer's
// transactions.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ResultsWriter, type CountFirst } from '../../src/batches/results-writer.ts'
import { BatchStore } from '../../src/batches/store.ts'
import { buildWriterServices, type WriterServices } from '../../src/batches/writer-services.ts'
import type { Outcome, Settled } from '../../src/batches/types.ts'
import type { ApiKey } from '../../src/http/context.ts'
import { genInput } from '../generations/input.ts'
import { testServices, type TestServices } from '../generations/services.ts'

// mock-gpt at $0.001 a token: 5 + 10 tokens cost $0.015
const YAML = `pricing:\n  overrides:\n    mock-gpt: { input_mtok: 1000, output_mtok: 1000 }\n`
const COST = 0.015

let t: TestServices
/** What the results writer's thread builds for itself (writer-services.ts). */
let ws: WriterServices
let key: ApiKey
beforeAll(async () => {
  t = await testServices({}, YAML)
  ws = await buildWriterServices(t.s.config)
  key = (await t.s.keys.create({ name: 'count first', credits: 10 })).record as ApiKey
})
afterAll(async () => {
  await ws?.storage.close()
  await t?.close()
})

let batches = 0
/** A batch of `n` pending items of `key`'s. */
async function batchOf(n: number): Promise<string> {
  const id = `batch_countfirst${++batches}`
  const now = Date.now()
  await t.s.storage.sql.run(
    `INSERT INTO batches (id, api_key_id, family, endpoint, completion_window, status, total, created_at, expires_at) VALUES (?, ?, 'openai', '/v1/chat/completions', '24h', 'processing', ?, ?, ?)`,
    [id, key.id, n, now, now + 86_400_000],
  )
  for (let i = 0; i < n; i++) await t.s.storage.sql.run(`INSERT INTO batch_items (batch_id, idx, body, model, prompt_estimate) VALUES (?, ?, '{}', 'mock-gpt', 5)`, [id, i])
  return id
}

let jobs = 0
/** An item's outcome, one record of 5 + 10 tokens. */
function outcome(batchId: string, idx: number): Outcome {
  const { model, apiKey: _, reservationId: __, ...r } = genInput(ws.catalog, key, { model: 'mock-gpt', usage: { inputTokens: 5, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 } })
  return {
    id: ++jobs,
    batchId,
    idx,
    key: { id: key.id, account: key.account },
    outcome: { status: 'succeeded', response: '{}', usage: null, requestId: `req_${jobs}`, records: [{ ...r, modelId: model.id }] },
  }
}

/** The writer with a ledger stub that writes down each ask (and the writer's first statement after it). */
function writer() {
  const events: string[] = []
  const counted: Settled[] = []
  const takenBack: Settled[] = []
  const told: Settled[] = []
  const first: CountFirst = {
    count: async (costs) => {
      events.push('count')
      counted.push(costs)
    },
    takeBack: (costs) => {
      events.push('take back')
      takenBack.push(costs)
    },
  }
  const sql = ws.storage.sql
  const watched = new Proxy(sql, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      if (typeof v !== 'function') return v
      return prop === 'tx' ? (...a: unknown[]) => (events.push('transaction'), v.apply(target, a)) : v.bind(target)
    },
  })
  const storage = { ...ws.storage, sql: watched }
  const w = new ResultsWriter({ ...ws, storage }, new BatchStore(storage), (_done, settled) => told.push(settled), undefined, first)
  return { w, events, counted, takenBack, told }
}

const sum = (list: Settled[]) => list.flat().reduce((a, [, usd]) => a + usd, 0)

test('the costs a write may store are counted before its transaction begins, and the main thread is told what it stored', async () => {
  const batchId = await batchOf(3)
  const { w, events, counted, takenBack, told } = writer()
  for (let i = 0; i < 3; i++) w.add(outcome(batchId, i))
  await w.writeAll()
  expect(events.slice(0, 2)).toEqual(['count', 'transaction'])
  expect(sum(counted)).toBeCloseTo(3 * COST, 9)
  expect(takenBack).toEqual([])
  expect(told).toHaveLength(1)
  expect(sum(told)).toBeCloseTo(3 * COST, 9)
})

test('an item that had a result already stores nothing: its counted cost is taken back after the commit', async () => {
  const batchId = await batchOf(2)
  await t.s.storage.sql.run(`UPDATE batch_items SET status = 'succeeded', response = '{}', finished_at = 1 WHERE batch_id = ? AND idx = 1`, [batchId])
  const { w, events, counted, takenBack, told } = writer()
  w.add(outcome(batchId, 0))
  w.add(outcome(batchId, 1))
  await w.writeAll()
  expect(events).toEqual(['count', 'transaction', 'take back'])
  expect(sum(counted)).toBeCloseTo(2 * COST, 9)
  expect(sum(takenBack)).toBeCloseTo(COST, 9)
  expect(sum(told)).toBeCloseTo(COST, 9)
})

test('a write that fails takes back all it counted, and its retry counts again', async () => {
  const batchId = await batchOf(1)
  const { w, events, counted, takenBack, told } = writer()
  // the database refuses the first transaction (as one away would), then takes the retry
  const tx = ws.storage.sql.tx.bind(ws.storage.sql)
  let refused = 0
  ws.storage.sql.tx = ((fn: any, committed?: any) => (refused++ === 0 ? Promise.reject(new Error('database away (test)')) : tx(fn, committed))) as typeof tx
  try {
    w.add(outcome(batchId, 0))
    await w.write()
    expect(events).toEqual(['count', 'transaction', 'take back'])
    expect(sum(takenBack)).toBeCloseTo(COST, 9)
    expect(told).toEqual([])
    await w.writeAll()
  } finally {
    ws.storage.sql.tx = tx
  }
  expect(events.slice(3)).toEqual(['count', 'transaction'])
  expect(sum(counted)).toBeCloseTo(2 * COST, 9)
  expect(told).toHaveLength(1)
  expect(sum(told)).toBeCloseTo(COST, 9)
  w.close()
})

test('a cost the count did not foresee is counted right after the commit', async () => {
  const batchId = await batchOf(1)
  const { w, events, counted, told } = writer()
  const priced = ws.recorder.priced.bind(ws.recorder)
  ws.recorder.priced = () => null
  try {
    w.add(outcome(batchId, 0))
    await w.writeAll()
  } finally {
    ws.recorder.priced = priced
  }
  expect(events).toEqual(['transaction', 'count'])
  expect(sum(counted)).toBeCloseTo(COST, 9)
  expect(sum(told)).toBeCloseTo(COST, 9)
})
