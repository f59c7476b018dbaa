// The results of batch items that ran nowhere: refused at admission, naming an unknown model, or
// lost with their worker after their upstream call may have begun. A worker stores its own
// results with their records (results-writer.ts); these have none, and are written here, queued
// a few ms and then in chunks of a transaction each, with a turn of the loop between two so that
// interactive requests go first. A write that fails keeps its results for the next one. Once a
// batch's results are all written, its end is looked for (ending.ts).
import type { BatchServices } from '../services.ts'
import type { Active } from './active.ts'
import type { BatchStore, ResultWrite } from './store.ts'
import type { ItemError } from './types.ts'
import { loseAnswerIfAsked } from '../generations/test-lost-answer.ts'

/** Results are written together, at most this long after the first of them arrived… */
const FLUSH_MS = 5
/** …at most this many per transaction, with a turn of the loop between two (interactive requests go first). */
const FLUSH_CHUNK = 32

interface Landed {
  a: Active
  write: ResultWrite
  /** Called once the failure is stored (not when the item had a result already). */
  stored?: () => void
  /** A write of it failed: its COMMIT may have taken effect with its answer lost, and stored it. */
  tried?: boolean
}

/** What landing needs of the scheduler. */
export interface LandingDeps {
  s: BatchServices
  store: BatchStore
  closed(): boolean
  /** Counts items ended here, for the metrics. */
  ended(status: 'succeeded' | 'failed', n?: number): void
  fillLater(a: Active): void
  maybeEnd(a: Active): void
}

export class Landing {
  private landed: Landed[] = []
  private flushTimer?: ReturnType<typeof setTimeout>
  private flushNext = false
  /** The write in progress: one at a time. */
  private writing: Promise<void> = Promise.resolve()

  constructor(private readonly d: LandingDeps) {}

  /**
   * An item that failed outside a worker (admission, an unknown model, lost with its worker): queued
   * for the next write. Its end is counted once the failure is stored: an item that has a result by
   * then (its writer stored it just after its worker died) ended with that one, counted there.
   */
  land(a: Active, idx: number, requestId: string, error: ItemError, stored?: () => void): void {
    this.landed.push({
      a,
      write: { batchId: a.id, idx, status: 'failed', response: null, error: JSON.stringify(error), usage: null, requestId, finishedAt: Date.now() },
      stored,
    })
    a.queued++
    this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS)
    this.d.fillLater(a)
  }

  /** Stores landed results (nothing ran for them: no records). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.flushChunk())
    return this.writing
  }

  /** At a close: writes what has landed, until a write stores nothing more. */
  async drain(): Promise<void> {
    for (let n = this.landed.length; n > 0; n = this.landed.length) {
      await this.flush()
      // a write that failed keeps its results: give up on them, they run again after the restart
      if (this.landed.length >= n) break
    }
  }

  private async flushChunk(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    if (this.landed.length === 0) return
    const batch = this.landed.splice(0, FLUSH_CHUNK)
    if (this.landed.length > 0 && !this.flushNext) {
      this.flushNext = true
      setImmediate(() => {
        this.flushNext = false
        void this.flush()
      })
    }
    let stored: boolean[]
    try {
      stored = await this.d.store.sql.tx(async (q) => {
        const done = await this.d.store.writeResults(batch.map((l) => l.write), q)
        // one an earlier attempt stored, its answer lost, is stored as this one: counted here once
        const again = batch.map((l, i) => i).filter((i) => !done[i] && batch[i]!.tried)
        if (again.length > 0) (await this.d.store.storedAs(again.map((i) => batch[i]!.write), q)).forEach((mine, j) => (done[again[j]!] = mine))
        return done
      })
      // a test's lost answer here: the results stored, and the write failing as the database away
      loseAnswerIfAsked('landing')
    } catch (e) {
      for (const l of batch) l.tried = true
      this.d.s.log.error('batches: storing results failed; retrying', { error: (e as Error).message, results: batch.length })
      this.landed = batch.concat(this.landed)
      if (!this.d.closed()) this.flushTimer ??= setTimeout(() => void this.flush(), 500)
      return
    }
    const failed = batch.filter((_, i) => stored[i])
    this.d.ended('failed', failed.length)
    for (const l of failed) l.stored?.()
    const touched = new Set<Active>()
    for (const l of batch) {
      l.a.queued--
      touched.add(l.a)
    }
    for (const a of touched) this.d.maybeEnd(a)
  }
}
