// The batch scheduler (main thread). It reads pending items from the database in input order,
// admits each against the key's credit (the same reservation as an interactive request) and
// hands it to the worker pool, whose results writer stores the item's result with the
// generation records of its attempts in one transaction (results-writer.ts): an item is billed
// exactly once, when it completes. The costs those records stored come back to billing
// (fromWorker, on the pool's message) before the item's reservation is released.
//
// State lives in the database. What is in flight is marked there as it is handed out (on
// PostgreSQL a claim under a lease, leases.ts; on SQLite a mark, marks.ts), and an item marked by
// a process that died may have reached the upstream: it fails with LOST_ITEM, never sent twice.
// A round is marked before its admission; an item admission refuses for now (credit the key's
// other requests hold, the shared store away) waits unsent, so its mark goes again (on SQLite it
// waits here; on PostgreSQL its claim goes back to every instance): one statement a turn for
// all those, in the batch's chain, so that it never takes the mark of an item handed out again.
// An item whose worker died is one of those if its upstream call never began (it runs again, no
// mark against it); if its call may have begun, it fails with LOST_ITEM at once, never sent twice.
// A mark the database would not take back (away) is read at the next start beside the journal of
// the items this process sent (sent-journal.ts): one it does not name was never sent, and runs then.
// A batch runs min(settings.concurrency, batches.max_concurrency) items at once, and
// batches running together share the instance's places (batches.max_in_flight) and its pace
// evenly between keys, then between one key's batches (fair-share.ts).
//
// This file is what the batch service calls, and decides what is handed out and when: a batch's
// places and the pace, reading ahead (claiming, on PostgreSQL), marking a round. Its parts, each
// given what it needs of the others: a batch's state here (active.ts); one item handed out,
// admitted and sent to a worker (dispatch.ts); items kept waiting unsent, whose marks go
// (unsent.ts); the results of items that ran nowhere (landing.ts); how a batch ends, completed or
// early (ending.ts); which batches this instance runs, at its start and beside other instances
// or gateways on its store (sharing.ts).
import type { Bus } from '../cluster/bus.ts'
import type { ApiKey } from '../http/context.ts'
import type { DeleteReason, FileRecord } from '../files/types.ts'
import type { BatchServices } from '../services.ts'
import { endpointAvailable } from './endpoints.ts'
import { batchShares, roundRobin } from './fair-share.ts'
import { Pace } from './pace.ts'
import type { WorkerPool } from './pool.ts'
import { ItemLeases } from './leases.ts'
import { InFlightMarks } from './marks.ts'
import { RunnerLock } from './runner-lock.ts'
import { sharesDataDir } from '../db/data-dir-lock.ts'
import { isStoreAway } from '../db/unavailable.ts'
import type { BatchStore, ClaimedItem, EndKind } from './store.ts'
import type { BatchRow } from './types.ts'
import { newActive, RECHECK_MS, serial, SHARED_DOWN_RETRY_MS, wants, type Active } from './active.ts'
import { Landing } from './landing.ts'
import { Ending } from './ending.ts'
import { Sharing } from './sharing.ts'
import { Unsent } from './unsent.ts'
import { Dispatch } from './dispatch.ts'
import { SentJournal, sentJournalDir } from './sent-journal.ts'

/** Pending items read at once, ahead of need. */
const READ_AHEAD = 64
/** Under a pace, the time between two rounds of handing out. */
const TICK_MS = 5

export class Scheduler {
  private readonly active = new Map<string, Active>()
  private closed = false
  private readonly pace: Pace
  /** Batches waiting for the pace to grant starts. */
  private readonly paced = new Set<Active>()
  private tick?: ReturnType<typeof setTimeout>
  /** Instances sharing a database: items are claimed under a lease (leases.ts); else none. */
  private readonly leases?: ItemLeases
  /** Alone on SQLite: items are marked in flight as they are handed out (marks.ts). */
  private readonly marks?: InFlightMarks
  /** Each batch's places while several run (fair-share.ts): worked out once per turn of the loop. */
  private shares?: Map<string, number>
  /** Batches held below their own concurrency by their share: filled again when any item ends. */
  private readonly throttled = new Set<Active>()
  /** Pace ticks so far: where the next one starts handing out (fair-share.ts roundRobin). */
  private ticks = 0
  /** Results of items that ran nowhere, queued and written in chunks. */
  private readonly landing: Landing
  /** How batches end. */
  private readonly ending: Ending
  /** Which batches run here, and keeping them in step with other instances. */
  private readonly sharing: Sharing
  /** Items handed out and kept waiting, never sent: their marks go. */
  private readonly unsent: Unsent
  /** One item handed out: admitted, sent to a worker, and what comes of it. */
  private readonly dispatching: Dispatch
  /** Which of this process's claimed (marked) items made their upstream call: a next start gives back the others (sent-journal.ts). */
  private readonly journal: SentJournal

  constructor(
    private readonly s: BatchServices,
    private readonly store: BatchStore,
    private readonly pool: WorkerPool,
  ) {
    this.pace = new Pace(s.config.batches.maxItemsPerSecond)
    // SQLite: this process runs the batches while it holds the runner lock (runner-lock.ts), and
    // when other gateways may serve from the data dir it looks at the open batches they store
    let runner: RunnerLock | undefined
    let looks = false
    if (s.storage.dialect === 'pg') this.leases = new ItemLeases(store.sql, s.config.batches.leaseMs)
    else {
      this.marks = new InFlightMarks(store.sql)
      runner = new RunnerLock(s.config.dataDir, s.log)
      looks = sharesDataDir(s.config)
    }
    this.journal = new SentJournal(sentJournalDir(s.config.dataDir), (this.leases ?? this.marks)!.owner, s.log)
    pool.journal = (items) => this.journal.called(items)
    // each part is given what it needs of the others, called when it needs it
    const closed = () => this.closed
    const ended = (status: 'succeeded' | 'failed', n?: number) => this.ended(status, n)
    const fill = (a: Active) => this.fill(a)
    const fillLater = (a: Active) => this.fillLater(a)
    const maybeEnd = (a: Active) => this.ending.maybeEnd(a)
    const track = (row: BatchRow) => this.track(row)
    const { leases, marks, active, journal } = this
    this.landing = new Landing({ s, store, closed, ended, fillLater, maybeEnd })
    this.ending = new Ending({
      s, store, leases, active, closed, ended, fill, fillLater, track,
      standby: () => this.sharing.standby,
      tell: (id) => this.sharing.tell(id),
      shared: leases !== undefined || looks,
      sweep: () => this.sharing.sweep(),
    })
    this.sharing = new Sharing({
      s, store, leases, marks, runner, looks, active, closed, ended, fill, track, maybeEnd,
      failIfInputGone: (row) => this.ending.failIfInputGone(row),
      checkExpiry: () => this.ending.checkExpiry(),
    })
    this.unsent = new Unsent({ s, leases, marks, closed })
    this.dispatching = new Dispatch({
      s, pool, journal, closed, ended, fill, fillLater, maybeEnd,
      land: (a, idx, requestId, error, stored) => this.landing.land(a, idx, requestId, error, stored),
      waitUnsent: (a, idx) => this.unsent.waitUnsent(a, idx),
      wakeThrottled: () => this.wakeThrottled(),
    })
  }

  private get cfg() {
    return this.s.config.batches
  }

  /** Resume after a start: sweep half-made batches, fail what a killed process had in flight, carry on. */
  start(): Promise<void> {
    return this.sharing.start()
  }

  /** Instances sharing a database hear of each other's new and ended batches on the bus. Returns the unsubscribe. */
  attachBus(bus: Bus): () => void {
    return this.sharing.attachBus(bus)
  }

  /** A batch just created (stored only, when another gateway on the data dir runs the batches: it is told). */
  add(row: BatchRow): void {
    if (!this.sharing.standby) this.fill(this.track(row))
    this.sharing.tell(row.id)
  }

  /** Cancel: a queued or processing batch → cancelled; a finished one → 400. */
  cancel(row: BatchRow): Promise<BatchRow> {
    return this.ending.cancel(row)
  }

  /** → failed, with the reason in `errors`. */
  fail(id: string, code: string, message: string): Promise<void> {
    return this.ending.fail(id, code, message)
  }

  /** Batches past their completion window expire; their items not yet run fail with batch_expired. */
  checkExpiry(now = Date.now()): Promise<void> {
    return this.ending.checkExpiry(now)
  }

  /** The files service's delete hook: a queued or processing batch reading the file fails. */
  onFileDeleted(file: FileRecord, reason: DeleteReason): Promise<void> {
    return this.ending.onFileDeleted(file, reason)
  }

  /** Stores landed results (nothing ran for them: no records). */
  flush(): Promise<void> {
    return this.landing.flush()
  }

  /** Resolves once every batch that can end has ended (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.active.values()].map((a) => a.chain))
    while (this.ending.finalizing.size > 0) await Promise.allSettled([...this.ending.finalizing])
  }

  /** Stop handing out items; let those in flight land (bounded by the pool), store them, stop. */
  async close(graceMs: number): Promise<void> {
    this.closed = true
    this.sharing.stop()
    if (this.tick) clearTimeout(this.tick)
    await this.pool.close(graceMs)
    await this.landing.drain()
    await Promise.race([this.idle(), Bun.sleep(graceMs)])
    // what this instance claimed and never sent goes back to the others at once; what a worker
    // held when the grace ran out may have reached the upstream: its claim stays, to run out
    // and fail it as lost there, never sent again. Alone: the marks of items never sent go, so
    // they run after the restart
    let given = true
    const notGiven = () => void (given = false)
    for (const a of this.active.values()) await (this.leases ? this.leases.dropExcept(a.id, a.cut) : this.marks!.giveBack(a.id, a.cut)).catch(notGiven)
    // claims the database would not take back (away): the journal says at the next start which were never sent
    this.journal.close(!given)
    // last: another gateway on the data dir takes over once its marks are as they stay
    this.sharing.release()
  }

  /** The batch's state here, made once. */
  private track(row: BatchRow): Active {
    let a = this.active.get(row.id)
    if (a) return a
    a = newActive(row, this.cfg.maxConcurrency)
    this.active.set(row.id, a)
    // an end that a crash interrupted: finish failing what had not run
    if (a.stopped && row.status !== 'completed') this.ending.endItems(a, row.status as EndKind)
    return a
  }

  /** Items that ended here (ran, refused, lost or failed by their batch's end), for the metrics. */
  private ended(status: 'succeeded' | 'failed', n = 1): void {
    if (n > 0) this.s.metrics?.batches.item(status, n)
  }

  /** Items in flight across all batches. */
  get inFlight(): number {
    let n = 0
    for (const a of this.active.values()) n += a.inflight.size
    return n
  }

  /**
   * Under a pace, batches are filled on a tick (a few ms apart), so each tick hands a worker
   * a handful of items in one message; without one, as soon as places free up.
   */
  private fillLater(a: Active) {
    if (!this.pace.unlimited) {
      this.paced.add(a)
      this.tick ??= setTimeout(() => {
        this.tick = undefined
        const held = [...this.paced]
        this.paced.clear()
        // the starts this tick can grant, one at a time key by key, then batch by batch
        const rooms = held.map((h) => ({ id: h.id, keyId: h.keyId, cap: h.cap, room: Math.min(h.cap, this.shareOf(h)) - h.inflight.size }))
        const budgets = roundRobin(this.pace.available(), rooms, this.ticks++)
        for (const h of held) this.fill(h, budgets.get(h.id) ?? 0)
      }, Math.max(TICK_MS, this.pace.waitMs()))
      return
    }
    if (a.fillSoon) return
    a.fillSoon = true
    setImmediate(() => {
      a.fillSoon = false
      this.fill(a)
    })
  }

  /**
   * A batch's key that this instance has not loaded yet: one made on another instance moments
   * before the batch, whose change this one has not read yet. Read from the database; null when
   * the database could not answer (tried again in a second, the batch left as it is).
   */
  private async keyFromStore(a: Active): Promise<ApiKey | undefined | null> {
    try {
      await this.s.keys.reloadOne(a.keyId)
    } catch {
      setTimeout(() => this.fill(a), SHARED_DOWN_RETRY_MS).unref?.()
      return null
    }
    return this.closed ? null : this.s.keys.current(a.keyId)
  }

  /**
   * Shared, after a fill that failed part way: the claims this instance holds on the batch but
   * does not know of would be renewed for ever and run nowhere, so all but those of the items it
   * knows (in flight, read ahead, put back, waiting, cut at a close) are let go, for the next
   * claim (this one's or another instance's) to take in input order. Not while failures that ran
   * nowhere wait to be stored: an item lost with its worker keeps its claim until its failure is.
   */
  private async letGoUnknownClaims(a: Active): Promise<void> {
    if (!this.leases || a.queued > 0) return
    const known = [...a.inflight, ...a.ahead.map((i) => i.idx), ...a.again, ...a.back, ...a.cut]
    await this.leases.dropExcept(a.id, known)
    a.claimsUnsure = false
    a.exhausted = false
  }

  /** The next `n` items to hand out: put-back ones first, then in input order, read ahead in chunks. */
  private async next(a: Active, n: number): Promise<ClaimedItem[]> {
    const items: ClaimedItem[] = []
    while (a.again.length > 0 && items.length < n) {
      const idx = a.again.shift()!
      const [item] = await this.store.pending(a.id, idx, 1)
      if (item?.idx === idx) items.push(item)
    }
    while (items.length < n) {
      if (a.ahead.length === 0) {
        if (a.exhausted) break
        // shared: claimed (leased) here, wherever they are, only as many as run now (what one
        // instance holds ahead, the others cannot take); alone: read ahead from the cursor on
        const want = this.leases ? n - items.length : READ_AHEAD
        if (this.leases) {
          // the batch's other places are other instances': look again when one may be free, or
          // when an item of this one ends
          const { items: claimed, limited } = await this.leases.claim(a.id, want, a.cap)
          a.ahead = claimed
          if (limited) {
            if (a.inflight.size === 0 && items.length + claimed.length === 0) setTimeout(() => this.fill(a), RECHECK_MS).unref?.()
            items.push(...a.ahead.splice(0))
            break
          }
        } else a.ahead = await this.store.pending(a.id, a.cursor, READ_AHEAD)
        if (a.ahead.length < want) a.exhausted = true
        if (a.ahead.length > 0) a.cursor = a.ahead.at(-1)!.idx + 1
        if (a.ahead.length === 0) break
      }
      items.push(...a.ahead.splice(0, n - items.length))
    }
    return items
  }

  /** The batch's places while others run too: its own concurrency when it runs alone. */
  private shareOf(a: Active): number {
    if (!this.shares) {
      const wanting = [...this.active.values()].filter((b) => wants(b))
      this.shares = batchShares(this.cfg.maxInFlight, wanting)
      setImmediate(() => (this.shares = undefined))
    }
    return this.shares.get(a.id) ?? a.cap
  }

  /** An item ended: batches held back by their share may have room now. */
  private wakeThrottled(): void {
    if (this.throttled.size === 0) return
    const held = [...this.throttled]
    this.throttled.clear()
    for (const h of held) if (this.active.get(h.id) === h) this.fillLater(h)
  }

  /** Hands out items up to the batch's places (and the pace, of which it may take `budget`). */
  private fill(a: Active, budget?: number): void {
    serial(a, this.s.log, () =>
      this.fillNow(a, budget).catch((e) => {
        if (this.leases) a.claimsUnsure = true
        // the database away or full (a claim, a transition): tried again in a second, not left
        // until an item's end wakes the batch, as there may be none in flight to end
        if ((isStoreAway(e)) && !a.fillAgain) {
          a.fillAgain = true
          setTimeout(() => {
            a.fillAgain = false
            this.fill(a)
          }, SHARED_DOWN_RETRY_MS).unref?.()
        }
        throw e
      }),
    )
  }

  private async fillNow(a: Active, budget = Infinity): Promise<void> {
    if (this.closed) return
    if (a.claimsUnsure) await this.letGoUnknownClaims(a)
    if (!wants(a)) return this.ending.endCheck(a)
    const share = this.shareOf(a)
    const limit = Math.min(a.cap, share)
    if (share < a.cap) this.throttled.add(a)
    const room = limit - a.inflight.size
    const free = Math.min(room, budget)
    if (room <= 0 || (this.pace.unlimited && a.inflight.size > 0 && room < Math.max(1, Math.floor(limit / 4)))) return
    if (free <= 0) return this.fillLater(a)
    const key = this.s.keys.current(a.keyId) ?? (await this.keyFromStore(a))
    if (key === null) return
    if (!key || key.status !== 'active') return void this.fail(a.id, 'key_inactive', 'the API key of this batch was deleted or disabled')
    if (!endpointAvailable(a.endpoint)) return void this.fail(a.id, 'endpoint_unavailable', `the endpoint ${a.endpoint} is not available on this gateway`)
    const grant = this.pace.take(free)
    if (grant < room) this.fillLater(a)
    if (grant === 0) return
    // a claim (a mark, alone) is taken for sent when this process dies, so none is made before
    // the workers can take it at once: a new process's take a second or more to start, and a
    // kill -9 meanwhile failed as lost the items they had not been posted
    if (!(await this.pool.warm())) return this.fillLater(a)
    // the journal names whose claims it holds before the first one
    this.journal.ready()
    let items = await this.next(a, grant)
    if (this.marks) {
      const marked = await this.marked(a, items)
      if (!marked) return
      // one that would not take its mark has a result: failed by an end on another gateway
      items = items.filter((i) => marked.has(i.idx))
    }
    if (items.length > 0 && a.status === 'queued') {
      a.status = 'processing'
      await this.store.transition(a.id, ['queued'], { status: 'processing', inProgressAt: Date.now() })
    }
    // one object for every job of this round: a message carries it once
    const workerKey = { ...key, credits: null }
    for (const item of items) this.dispatching.dispatch(a, key, workerKey, item)
    if (items.length === 0) await this.ending.endCheck(a)
  }

  /**
   * Alone: a round is marked in flight, in one statement, before any of it can reach the upstream.
   * One the database would not mark waits, unsent, and is tried again in a second.
   */
  private async marked(a: Active, items: ClaimedItem[]): Promise<Set<number> | null> {
    try {
      return await this.marks!.mark(a.id, items.map((i) => i.idx))
    } catch (e) {
      this.s.log.warn('batches: marking items in flight failed; trying again', { batch_id: a.id, error: (e as Error).message })
      a.again.unshift(...items.map((i) => i.idx))
      setTimeout(() => this.fill(a), SHARED_DOWN_RETRY_MS).unref?.()
      return null
    }
  }
}
