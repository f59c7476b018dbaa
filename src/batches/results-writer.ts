// Runs in a batch worker: stores the outcomes of the items it ran, a few ms' worth per
// transaction — each item's result, its generation records (through the recorder, which
// prices them, writes them with the hourly rollup and adds their cost to the key's spend)
// and the batch's counters together. So an item is billed exactly once, when it completes:
// a crash keeps both or neither, and then the item runs again. Records are
// taken only for a result that was stored; an item that already had one is not billed twice.
// Once committed, the main thread hears which items are done and what spend was written. With
// Redis, the costs a write may store are counted there (by the main thread) before its
// transaction begins (CountFirst): a kill after a commit leaves Redis no cost short.
// A write whose COMMIT took effect with its answer lost (PostgreSQL's connection dropped in
// between) is tried again, and finds its results stored: those it stored as they are queued
// (`storedAs`) are told as stored then, their records' costs with them, counted once.
// While the database is away (or full), what waits for it is kept on the local disk too
// (results-spool.ts): a kill -9 or a stop before it comes back loses no result; the next start
// stores them. A result a write may have stored with its answer lost is kept there with that
// write's records (`tried`): a start that finds it stored as kept counts their costs then.
import type { BatchStore, ResultWrite } from './store.ts'
import type { ApiKey } from '../http/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { GenerationRow } from '../generations/row.ts'
import type { ItemDone, LeanRecord, Outcome, Settled } from './types.ts'
import type { Services } from '../services.ts'
import { costsByKey } from '../billing/spend.ts'
import { recordTotals, type RecordTotals } from '../metrics/batches.ts'
import { loseAnswerIfAsked } from '../generations/test-lost-answer.ts'
import type { Spool } from '../generations/spool.ts'
import { isStoreAway } from '../db/unavailable.ts'
import type { SpooledResult } from './results-spool.ts'

/** Outcomes wait at most this long, or until this many are ready, to be stored together: a transaction of
 * 32 items holds the write lock well under a millisecond and costs a third of the CPU per item of one of 4. */
const WRITE_MS = 25
const WRITE_MAX = 32
const RETRY_MS = 200

/**
 * With a shared ledger (Redis), how a write's costs reach it before its transaction
 * (writer-worker.ts: the main thread counts them), and are taken back should the write fail or
 * store less. So a kill after a commit leaves Redis no cost short of the database, as a
 * recorder's write sends first; a kill before it leaves Redis counting costs not stored, the
 * safe side.
 */
export interface CountFirst {
  count(costs: Settled): Promise<void>
  takeBack(costs: Settled): void
}

interface Pending {
  id: number
  write: ResultWrite
  from: Outcome
  /**
   * The records a failed write stored with this result (the last that stored it): its COMMIT may
   * have taken effect with its answer lost (the connection dropped in between), and a retry that
   * finds the result stored as this one then finds these stored with it.
   */
  tried?: GenerationRow[]
}

export class ResultsWriter {
  private queue: Pending[] = []
  private timer?: ReturnType<typeof setTimeout>
  /** Results in the spool and not stored yet: while there are any, each one queued goes there too. */
  private readonly spooled = new Set<Pending>()
  private closed = false
  constructor(
    private readonly s: Pick<Services, 'catalog' | 'log' | 'recorder' | 'billing' | 'storage'>,
    private readonly store: BatchStore,
    private readonly told: (done: ItemDone[], settled: Settled, records: RecordTotals[]) => void,
    /** Where results waiting for a database that is away are kept (none: in memory only). */
    private readonly spool?: Spool<SpooledResult>,
    private readonly first?: CountFirst,
  ) {}

  /**
   * `finishedAt`: when the item ended (now; a spooled result's, when it is stored at a start);
   * `tried`: a spooled result's records a write whose answer was lost may have stored.
   */
  add(from: Outcome, finishedAt = Date.now(), tried?: GenerationRow[]) {
    const o = from.outcome
    const p: Pending = {
      id: from.id,
      from,
      tried,
      write: {
        batchId: from.batchId,
        idx: from.idx,
        status: o.status,
        response: o.status === 'succeeded' ? (o.response ?? 'null') : null,
        error: o.status === 'failed' ? JSON.stringify(o.error) : null,
        usage: o.usage,
        requestId: o.requestId,
        finishedAt,
      },
    }
    this.queue.push(p)
    if (this.spooled.size > 0) this.toSpool([p])
    if (this.queue.length >= WRITE_MAX) void this.write()
    else this.timer ??= setTimeout(() => void this.write(), WRITE_MS)
  }

  /** Keeps these on the local disk until they are stored. A disk that cannot take them: they wait in memory, as before. */
  private toSpool(ps: Pending[]) {
    this.append(ps.filter((p) => !this.spooled.has(p)))
  }

  /**
   * Each as it stands now, a line of the spool (the last line of an item is the one a start
   * reads): with the records a write whose answer was lost may have stored with it (`tried`).
   */
  private append(ps: Pending[]) {
    if (!this.spool || ps.length === 0) return
    try {
      this.spool.append(ps.map(({ from: { id: _, ...rest }, write, tried }) => ({ ...rest, finishedAt: write.finishedAt, ...(tried ? { tried } : {}) })))
      for (const p of ps) this.spooled.add(p)
    } catch (e) {
      this.s.log.error('batches: results waiting for the database could not be kept on the local disk', { error: (e as Error).message, results: ps.length })
    }
  }

  /** Stored: out of the spool's count; the spool goes once none of it waits. */
  private stored(ps: Pending[]) {
    if (this.spooled.size === 0) return
    for (const p of ps) this.spooled.delete(p)
    if (this.spooled.size === 0) this.spool?.clear()
  }

  /** No more writes (stop): the spool stays for the next start if results still wait. Returns how many wait. */
  close(): number {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    this.spool?.close()
    return this.queue.length
  }

  /** A lean record as the recorder takes it: the model from this thread's catalog, the item's key. */
  private input(from: Outcome, r: LeanRecord): GenerationInput {
    const { modelId, ...rest } = r
    const model = this.s.catalog.resolve(modelId) ?? ({ id: modelId, provider: 'mock' } as CatalogModel)
    return { ...rest, model, apiKey: from.key as ApiKey }
  }

  /** The records a write of `batch` may leave stored: each item's, priced as the recorder will, and those an earlier attempt may have stored with it. */
  private mayStore(batch: Pending[]): { apiKeyId: string; cost: number | null }[] {
    return batch.flatMap((p) => [
      ...p.from.outcome.records.map((r) => ({ apiKeyId: p.from.key.id, cost: this.s.recorder.priced(this.input(p.from, r)) })),
      ...(p.tried ?? []),
    ])
  }

  /**
   * What a write counted first against what it stored: counted and not stored (an item that had
   * a result already) is taken back; stored and not counted (none, while the prices agree) is
   * counted now.
   */
  private countedRight(counted: Settled, stored: Map<string, number>) {
    const first = new Map(counted)
    const over: Settled = []
    const under: Settled = []
    for (const keyId of new Set([...first.keys(), ...stored.keys()])) {
      const d = (first.get(keyId) ?? 0) - (stored.get(keyId) ?? 0)
      if (d > 1e-12) over.push([keyId, d])
      else if (d < -1e-12) under.push([keyId, -d])
    }
    if (over.length > 0) this.first!.takeBack(over)
    if (under.length > 0) void this.first!.count(under)
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
    let byItem: GenerationRow[][] = []
    let found: Pending[] = []
    /** The records this write leaves stored: those it inserted, and those found stored with their results. */
    let storedRows: GenerationRow[] = []
    /**
     * What this write may store, counted by `first` before its transaction begins (so that no
     * lock waits on the main thread): taken back should it fail, and what it did not store after it.
     */
    const countedFirst = this.first ? [...costsByKey(this.mayStore(batch))] : []
    try {
      if (countedFirst.length > 0) await this.first!.count(countedFirst)
      await storage.sql.tx(async (q) => {
        await spend.begin(q)
        stored = await this.store.writeResults(batch.map((p) => p.write), q)
        const ids = batch.map((p, i) => (stored[i] ? p.from.outcome.records.map((r) => recorder.record(this.input(p.from, r))) : []))
        records = recorder.take()
        const byId = new Map(records.map((r) => [r.id, r]))
        byItem = ids.map((list) => list.flatMap((id) => (id === undefined ? [] : (byId.get(id) ?? []))))
        inserted = await recorder.writeIn(q, records, spend)
        // results this write did not store that an earlier attempt of it may have: is the one stored theirs?
        const again = batch.filter((p, i) => !stored[i] && p.tried)
        if (again.length > 0) {
          const mine = await this.store.storedAs(again.map((p) => p.write), q)
          found = again.filter((_, j) => mine[j])
        }
      })
      // a test's lost answer here: the results stored, and the write failing as the database away
      loseAnswerIfAsked('results')
      // stored by the attempt whose answer was lost, with their records: their costs, given up when
      // it failed, are charged again and end as stored (told to the main thread), not lost
      const earlier = found.flatMap((p) => p.tried!)
      for (const r of earlier) billing.charge(r.apiKeyId, undefined, r.cost)
      if (found.length > 0) this.s.log.info('batches: results found stored by a write whose answer was lost', { results: found.length, records: earlier.length })
      // counted now: a spool that still holds them says so, for a start after a kill
      const respooled = found.filter((p) => this.spooled.has(p))
      for (const p of respooled) p.tried = undefined
      this.append(respooled)
      recorder.committed(records, inserted)
      storedRows = inserted.concat(earlier)
      costs = costsByKey(storedRows)
      if (this.first) this.countedRight(countedFirst, costs)
    } catch (e) {
      // not stored, or found so by the retry, which counts them again then
      if (countedFirst.length > 0) this.first!.takeBack(countedFirst)
      // stored by this attempt, if its commit took effect and only its answer was lost
      const kept = new Set(inserted)
      batch.forEach((p, i) => {
        if (stored[i]) p.tried = (byItem[i] ?? []).filter((r) => kept.has(r))
      })
      // nothing was stored, or it is found so by the retry: what was charged in that transaction is void
      recorder.abandon(records)
      this.s.log.error('batches: storing results failed; retrying', { error: (e as Error).message, results: batch.length })
      this.queue = batch.concat(this.queue)
      // the database away or full: what waits for it is kept on the disk meanwhile, a result
      // already there again with the records this write may have stored with it
      if (isStoreAway(e)) {
        const again = batch.filter((p, i) => stored[i] && this.spooled.has(p))
        this.toSpool(this.queue)
        this.append(again)
      }
      if (!this.closed) this.timer = setTimeout(() => void this.write(), RETRY_MS)
      return
    } finally {
      spend.end(costs !== undefined, costs)
    }
    this.stored(batch)
    const ours = new Set(found)
    this.told(
      batch.map((p, i) => ({ id: p.id, status: p.write.status, stored: stored[i] === true || ours.has(p) })),
      billing.drain(),
      recordTotals(storedRows),
    )
    if (this.queue.length > 0 && !this.closed) this.timer = setTimeout(() => void this.write(), 0)
  }
}
