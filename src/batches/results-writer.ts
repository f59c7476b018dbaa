// Runs in a batch worker: stores the outcomes of the items it ran, a few ms' worth per
// transaction — each item's result, its generation records (through the recorder, which
// prices them, writes them with the hourly rollup and adds their cost to the key's spend)
// and the batch's counters together. So an item is billed exactly once, when it completes:
// a crash keeps both or neither, and then the item runs again. Records are
// taken only for a result that was stored; an item that already had one is not billed twice.
// Once committed, the main thread hears which items are done and what spend was written.
import type { BatchStore, ResultWrite } from './store.ts'
import type { ApiKey } from '../http/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { ItemDone, LeanRecord, Outcome, Settled } from './types.ts'
import type { Services } from '../services.ts'
import { costsByKey } from '../billing/spend.ts'
import { recordTotals, type RecordTotals } from '../metrics/batches.ts'
import { loseAnswerIfAsked } from '../generations/test-lost-answer.ts'

/** Outcomes wait at most this long, or until this many are ready, to be stored together: a transaction of
 * 32 items holds the write lock well under a millisecond and costs a third of the CPU per item of one of 4. */
const WRITE_MS = 25
const WRITE_MAX = 32
const RETRY_MS = 200

interface Pending {
  id: number
  write: ResultWrite
  from: Outcome
}

export class ResultsWriter {
  private queue: Pending[] = []
  private timer?: ReturnType<typeof setTimeout>
  constructor(
    private readonly s: Pick<Services, 'catalog' | 'log' | 'recorder' | 'billing' | 'storage'>,
    private readonly store: BatchStore,
    private readonly told: (done: ItemDone[], settled: Settled, records: RecordTotals[]) => void,
  ) {}

  add(from: Outcome) {
    const o = from.outcome
    this.queue.push({
      id: from.id,
      from,
      write: {
        batchId: from.batchId,
        idx: from.idx,
        status: o.status,
        response: o.status === 'succeeded' ? (o.response ?? 'null') : null,
        error: o.status === 'failed' ? JSON.stringify(o.error) : null,
        usage: o.usage,
        requestId: o.requestId,
        finishedAt: Date.now(),
      },
    })
    if (this.queue.length >= WRITE_MAX) void this.write()
    else this.timer ??= setTimeout(() => void this.write(), WRITE_MS)
  }

  /** A lean record as the recorder takes it: the model from this thread's catalog, the item's key. */
  private input(from: Outcome, r: LeanRecord): GenerationInput {
    const { modelId, ...rest } = r
    const model = this.s.catalog.resolve(modelId) ?? ({ id: modelId, provider: 'mock' } as CatalogModel)
    return { ...rest, model, apiKey: from.key as ApiKey }
  }

  /** Everything queued, now (shutdown). */
  async writeAll(): Promise<void> {
    await this.writing
    for (let n = this.queue.length; n > 0; n = this.queue.length) {
      await this.write()
      if (this.queue.length >= n) return
    }
  }

  /** The write in progress: one at a time, in order. */
  private writing: Promise<void> = Promise.resolve()

  write(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    this.writing = this.writing.then(() => this.writeChunk())
    return this.writing
  }

  /** Stores a chunk of what is queued; on failure keeps it and tries again a little later. */
  private async writeChunk(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.queue.length === 0) return
    const batch = this.queue.splice(0, WRITE_MAX)
    const { recorder, billing, storage } = this.s
    let records: ReturnType<typeof recorder.take> = []
    let inserted: typeof records = []
    // records are charged inside the transaction below, once their results are stored, and
    // taken there: this write ends no reservation (admission was the main thread's)
    const spend = billing.startWrite()
    let costs: Map<string, number> | undefined
    let stored: boolean[] = []
    try {
      await storage.sql.tx(async (q) => {
        await spend.begin(q)
        stored = await this.store.writeResults(batch.map((p) => p.write), q)
        batch.forEach((p, i) => {
          if (stored[i]) for (const r of p.from.outcome.records) recorder.record(this.input(p.from, r))
        })
        records = recorder.take()
        inserted = await recorder.writeIn(q, records, spend)
      })
      // a test's lost answer here: the results stored, and the write failing as the database away
      loseAnswerIfAsked('results')
      costs = costsByKey(inserted)
      recorder.committed(records, inserted)
    } catch (e) {
      // nothing was stored: what was charged in that transaction is void
      recorder.abandon(records)
      this.s.log.error('batches: storing results failed; retrying', { error: (e as Error).message, results: batch.length })
      this.queue = batch.concat(this.queue)
      this.timer = setTimeout(() => void this.write(), RETRY_MS)
      return
    } finally {
      spend.end(costs !== undefined, costs)
    }
    this.told(
      batch.map((p, i) => ({ id: p.id, status: p.write.status, stored: stored[i] === true })),
      billing.drain(),
      recordTotals(inserted),
    )
    if (this.queue.length > 0) this.timer = setTimeout(() => void this.write(), 0)
  }
}
