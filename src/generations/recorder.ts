// The recorder: every finished request becomes one generation record, its cost added to the
// key's spend and to the hourly usage rollup. `record()` prices the request and charges it
// (billing: its reservation ends and the real cost counts at once, for the next admission),
// then only queues; the queue is written in one transaction 25 ms later (at once past 256 records,
// or before a lookup), so recording never delays a response and a lookup right after a
// request still finds it. Not sooner: at a few requests a second each flush is a wake-up of
// the loop and a commit of its own, whose page writes cost more than the request.
// Each record gets the gateway's own id, so none is lost to a reused reply id.
// While the database is away, the records waiting for it are kept on the local disk too
// (spool.ts): a process killed then loses none, and the next start writes them.
import type { Billing, SpendWrite } from '../billing/billing.ts'
import { costsByKey } from '../billing/spend.ts'
import type { Catalog } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { DEFAULT_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../config/retention.ts'
import type { Storage } from '../db/client.ts'
import type { Sql } from '../db/sql.ts'
import { isStoreAway } from '../db/unavailable.ts'
import type { Logger } from '../http/log.ts'
import { newGenerationId, plausibleUsage, toRow, type GenerationRow } from './row.ts'
import { GenerationStore, isNotWhole } from './store.ts'
import { costsNothing, type GenerationInput, type GenerationSink, type Whose } from './types.ts'
import { pruneInSteps } from '../lib/prune-steps.ts'
import { Spool } from './spool.ts'
import { SpoolReplay } from './spool-replay.ts'
import { killIfAsked } from './test-kill.ts'
import { loseAnswerIfAsked } from './test-lost-answer.ts'

export interface RecorderDeps {
  storage: Storage
  catalog: Catalog
  billing: Billing
  log: Logger
  config: Pick<Config, 'generations'>
}

export interface RecorderOptions {
  /** How long records wait in memory before being written together. */
  flushDelayMs?: number
  /** Past this many queued records, write at once (bounds memory and the commit's size under load). */
  maxQueue?: number
  /** How often old records are pruned. */
  pruneEveryMs?: number
  /** Records waiting for a database that cannot take them (full, away): past this, new generations get 507. */
  maxBacklog?: number
  /** Records one pruning step deletes. */
  pruneChunk?: number
  /** Where records waiting for a database that is away are kept on disk (the data dir's `spool/`); none: in memory only. */
  spoolDir?: string
}

const DAY_MS = 86_400_000
/**
 * Records one pruning step deletes. On SQLite a step runs on the thread that serves requests,
 * and deleting a record touches a page of each of its indexes, its reply id's at random: on 10
 * million records a step of 1,000 held the thread 36-55 ms, one of 100 about 2 (docs/bench.md).
 */
export const PRUNE_CHUNK = 100
const MAX_ATTEMPTS = 3
/** Records one statement takes on PostgreSQL (a larger batch, a backlog written at once, goes in a transaction of parts). */
const WHOLE_MAX = 1_000

/** How long a stop waits for records still being counted before it takes their cheap bound. */
const STOP_WAIT_MS = 3_000
/** How often a spool the local disk could not take is tried again. */
const SPOOL_RETRY_MS = 1_000
/**
 * How often a running gateway looks for spools of gateways no longer running (one that died
 * beside it on a shared data dir, or one the database could not take yet). A look with none to
 * write is a directory read, and a lock tried for each live gateway's spool.
 */
const REPLAY_EVERY_MS = 5_000

export class Recorder implements GenerationSink {
  readonly store: GenerationStore
  private queue: GenerationRow[] = []
  /** Writes failed in a row: paces the retries. */
  private failures = 0
  /**
   * Of those, ordinary errors (not a database that is full or away): past MAX_ATTEMPTS the batch
   * is given up. Counted apart, so a long wait for room never spends a batch's tries for it.
   */
  private errors = 0
  private flushTimer?: ReturnType<typeof setTimeout>
  private pruneTimer?: ReturnType<typeof setInterval>
  private firstPrune?: ReturnType<typeof setTimeout>
  private pruning?: Promise<number>
  private stopped = false
  private readonly flushDelayMs: number
  private readonly maxQueue: number
  private readonly pruneEveryMs: number
  private readonly maxBacklog: number
  private readonly pruneChunk: number
  /** Records of the write in progress (out of the queue until it commits or fails). */
  private writingRows = 0
  private readonly spool?: Spool
  /** A write failed with the database away or full: every record waiting is in the spool, or about to be. */
  private spooling = false
  /** Queued while spooling and not in the spool yet: appended one flush delay after the first of them. */
  private unspooled: GenerationRow[] = []
  private spoolTimer?: ReturnType<typeof setTimeout>
  /** The last append to the spool failed (the local disk full): new generations are refused. */
  private spoolFailing = false
  /** Writes the spools of gateways no longer running (spool-replay.ts). */
  private readonly replayer?: SpoolReplay
  private replayTimer?: ReturnType<typeof setInterval>
  /**
   * Rows of a write that failed: its COMMIT may have taken effect with its answer lost (the
   * connection dropped in between). A later write that finds one of them stored finds it stored
   * by that attempt (ids are the gateway's own, fresh per record): its charge ends as stored.
   */
  private readonly tried = new WeakSet<GenerationRow>()

  constructor(private deps: RecorderDeps, opts: RecorderOptions = {}) {
    this.store = new GenerationStore(deps.storage)
    this.flushDelayMs = opts.flushDelayMs ?? 25
    this.maxQueue = opts.maxQueue ?? 256
    this.pruneEveryMs = opts.pruneEveryMs ?? 3_600_000
    this.maxBacklog = opts.maxBacklog ?? 10_000
    this.pruneChunk = opts.pruneChunk ?? PRUNE_CHUNK
    if (opts.spoolDir) {
      this.spool = new Spool(opts.spoolDir)
      this.replayer = new SpoolReplay({ ...deps, spool: this.spool, store: this.store, retentionDays: () => this.retentionDays, writeIn: (q, rows, spend) => this.writeIn(q, rows, spend) })
    }
    deps.billing.chargesDue = this.recordAllSoon
  }

  /**
   * Records wait for a database that failed to take them, past the bound: a generation now would
   * be served unrecorded, so new ones are refused (507) until the backlog is written.
   */
  get backlogged(): boolean {
    // a record that could not be kept on disk would be lost to a kill: none is served meanwhile
    if (this.spoolFailing) return true
    // this process's records only: a spool a dead gateway left is on the disk already, whoever
    // writes it, and a peer's outage backlog must not refuse this one's generations sooner
    return this.failures > 0 && this.queue.length + this.writingRows >= this.maxBacklog
  }

  /** Why generations are refused, when it is not the bound (`backlogged`). */
  get backlogNote(): string | undefined {
    return this.spoolFailing ? 'generation records are waiting for the database and the local disk cannot keep them (full?)' : undefined
  }

  get retentionDays(): number {
    const d = this.deps.config.generations.retentionDays
    // the config refuses less; a config built by hand still never keeps records shorter
    return Number.isFinite(d) ? Math.max(MIN_RETENTION_DAYS, d) : DEFAULT_RETENTION_DAYS
  }

  /** Records still being counted, each with its record at the cheap bound (what a stop takes when the count is late). */
  private readonly pending = new Map<Promise<unknown>, { taken: boolean; rough?: () => GenerationInput; whose?: Whose }>()

  recordLater(input: Promise<GenerationInput>, rough?: () => GenerationInput, whose?: Whose): void {
    const late = { taken: false, rough, whose }
    const p = input
      .then((i) => {
        if (late.taken) return
        late.taken = true
        return this.record(i)
      })
      .catch((e) => this.deps.log.error('recorder: a late record failed', { error: String(e) }))
    this.pending.set(p, late)
    void p.finally(() => this.pending.delete(p))
  }

  /** The records still being counted, recorded now at the cheap bound (their counts, when they come, are dropped). */
  private recordRough(): void {
    for (const late of this.pending.values()) {
      if (late.taken || !late.rough) continue
      late.taken = true
      try {
        this.record(late.rough())
      } catch (e) {
        this.deps.log.error('recorder: a late record failed', { error: String(e) })
      }
    }
  }

  /**
   * Waits (at most `maxMs`) for records still being counted: those of one key or account when
   * `of` says (a key's lookup does not wait for another's cut streams; one of unknown owner is
   * waited for all the same), else every one; at once when there are none.
   */
  async settled(maxMs = 2_000, of?: Partial<Whose>): Promise<void> {
    // what was to begin on the next turn (a cut stream's tap read, then its count) begins now
    this.recordAllSoon()
    if (this.pending.size === 0) return
    const mine = (w?: Whose) => !of || !w || ((of.keyId === undefined || of.keyId === w.keyId) && (of.account === undefined || of.account === w.account))
    const waiting = [...this.pending].filter(([, late]) => mine(late.whose)).map(([p]) => p)
    if (waiting.length === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([Promise.allSettled(waiting), new Promise<void>((r) => (timer = setTimeout(r, maxMs)))])
    clearTimeout(timer)
  }

  /** Work to run on the next turn of the loop, or at once before any flush or lookup. */
  private soon: (() => void)[] = []

  recordSoon(input: GenerationInput): void {
    this.later(() => void this.record(input))
  }

  /**
   * Runs `fn` (which ends in a record: a reply's tap read after the reply went out) on the next
   * turn of the loop; a flush or lookup before then runs it first, so it is never missed.
   */
  later(fn: () => void): void {
    if (this.stopped) return fn()
    this.soon.push(fn)
    if (this.soon.length === 1) setImmediate(this.recordAllSoon)
  }

  private readonly recordAllSoon = () => {
    // what runs may queue more (a read ends in recordSoon): until nothing is left
    while (this.soon.length > 0) {
      const fns = this.soon
      this.soon = []
      for (const fn of fns) {
        try {
          fn()
        } catch (e) {
          this.deps.log.error('recorder: a deferred record failed', { error: String(e) })
        }
      }
    }
  }

  /** Returns the record's gateway id (`gen-…`), or undefined if it could not be taken. */
  record(input: GenerationInput): string | undefined {
    const billing = this.deps.billing
    let row: GenerationRow
    try {
      const sane = plausibleUsage(input.usage)
      if (sane.implausible.length > 0) {
        this.deps.log.warn('recorder: usage no reply can have, counted as 0', { model: input.model.id, counts: sane.implausible.join(',') })
        input = { ...input, usage: sane.usage }
      }
      // cost is computed here, once, at the prices in force when the request was made; it is
      // stored, so a later price change never rewrites history
      row = toRow(input, this.costOf(input), input.recordId ?? newGenerationId())
    } catch (e) {
      // whatever failed, the reservation must end: it would hold the key's credit
      billing.release(input.reservationId === undefined ? undefined : { reservationId: input.reservationId })
      this.deps.log.error('recorder: could not queue a generation record', { error: (e as Error).message })
      return undefined
    }
    billing.charge(row.apiKeyId, input.reservationId, row.cost)
    this.queue.push(row)
    if (this.spooling) this.toSpool(row)
    // after shutdown began, nothing will flush later: write now
    // while writes fail, the retry timer paces them: not one attempt per new record
    if (this.stopped || (this.queue.length >= this.maxQueue && this.failures === 0)) void this.flush()
    else this.flushTimer ??= setTimeout(() => this.flush(), this.flushDelayMs)
    return row.id
  }

  /** The write in progress: writes run one after another, in queue order. */
  private writing: Promise<void> = Promise.resolve()

  /** Write everything queued, in one transaction. Never throws. */
  flush(): Promise<void> {
    this.recordAllSoon()
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    this.writing = this.writing.then(() => this.flushQueued())
    return this.writing
  }

  private async flushQueued(): Promise<void> {
    if (this.queue.length === 0) return
    const batch = this.queue
    this.queue = []
    this.writingRows = batch.length
    try {
      await this.write(batch)
      this.failures = 0
      this.errors = 0
    } catch (e) {
      this.failures++
      // a database that is away (PostgreSQL restarting) or full is waited for, not given up on:
      // the records stay queued with their spend settled (held against their keys), and new
      // generations are refused with 507 while the backlog is past its bound (`backlogged`)
      const waited = isStoreAway(e)
      if (!waited) this.errors++
      // and kept on the local disk meanwhile: a kill now loses none of them
      if (waited) this.startSpool(batch)
      const retry = (waited || this.errors < MAX_ATTEMPTS) && !this.stopped
      this.deps.log.error('recorder: writing generation records failed', {
        error: (e as Error).message,
        records: batch.length,
        retry,
      })
      if (retry) this.retryLater(batch)
      else if (waited && this.spooledAll()) {
        // stopping with the database away: the next start writes them from the spool. Not
        // given up, so their costs stay counted where they were (Redis's running spend)
        this.deps.log.warn('recorder: generation records kept in the spool for the next start', { records: batch.length })
        return
      } else {
        this.failures = 0
        this.errors = 0
        // one record the database refuses must not take the rest of its batch with it
        const refused = batch.length > 1 && !waited ? await this.writeEach(batch) : batch
        if (refused.length > 0) {
          this.deps.log.error('recorder: generation records given up', { records: refused.length, ids: refused.map((r) => r.id).slice(0, 10) })
          // given up: their charged costs will never be stored
          this.abandon(refused)
        }
      }
    } finally {
      this.writingRows = 0
    }
    // every record of the spool is stored (committed, or given up): the spool goes
    if (this.spooling && this.failures === 0) this.endSpool()
  }

  /** The first write the database could not take: everything waiting goes to the spool, and each record queued after it. */
  private startSpool(batch: GenerationRow[]) {
    if (!this.spool || this.spooling) return
    this.spooling = true
    this.unspooled = batch.concat(this.queue)
    this.spoolNow()
  }

  private toSpool(row: GenerationRow) {
    this.unspooled.push(row)
    // after shutdown began, no timer will fire
    if (this.stopped) this.spoolNow()
    else this.spoolTimer ??= setTimeout(() => this.spoolNow(), this.flushDelayMs)
  }

  /** Appends what is not in the spool yet; false when the disk would not take it (tried again in a while, 507 meanwhile). */
  private spoolNow(): boolean {
    if (this.spoolTimer) clearTimeout(this.spoolTimer)
    this.spoolTimer = undefined
    if (!this.spool || this.unspooled.length === 0) return true
    try {
      this.spool.append(this.unspooled)
    } catch (e) {
      if (!this.spoolFailing) this.deps.log.error('recorder: records waiting for the database could not be kept on the local disk; new generations are refused (507) until they can', { error: (e as Error).message, records: this.unspooled.length })
      this.spoolFailing = true
      if (!this.stopped) this.spoolTimer = setTimeout(() => this.spoolNow(), SPOOL_RETRY_MS)
      return false
    }
    if (this.spoolFailing) this.deps.log.info('recorder: records waiting for the database are kept on the local disk again', { records: this.unspooled.length })
    this.unspooled = []
    this.spoolFailing = false
    return true
  }

  /** Whether every record waiting is in the spool (what is not yet is appended now). */
  private spooledAll(): boolean {
    return this.spooling && this.spoolNow()
  }

  /** The database took every record the spool holds: it goes. Records queued meanwhile wait in memory, as any while the database is there. */
  private endSpool() {
    // a test's kill here: records stored and still in the spool (the next start counts none twice)
    killIfAsked()
    this.spooling = false
    this.unspooled = []
    this.spoolFailing = false
    if (this.spoolTimer) clearTimeout(this.spoolTimer)
    this.spoolTimer = undefined
    try {
      this.spool?.clear()
    } catch (e) {
      this.deps.log.error('recorder: removing the records spool failed', { error: (e as Error).message })
    }
  }

  /**
   * Spools left by gateways no longer running (killed while their database was away), written
   * to the database: their records, their rollup and their keys' spend, each record once however
   * often it is written (an id stored already is skipped, with its cost). Their costs were
   * charged by the process that died (a shared ledger, Redis, counts them already): only the
   * database's figures move. A start calls it before it serves; a running gateway every few
   * seconds too (`start`), for a gateway that dies beside it on a shared data dir. A spool the
   * database cannot take yet stays, and is tried again then (its records, on the disk, are not
   * this gateway's backlog: `backlogged`).
   */
  replaySpools(): Promise<void> {
    return this.replayer?.look() ?? Promise.resolve()
  }

  /** The rows go back to the head of the queue, written again after a pause that grows with the failures. */
  private retryLater(rows: GenerationRow[]) {
    // a record queued meanwhile set a timer of its own: the pause sets the pace, not it
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.queue = rows.concat(this.queue)
    this.flushTimer = setTimeout(() => void this.flush(), Math.min(100 * this.failures, 2_000))
  }

  /**
   * A batch that kept failing, written a record at a time; returns the records the database
   * still refuses. A database that goes away or fills up meanwhile: the records not yet written
   * go back to the queue.
   */
  private async writeEach(batch: GenerationRow[]): Promise<GenerationRow[]> {
    const refused: GenerationRow[] = []
    for (let i = 0; i < batch.length; i++) {
      try {
        await this.write([batch[i]!])
      } catch (e) {
        if (isStoreAway(e)) {
          // waited for, as ever; at shutdown nothing waits, and the rest are given up with it
          if (this.stopped) refused.push(...batch.slice(i))
          else {
            this.failures = 1
            this.startSpool(batch.slice(i))
            this.retryLater(batch.slice(i))
          }
          break
        }
        refused.push(batch[i]!)
      }
    }
    return refused
  }

  private async write(rows: GenerationRow[]) {
    // a shared ledger (Redis) counts their costs before the database does
    this.deps.billing.storing(new Set(rows.map((r) => r.apiKeyId)))
    // taken with the rows, before any await: a shared ledger ends exactly their reservations
    const spend = this.deps.billing.startWrite()
    let costs: Map<string, number> | undefined
    try {
      const inserted = await this.writeRows(rows, spend)
      costs = costsByKey(this.storedBy(rows, inserted))
      this.committed(rows, inserted)
    } catch (e) {
      for (const r of rows) this.tried.add(r)
      throw e
    } finally {
      // the database only moved: if the transaction rolled back, nothing in memory has
      spend.end(costs !== undefined, costs)
    }
  }

  /**
   * On PostgreSQL one statement, a round trip (GenerationStore.insertWhole); a batch that cannot
   * go that way (an id stored already, a value the JSON form refuses) goes the transaction's,
   * which stores what it can. Returns the rows stored.
   */
  private async writeRows(rows: GenerationRow[], spend: SpendWrite): Promise<GenerationRow[]> {
    const sql = this.deps.storage.sql
    if (sql.dialect === 'pg' && rows.length <= WHOLE_MAX) {
      try {
        await this.store.insertWhole(rows, spend.inline(costsByKey(rows)), sql)
        // a test's lost answer here: the records stored, and the write failing as the database away
        loseAnswerIfAsked()
        return rows
      } catch (e) {
        if (isStoreAway(e)) throw e
        if (!isNotWhole(e)) this.deps.log.warn('recorder: a batch of records went the long way', { records: rows.length, error: (e as Error).message })
      }
    }
    return sql.tx(
      async (q) => (await Promise.all([spend.begin(q), this.writeIn(q, rows, spend)]))[1],
      (inserted) => {
        // a test's lost answer here: the records stored, and the write failing as the database away
        loseAnswerIfAsked('records-tx')
        spend.end(true, costsByKey(this.storedBy(rows, inserted)))
      },
    )
  }

  /** Takes what is queued, to be written by the caller's transaction (`writeIn`, then `committed`). */
  take(): GenerationRow[] {
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    const rows = this.queue
    this.queue = []
    return rows
  }

  /** The records and their keys' spend, in the transaction `q`; the rows actually inserted. */
  async writeIn(q: Sql, rows: GenerationRow[], spend: Pick<SpendWrite, 'store'>): Promise<GenerationRow[]> {
    // the records, their rollup and their keys' spend all issued before any answer is awaited
    const [inserted] = await Promise.all([this.store.insertRows(rows, q), spend.store(q, costsByKey(rows))])
    if (inserted.length < rows.length) {
      // a record not stored (its id was) is charged nowhere: its cost is taken back off its key
      const lost = costsByKey(notStored(rows, inserted))
      await spend.store(q, new Map([...lost].map(([keyId, usd]) => [keyId, -usd])))
    }
    return inserted
  }

  /**
   * After the transaction of `writeIn` committed: records it did not store are given up, but
   * for those an earlier attempt of the same write stored (`tried`): their charge ended as stored.
   */
  committed(rows: GenerationRow[], inserted: GenerationRow[]) {
    if (inserted.length === rows.length) return
    const skipped = notStored(rows, inserted)
    const lost = skipped.filter((r) => !this.tried.has(r))
    if (lost.length < skipped.length) this.deps.log.info('recorder: generation records found stored by a write whose answer was lost', { records: skipped.length - lost.length })
    if (lost.length === 0) return
    this.abandon(lost)
    this.deps.log.error('recorder: generation records were not stored (id conflict)', { records: lost.length, ids: lost.map((r) => r.id).slice(0, 10) })
  }

  /**
   * The rows a write leaves stored: those it inserted, and those it skipped that an earlier
   * attempt of it stored (its commit's answer lost). Their costs are the write's stored costs:
   * `writeIn` took back from the keys' rows only what this attempt added for them.
   */
  private storedBy(rows: GenerationRow[], inserted: GenerationRow[]): GenerationRow[] {
    if (inserted.length === rows.length) return inserted
    return inserted.concat(notStored(rows, inserted).filter((r) => this.tried.has(r)))
  }

  /** Records that will never be stored: their charged costs are taken back. */
  abandon(rows: GenerationRow[]) {
    this.deps.billing.giveUp(costsByKey(rows))
  }

  /** The cost `record` would store for `input` (its usage made plausible first); never throws. */
  priced(input: GenerationInput): number | null {
    try {
      return this.costOf({ ...input, usage: plausibleUsage(input.usage).usage })
    } catch {
      return null
    }
  }

  private costOf(g: GenerationInput): number | null {
    // an answer from the response cache, or a cassette's, cost nothing upstream
    if (costsNothing(g)) return 0
    try {
      return this.deps.catalog.cost(g.model, g.usage, new Date(g.createdAt))
    } catch {
      return null
    }
  }

  /**
   * The record with this gateway id or reply id (the latest for a reused reply id). With
   * `keyId`, that key's records only; without, whoever owns it (the caller checks ownership).
   */
  async get(id: string, keyId?: string): Promise<GenerationRow | undefined> {
    await this.flush()
    return this.store.get(id, keyId)
  }

  /**
   * Delete records older than the retention in small steps (each an indexed delete of the
   * oldest records, generations_created), pausing after each as long as it took, so a large
   * backlog takes at most half the thread while requests go on. The hourly rollup is kept:
   * reports outlive records.
   */
  prune(now = Date.now()): Promise<number> {
    if (this.pruning) return Promise.resolve(0)
    this.pruning = this.pruneSteps(now)
    return this.pruning
  }

  private async pruneSteps(now: number): Promise<number> {
    let total = 0
    try {
      const before = now - this.retentionDays * DAY_MS
      // said before any record goes: a spool written again later tells the records it may hold
      // that were stored and then pruned (their ids gone) from those never stored
      await this.store.markPruned(before)
      const step = async () => {
        const deleted = await this.store.pruneSome(before, this.pruneChunk)
        return { deleted, more: deleted >= this.pruneChunk }
      }
      total = await pruneInSteps(step, () => this.stopped)
      if (total > 0) this.deps.log.info('recorder: pruned old generation records', { records: total, retention_days: this.retentionDays })
    } catch (e) {
      this.deps.log.error('recorder: pruning failed', { error: (e as Error).message })
    } finally {
      this.pruning = undefined
    }
    return total
  }

  /** Start background pruning (once soon after start, then periodically); stop with `onClose`. */
  start(onClose?: (() => void | Promise<void>)[]): this {
    const run = () => void this.prune()
    this.firstPrune = setTimeout(run, 1_000)
    this.firstPrune.unref?.()
    this.pruneTimer = setInterval(run, this.pruneEveryMs)
    this.pruneTimer.unref?.()
    // spools left by gateways no longer running: not only at a start (a start replays them before it serves)
    if (this.spool) {
      const look = () => this.replaySpools().catch((e) => this.deps.log.error('recorder: looking for spools of gateways no longer running failed', { error: (e as Error).message }))
      this.replayTimer = setInterval(look, REPLAY_EVERY_MS)
      this.replayTimer.unref?.()
    }
    onClose?.push(() => this.stop())
    return this
  }

  /** Stop timers, let records still being counted arrive, and write what is queued; later records are written synchronously. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.pruneTimer) clearInterval(this.pruneTimer)
    if (this.replayTimer) clearInterval(this.replayTimer)
    if (this.firstPrune) clearTimeout(this.firstPrune)
    // a prune step under way ends before stop does: none deletes what is recorded after it
    await this.pruning
    await this.flush()
    // late records write themselves once they arrive (stopped: at once); wait for them a while.
    // A stream cut at the stop is counted in a worker below the request thread's priority, which
    // a busy machine may keep waiting for tens of seconds (its tables still loading): past the
    // wait, such a record is written at the cheap bound, never lost
    await this.settled(STOP_WAIT_MS)
    this.recordRough()
    await this.flush()
    await this.replayer?.idle()
    if (this.spoolTimer) clearTimeout(this.spoolTimer)
    // a spool still open holds records the database never took: it stays for the next start
    this.spool?.close()
  }
}

/** The rows of a write that its insert skipped. */
function notStored(rows: GenerationRow[], inserted: GenerationRow[]): GenerationRow[] {
  const stored = new Set(inserted)
  return rows.filter((r) => !stored.has(r))
}
