// Runs in a batch worker: stores the outcomes of the items it ran, a few ms' worth per
// transaction — each item's result, its generation records (through the recorder, which
// prices them, writes them with the hourly rollup and adds their cost to the key's spend)
// and the batch's counters together. So an item is billed exactly once, when it completes
// (pitfall 15): a crash keeps both or neither, and then the item runs again. Records are
// taken only for a result that was stored; an item that already had one is not billed twice.
// Once committed, the main thread hears which items are done and what spend was written.
import type { BatchStore, ResultWrite } from './store.ts'
import type { ApiKey } from '../auth/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { ItemDone, LeanRecord, Outcome, Settled } from './types.ts'
import type { WorkerServices } from './worker-services.ts'

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
    private readonly s: WorkerServices,
    private readonly store: BatchStore,
    private readonly told: (done: ItemDone[], settled: Settled) => void,
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
    if (this.queue.length >= WRITE_MAX) this.write()
    else this.timer ??= setTimeout(() => this.write(), WRITE_MS)
  }

  /** A lean record as the recorder takes it: the model from this thread's catalog, the item's key. */
  private input(from: Outcome, r: LeanRecord): GenerationInput {
    const { modelId, ...rest } = r
    const model = this.s.catalog.resolve(modelId) ?? ({ id: modelId, provider: 'mock' } as CatalogModel)
    return { ...rest, model, apiKey: from.key as ApiKey }
  }

  /** Everything queued, now (shutdown). */
  writeAll(): void {
    for (let n = this.queue.length; n > 0; n = this.queue.length) {
      this.write()
      if (this.queue.length >= n) return
    }
  }

  /** Stores a chunk of what is queued; on failure keeps it and tries again a little later. */
  write(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.queue.length === 0) return
    const batch = this.queue.splice(0, WRITE_MAX)
    const { recorder, keys, storage } = this.s
    try {
      storage.sqlite.transaction(() => {
        const stored = this.store.writeResults(batch.map((p) => p.write))
        batch.forEach((p, i) => {
          if (stored[i]) for (const r of p.from.outcome.records) recorder.record(this.input(p.from, r))
        })
        recorder.flush()
      })()
    } catch (e) {
      // nothing was stored; what the recorder settled in that transaction is void
      keys.drain()
      this.s.log.error('batches: storing results failed; retrying', { error: (e as Error).message, results: batch.length })
      this.queue = batch.concat(this.queue)
      this.timer = setTimeout(() => this.write(), RETRY_MS)
      return
    }
    this.told(
      batch.map((p) => ({ id: p.id, status: p.write.status })),
      keys.drain(),
    )
    if (this.queue.length > 0) this.timer = setTimeout(() => this.write(), 0)
  }
}
