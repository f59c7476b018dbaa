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
// A batch runs min(settings.concurrency, batches.max_concurrency) items at once, and
// batches running together share the instance's places (batches.max_in_flight) and its pace
// evenly between keys, then between one key's batches (fair-share.ts).
//
// Several gateways on one SQLite data dir (sharing Redis): one runs the batches, the holder of
// the runner lock (runner-lock.ts). The others store the batches they are given and tell it (the
// bus, and its look at the open batches); a cancel there fails the items it has not marked, and
// it sees the end at its next look. One that takes the lock later starts as the runner, as a
// restart does.
import type { Bus } from '../cluster/bus.ts'
import type { ApiKey } from '../http/context.ts'
import type { DeleteReason, FileRecord } from '../files/types.ts'
import { HttpError } from '../http/errors.ts'
import { CreditsExhausted, type Admission, type AdmitInput } from '../billing/admission.ts'
import type { BatchServices } from '../services.ts'
import { STALE_INGEST_MS, sweepIngests } from './create/writer.ts'
import { endpointAvailable } from './endpoints.ts'
import { writeOutputFiles } from './output-files.ts'
import { batchShares, roundRobin } from './fair-share.ts'
import { Pace } from './pace.ts'
import { CallStartedError, NotTakenError, type WorkerPool } from './pool.ts'
import { itemErrorOf } from './run-item.ts'
import { batchRequestId } from './shapes.ts'
import { INPUT_GONE, inputFileGone, inputGoneMessage } from './input-file.ts'
import { ItemLeases } from './leases.ts'
import { InFlightMarks } from './marks.ts'
import { RunnerLock } from './runner-lock.ts'
import { sharesDataDir } from '../db/data-dir-lock.ts'
import type { BatchStore, ClaimedItem, EndKind, ResultWrite } from './store.ts'
import { FINAL, ITEM_CODES, LOST_ITEM, type BatchRow, type BatchStatus, type ItemError, type Settled } from './types.ts'
import { nextTurn } from '../lib/turn.ts'
import { itemAdmitInput, ItemHold } from './item-hold.ts'

/** Results are written together, at most this long after the first of them arrived… */
const FLUSH_MS = 5
/** …at most this many per transaction, with a turn of the loop between two (interactive requests go first). */
const FLUSH_CHUNK = 32
/** Pending items failed per transaction when a batch ends early. */
const END_CHUNK = 2_000
const EXPIRY_CHECK_MS = 30_000
/** Pending items read at once, ahead of need. */
const READ_AHEAD = 64
/** Under a pace, the time between two rounds of handing out. */
const TICK_MS = 5
/** Instances sharing a database: how often leases are renewed and other instances' batches looked for. */
const SHARE_MS = 1_000
/**
 * …and, with no batch open here and a change bus that tells of new ones, how many of those
 * periods go by between two looks (for a message the bus lost).
 */
const QUIET_SHARES = 5
const TOPIC = 'batches'
/** …and how soon items held elsewhere, or an end another instance is writing, are looked at again. */
const RECHECK_MS = 500
/** An item whose admission found the shared store away, or a fill the database could not answer, tries again after this. */
const SHARED_DOWN_RETRY_MS = 1_000
/** An item refused while only the key's other requests held its credit: looked at again this soon. */
const CREDIT_HELD_RETRY_MS = 100
/** One SQLite data dir, another gateway running its batches: how often this one tries the runner lock. */
const TAKE_OVER_MS = 2_000

/** What the items not yet run of a batch ended early fail with. */
const END_ERRORS: Record<EndKind, ItemError> = {
  cancelled: { code: ITEM_CODES.cancelled, status: 499, message: 'the batch was cancelled before this item ran' },
  expired: { code: ITEM_CODES.expired, status: 408, message: 'the batch expired before this item ran' },
  failed: { code: ITEM_CODES.failed, status: 410, message: 'the batch failed before this item ran' },
}

interface Active {
  id: string
  keyId: string
  endpoint: string
  status: BatchStatus
  /** Items run at once. */
  cap: number
  /** Indexes handed to a worker and not yet answered. */
  inflight: Set<number>
  /** Results waiting for the next write. */
  queued: number
  /** Every item with a smaller index has been handed out (or has a result). */
  cursor: number
  /** Items put back when their worker died: handed out again first. */
  again: number[]
  /** Pending items read ahead of the cursor's past, not handed out yet. */
  ahead: ClaimedItem[]
  /** No pending row was left past the cursor at the last read. */
  exhausted: boolean
  /** Ended early (cancel, expiry, failure): nothing more is handed out. */
  stopped: boolean
  /** Failing the pending items of an early end, chunk by chunk. */
  ending: boolean
  finalizing: boolean
  /** Indexes a worker held when the pool closed: they may have been sent, and keep their marks (their claims on PostgreSQL). */
  cut: number[]
  /** Indexes refused for now at admission, never sent, whose marks (claims) are to go. */
  back: number[]
  /** A step taking those marks off is in the batch's chain. */
  backDue: boolean
  fillSoon: boolean
  /** The batch's fills and end checks, one after another (each reads the database). */
  chain: Promise<void>
  /** The last admission that waits for a shared ledger: the next one waits for it (input order). */
  admitting?: Promise<void>
}

interface Landed {
  a: Active
  write: ResultWrite
}


export class Scheduler {
  private readonly active = new Map<string, Active>()
  private landed: Landed[] = []
  private flushTimer?: ReturnType<typeof setTimeout>
  private flushNext = false
  private expiryTimer?: ReturnType<typeof setInterval>
  private closed = false
  private finalizing = new Set<Promise<void>>()
  private readonly pace: Pace
  /** Batches waiting for the pace to grant starts. */
  private readonly paced = new Set<Active>()
  private tick?: ReturnType<typeof setTimeout>
  /** Instances sharing a database: items are claimed under a lease (leases.ts); else none. */
  private readonly leases?: ItemLeases
  /** Alone on SQLite: items are marked in flight as they are handed out (marks.ts). */
  private readonly marks?: InFlightMarks
  /** SQLite: this process runs the batches while it holds this (runner-lock.ts). */
  private readonly runner?: RunnerLock
  /** SQLite, other gateways may serve from the data dir: the runner looks at the open batches they store. */
  private readonly looks: boolean = false
  /** The open batches were resumed here: a look may take up new ones (before, it would pass over a dead runner's marks). */
  private resumed = false
  private shareTimer?: ReturnType<typeof setInterval>
  /** The other instances' word of batches made or ended: looked for at once, not at the next share. */
  private bus?: Bus
  private quietTicks = 0
  /** Each batch's places while several run (fair-share.ts): worked out once per turn of the loop. */
  private shares?: Map<string, number>
  /** Batches held below their own concurrency by their share: filled again when any item ends. */
  private readonly throttled = new Set<Active>()
  /** Pace ticks so far: where the next one starts handing out (fair-share.ts roundRobin). */
  private ticks = 0

  constructor(
    private readonly s: BatchServices,
    private readonly store: BatchStore,
    private readonly pool: WorkerPool,
  ) {
    this.pace = new Pace(s.config.batches.maxItemsPerSecond)
    if (s.storage.dialect === 'pg') this.leases = new ItemLeases(store.sql, s.config.batches.leaseMs)
    else {
      this.marks = new InFlightMarks(store.sql)
      this.runner = new RunnerLock(s.config.dataDir, s.log)
      this.looks = sharesDataDir(s.config)
    }
  }

  /** Another gateway on this SQLite data dir runs the batches: this one stores them and tells it. */
  private get standby(): boolean {
    return this.runner !== undefined && !this.runner.held
  }

  private get cfg() {
    return this.s.config.batches
  }

  /** Resume after a start: sweep half-made batches, fail what a killed process had in flight, carry on. */
  async start(): Promise<void> {
    // one SQLite data dir: another gateway runs its batches; this one runs them once it stops
    if (this.runner && !this.runner.take()) {
      this.s.log.info('batches: another gateway on this data dir runs the batches; this one stores those it is given, and takes over if that one stops')
      this.runner.wait(TAKE_OVER_MS, () => void this.takeOver())
      return
    }
    await this.sweep()
    await this.resume()
  }

  /**
   * The items of creates a crash cut short go: every one when this process is alone on its store
   * (at its start), else only those older than any create takes (other gateways may be creating
   * batches now: create/writer.ts).
   */
  private async sweep(now = Date.now()): Promise<void> {
    const shared = this.leases !== undefined || this.looks
    const swept = await sweepIngests(this.store.sql, shared ? now - STALE_INGEST_MS : Infinity)
    if (swept > 0) this.s.log.info('batches: removed items of batches whose creation did not finish', { items: swept })
  }

  /**
   * The runner of this SQLite data dir stopped (or was killed): this process runs the batches now,
   * and what that one marked in flight fails as lost, as at a restart. Creations in progress on the
   * gateways still running are not swept (they may be this one's): only those a crash left long ago.
   */
  private async takeOver(again = false): Promise<void> {
    if (this.closed) return
    if (!again) this.s.log.info('batches: this process runs the batches now (the gateway that ran them stopped)')
    try {
      await this.resume()
    } catch (e) {
      this.s.log.error('batches: taking over the batches failed; trying again', { error: (e as Error).message })
      if (!this.closed) setTimeout(() => void this.takeOver(true), SHARED_DOWN_RETRY_MS).unref?.()
    }
  }

  private async resume(): Promise<void> {
    for (const row of await this.store.open()) {
      if (this.active.has(row.id)) continue
      // what the last process to run the batches marked and did not store may have reached the upstream
      const lost = this.marks ? await this.marks.failLost(row.id, LOST_ITEM) : 0
      this.ended('failed', lost)
      if (lost > 0) this.s.log.warn('batches: items in flight when the last process stopped failed, not sent again', { batch_id: row.id, items: lost })
      const a = this.track(row)
      if (row.succeeded + row.failed > 0 && !a.stopped) this.s.log.info('batches: resuming', { batch_id: row.id, done: row.succeeded + row.failed, total: row.total })
      await this.failIfInputGone(row)
    }
    void this.checkExpiry()
    this.expiryTimer ??= setInterval(() => void this.checkExpiry(), EXPIRY_CHECK_MS)
    this.expiryTimer.unref?.()
    if (this.leases || this.looks) {
      this.shareTimer ??= setInterval(this.shareTick, this.leases ? Math.min(SHARE_MS, this.leases.leaseMs / 3) : SHARE_MS)
      this.shareTimer.unref?.()
    }
    this.resumed = true
    for (const a of this.active.values()) this.fill(a)
  }

  /**
   * Instances sharing a database, every second or so: renew this instance's leases, take up
   * batches made or resumed elsewhere, stop those another instance ended or cancelled. The runner
   * of a SQLite data dir other gateways serve from: take up the batches they stored, stop those
   * they cancelled (no leases).
   */
  private sharing = false
  private shareAgain = false
  private async share(): Promise<void> {
    if (this.sharing || this.closed || !(this.leases || (this.looks && this.resumed))) return
    this.sharing = true
    try {
      if (this.leases) for (const a of this.active.values()) {
        await this.leases.renew(a.id)
        if (a.stopped) continue
        const lost = await this.leases.failLost(a.id, LOST_ITEM)
        this.ended('failed', lost)
        if (lost > 0) this.s.log.warn('batches: items of a stopped instance failed, not sent again', { batch_id: a.id, items: lost })
      }
      const open = new Map((await this.store.open()).map((r) => [r.id, r]))
      for (const [id, a] of this.active) {
        const row = open.get(id)
        // ended by another instance (its files written): nothing left here
        if (!row) {
          if (!a.finalizing && a.inflight.size === 0 && a.queued === 0) this.active.delete(id)
          continue
        }
        if (FINAL.has(row.status) && !a.stopped) {
          a.status = row.status
          a.stopped = true
          this.maybeEnd(a)
        }
      }
      for (const row of open.values()) {
        if (this.active.has(row.id)) continue
        this.fill(this.track(row))
      }
    } catch (e) {
      this.s.log.warn('batches: sharing work with other instances failed; trying again', { error: (e as Error).message })
    } finally {
      this.sharing = false
      if (this.shareAgain) {
        this.shareAgain = false
        void this.share()
      }
    }
  }

  /** Leases to renew every period; with nothing open here and a bus to say otherwise, a look every few. */
  private readonly shareTick = () => {
    if (this.active.size > 0 || !this.bus || ++this.quietTicks % QUIET_SHARES === 0) void this.share()
  }

  /** Instances sharing a database hear of each other's new and ended batches on the bus. Returns the unsubscribe. */
  attachBus(bus: Bus): () => void {
    this.bus = bus
    // a look under way may have read the open batches before this one was made: another after it
    const off = bus.subscribe(TOPIC, () => (this.sharing ? (this.shareAgain = true) : void this.share()))
    return () => {
      off()
      this.bus = undefined
    }
  }

  /** A batch just created (stored only, when another gateway on the data dir runs the batches: it is told). */
  add(row: BatchRow): void {
    if (!this.standby) this.fill(this.track(row))
    void this.bus?.publish(TOPIC, row.id)
  }

  private track(row: BatchRow): Active {
    let a = this.active.get(row.id)
    if (a) return a
    a = {
      id: row.id,
      keyId: row.apiKeyId,
      endpoint: row.endpoint,
      status: row.status,
      cap: Math.max(1, Math.min(row.concurrency ?? this.cfg.maxConcurrency, this.cfg.maxConcurrency)),
      inflight: new Set(),
      queued: 0,
      cursor: 0,
      again: [],
      ahead: [],
      exhausted: false,
      stopped: FINAL.has(row.status),
      ending: false,
      finalizing: false,
      cut: [],
      back: [],
      backDue: false,
      fillSoon: false,
      chain: Promise.resolve(),
    }
    this.active.set(row.id, a)
    // an end that a crash interrupted: finish failing what had not run
    if (a.stopped && row.status !== 'completed') this.endItems(a, row.status as EndKind)
    return a
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

  /** The index from which nothing has been handed out (items read ahead included). */
  private firstUnsent(a: Active): number {
    return a.ahead[0]?.idx ?? a.cursor
  }

  /** Runs `step` after the batch's earlier steps: a fill or an end check never sees another half done. */
  private serial(a: Active, step: () => Promise<void>): void {
    a.chain = a.chain.then(step).catch((e) => this.s.log.error('batches: scheduling failed', { batch_id: a.id, error: (e as Error)?.message ?? String(e) }))
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

  private wants(a: Active): boolean {
    return !a.stopped && !(a.exhausted && a.ahead.length === 0 && a.again.length === 0)
  }

  /** The batch's places while others run too: its own concurrency when it runs alone. */
  private shareOf(a: Active): number {
    if (!this.shares) {
      const wanting = [...this.active.values()].filter((b) => this.wants(b))
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
    this.serial(a, () => this.fillNow(a, budget))
  }

  private async fillNow(a: Active, budget = Infinity): Promise<void> {
    if (this.closed) return
    if (!this.wants(a)) return this.endCheck(a)
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
    for (const item of items) this.dispatch(a, key, workerKey, item)
    if (items.length === 0) await this.endCheck(a)
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

  private dispatch(a: Active, key: ApiKey, workerKey: ApiKey, item: ClaimedItem): void {
    const requestId = batchRequestId({ id: a.id } as BatchRow, item.idx)
    const model = this.s.catalog.resolve(item.model)
    if (!model) return this.land(a, item.idx, requestId, { status: 400, message: `model: unknown model "${item.model.slice(0, 80)}"`, code: 'invalid_request' })
    // in flight from here: an admission that waits for a shared ledger still holds its place
    a.inflight.add(item.idx)
    const refused = (e: unknown) => {
      a.inflight.delete(item.idx)
      // the shared store (Redis) is away: the item waits for it rather than fail
      if (e instanceof HttpError && e.status === 503) {
        this.waitUnsent(a, item.idx)
        return void setTimeout(() => this.fill(a), SHARED_DOWN_RETRY_MS).unref?.()
      }
      // 402 while the key's requests in progress hold its credit (this batch's other items among
      // them): they end at their real cost, below what they hold, and may leave room. The item
      // waits for them; an item that ends wakes the batch, the key's other requests do not
      if (e instanceof CreditsExhausted && e.held > 0) {
        this.waitUnsent(a, item.idx)
        if (a.inflight.size === 0) setTimeout(() => this.fill(a), CREDIT_HELD_RETRY_MS).unref?.()
        return
      }
      // 402: the key's credit is spent; the item fails as an interactive request would
      const { retryAfter: _, ...error } = itemErrorOf(e)
      this.land(a, item.idx, requestId, error)
    }
    let input: AdmitInput
    let admission: Admission | Promise<Admission>
    try {
      input = itemAdmitInput(key, model, item)
      // behind an admission still waiting for a shared ledger: items are admitted in input order
      admission = a.admitting ? a.admitting.then(() => this.s.billing.admit(input)) : this.s.billing.admit(input)
    } catch (e) {
      return refused(e)
    }
    if (admission instanceof Promise) {
      const settled = (a.admitting = admission.then(
        () => {},
        () => {},
      ))
      void settled.then(() => {
        if (a.admitting === settled) a.admitting = undefined
      })
      admission.then((ad) => this.send(a, workerKey, item, requestId, new ItemHold(this.s, input, ad)), refused)
    } else this.send(a, workerKey, item, requestId, new ItemHold(this.s, input, admission))
  }

  /**
   * An item refused for now waits, never sent: not in flight, so its mark (claim) goes, with the
   * others of the turn, in one statement. Alone it waits here; shared, its claim goes back to
   * every instance (this one's next claim takes it again, in input order).
   */
  private waitUnsent(a: Active, idx: number): void {
    if (!this.leases) a.again.push(idx)
    a.back.push(idx)
    this.backSoon(a)
  }

  private backSoon(a: Active): void {
    if (a.backDue) return
    a.backDue = true
    this.serial(a, () => this.giveBackWaiting(a))
  }

  /**
   * In the batch's chain, so no fill is half done: only the items waiting now lose their marks.
   * One handed out again meanwhile (in flight, read ahead, put back) was marked again, to be sent.
   */
  private async giveBackWaiting(a: Active): Promise<void> {
    a.backDue = false
    const back = new Set(a.back.splice(0))
    const again = new Set(a.again)
    const out = new Set([...a.inflight, ...a.ahead.map((i) => i.idx)])
    // alone an item waiting is put back here; shared it is nowhere here once its claim is back
    const waiting = [...back].filter((i) => !out.has(i) && (this.leases ? !again.has(i) : again.has(i)))
    if (waiting.length === 0) return
    try {
      if (this.marks) await this.marks.unmark(a.id, waiting)
      else {
        await this.leases!.release(a.id, waiting)
        // the claims let go may be this instance's next
        a.exhausted = false
      }
    } catch (e) {
      this.s.log.warn('batches: giving back the marks of items waiting unsent failed', { batch_id: a.id, error: (e as Error).message })
      // alone they keep their marks: lost after a kill -9, never sent twice. Shared they would
      // stay claimed here and never run: tried again (a release that did land is a no-op then)
      if (this.leases && !this.closed) {
        a.back.push(...waiting)
        setTimeout(() => this.backSoon(a), SHARED_DOWN_RETRY_MS).unref?.()
      }
    }
  }

  private send(a: Active, workerKey: ApiKey, item: ClaimedItem, requestId: string, hold: ItemHold): void {
    // shutting down: never sent, so its mark goes back at the close and it runs after the restart
    if (this.closed) {
      a.inflight.delete(item.idx)
      return hold.end()
    }
    // the worker runs it with no credit figures: admission was here (a fallback's too, when its
    // worker asks); its spend comes back (settled)
    const job = { batchId: a.id, idx: item.idx, endpoint: a.endpoint, apiKey: workerKey, requestId, funded: hold.funded }
    this.pool.run(job, this.cfg.maxRetries, (ask) => hold.anew(ask)).then(
      (status) => {
        this.ended(status)
        // stored, with its records; the spend they wrote is in the ledger already
        hold.end()
        a.inflight.delete(item.idx)
        this.fillLater(a)
        this.wakeThrottled()
        this.maybeEnd(a)
      },
      (e: Error) => {
        a.inflight.delete(item.idx)
        this.lostItem(a, item.idx, hold, e)
      },
    )
  }

  /** The worker died with the item: one that never left runs again; one that may have, fails as lost. */
  private lostItem(a: Active, idx: number, hold: ItemHold, e: Error) {
    hold.end()
    // shutting down: a worker that had it may have sent it, so it stays marked (lost after the
    // restart); one that never took it (never started, or stopped with it still in the outbox)
    // or never began its call did not, and it runs after the restart
    if (this.closed) {
      if (!(e instanceof NotTakenError)) a.cut.push(idx)
      return
    }
    // it never left (its worker never started, never took it, or died before its call began):
    // no mark against it, and it waits unsent as an item refused for now does, its mark (claim)
    // given back meanwhile, so a kill -9 before it is handed out again does not count it lost
    if (e instanceof NotTakenError) {
      this.waitUnsent(a, idx)
      return this.fillLater(a)
    }
    // its upstream call may have begun (a CallStartedError; anything else its worker cannot have
    // said otherwise): it may have reached the upstream, and been billed there, so it fails as
    // lost at once, as a restart fails a killed process's marks, and is never sent again
    const why = e instanceof CallStartedError ? e.message : `batch worker: ${e.message}`
    this.s.log.warn('batches: an item lost its worker after its upstream call may have begun; failed, not sent again', { batch_id: a.id, index: idx, error: why })
    this.land(a, idx, batchRequestId({ id: a.id } as BatchRow, idx), LOST_ITEM)
  }

  /** An item that failed outside a worker (admission, an unknown model, lost with its worker): queued for the next write. */
  private land(a: Active, idx: number, requestId: string, error: ItemError): void {
    this.ended('failed')
    this.landed.push({
      a,
      write: { batchId: a.id, idx, status: 'failed', response: null, error: JSON.stringify(error), usage: null, requestId, finishedAt: Date.now() },
    })
    a.queued++
    this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS)
    this.fillLater(a)
  }

  /** Items that ended here (ran, refused, lost or failed by their batch's end), for the metrics. */
  private ended(status: 'succeeded' | 'failed', n = 1): void {
    if (n > 0) this.s.metrics?.batches.item(status, n)
  }

  /** The write in progress: one at a time. */
  private writing: Promise<void> = Promise.resolve()

  /** Stores landed results (nothing ran for them: no records). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.flushChunk())
    return this.writing
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
    try {
      await this.store.sql.tx((q) => this.store.writeResults(batch.map((l) => l.write), q))
    } catch (e) {
      this.s.log.error('batches: storing results failed; retrying', { error: (e as Error).message, results: batch.length })
      this.landed = batch.concat(this.landed)
      if (!this.closed) this.flushTimer ??= setTimeout(() => void this.flush(), 500)
      return
    }
    const touched = new Set<Active>()
    for (const l of batch) {
      l.a.queued--
      touched.add(l.a)
    }
    for (const a of touched) this.maybeEnd(a)
  }

  /** When nothing of the batch is pending, running or waiting to be written: its end. */
  private maybeEnd(a: Active): void {
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    this.serial(a, () => this.endCheck(a))
  }

  private async endCheck(a: Active): Promise<void> {
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    if (!a.stopped && !(a.exhausted && a.ahead.length === 0 && a.again.length === 0)) return
    const left = await this.store.unfinished(a.id)
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    if (left > 0) {
      // nothing is in flight: whatever has no result yet is pending, wherever it is
      a.cursor = 0
      a.again = []
      a.ahead = []
      if (a.stopped) return this.endItems(a, a.status as EndKind)
      a.exhausted = false
      // shared: those may be another instance's, in flight there; look again a little later
      if (this.leases) return void setTimeout(() => this.fill(a), RECHECK_MS).unref?.()
      return this.fillLater(a)
    }
    // shared: one instance writes the output files; another one doing so keeps this one out, and
    // once it has ended the batch, this one lets it go (looking again would go on for ever)
    if (this.leases) {
      const who = await this.leases.finalizer(a.id)
      if (who === 'ended') return void this.forget(a)
      if (who === 'other') return void setTimeout(() => this.maybeEnd(a), RECHECK_MS).unref?.()
    }
    a.finalizing = true
    const done = this.finalize(a).finally(() => this.finalizing.delete(done))
    this.finalizing.add(done)
  }

  /** A batch another instance ended: nothing of it is left to run or write here. */
  private forget(a: Active): void {
    if (this.active.get(a.id) === a) this.active.delete(a.id)
  }

  private async finalize(a: Active): Promise<void> {
    try {
      const row = await this.store.byId(a.id)
      if (!row) return
      const files = row.family === 'openai' ? await writeOutputFiles(this.s.files, this.store, row) : { outputFileId: null, errorFileId: null }
      // a cancel may have come while the files were written (here or elsewhere): its status stands
      const now = Date.now()
      let status: BatchRow['status'] = 'completed'
      if (!(await this.store.transition(a.id, ['queued', 'processing'], { ...files, status, endedAt: now, completedAt: now }))) {
        await this.store.update(a.id, { ...files, endedAt: now })
        status = (await this.store.byId(a.id))?.status ?? a.status
      }
      a.status = status
      this.active.delete(a.id)
      this.s.log.info('batches: ended', { batch_id: a.id, status, total: row.total, succeeded: row.succeeded, failed: row.failed })
      this.s.tracing?.batchEnded({ ...row, status })
    } catch (e) {
      this.s.log.error('batches: writing the output files failed; retrying', { batch_id: a.id, error: (e as Error).message })
      a.finalizing = false
      if (!this.closed) setTimeout(() => this.maybeEnd(a), 1_000).unref?.()
    }
  }

  /** An early end: the batch takes `status`, and its items not yet run fail with `kind`'s code. */
  private async end(id: string, status: 'cancelled' | 'expired' | 'failed', set: Partial<BatchRow>): Promise<BatchRow | null> {
    const row = await this.store.byId(id)
    if (!row || FINAL.has(row.status)) return row
    if (!(await this.store.transition(id, ['queued', 'processing'], { status, ...set }))) return this.store.byId(id)
    if (this.standby) {
      await this.endElsewhere(id, status)
      return this.store.byId(id)
    }
    const a = this.track({ ...row, status })
    a.status = status
    a.stopped = true
    this.endItems(a, status)
    return this.store.byId(id)
  }

  /**
   * An early end on a gateway that does not run the batches of its SQLite data dir: the items the
   * runner has not marked fail now; those it marked are in flight there and end with their results.
   * The runner, told, sees the end at its next look, stops and writes the output files.
   */
  private async endElsewhere(id: string, kind: EndKind): Promise<void> {
    let failed
    while ((failed = await this.store.failPending(id, kind, END_ERRORS[kind], END_CHUNK, 0, undefined, undefined, true)) > 0) {
      this.ended('failed', failed)
      await nextTurn()
    }
    void this.bus?.publish(TOPIC, id)
  }

  private endItems(a: Active, kind: EndKind) {
    if (a.ending) return
    a.ending = true
    const error = END_ERRORS[kind]
    // items put back after their worker died have smaller indexes than the cursor
    const again = a.again
    const from = this.firstUnsent(a)
    a.again = []
    a.ahead = []
    a.cursor = from
    const leases = this.leases
    let failed = 0
    void (async () => {
      try {
        if (leases) {
          // shared: every pending item no live lease holds (in flight here or elsewhere, an
          // item finishes); what this instance claimed and will not run is let go first
          await leases.dropExcept(a.id, [...a.inflight])
          while ((failed = await this.store.failPending(a.id, kind, error, END_CHUNK, 0, undefined, Date.now())) > 0) {
            this.ended('failed', failed)
            await nextTurn()
          }
          return
        }
        if (again.length > 0) this.ended('failed', await this.store.failPending(a.id, kind, error, END_CHUNK, from, again))
        while ((failed = await this.store.failPending(a.id, kind, error, END_CHUNK, from)) > 0) {
          this.ended('failed', failed)
          await nextTurn()
        }
      } catch (e) {
        this.s.log.error('batches: failing the items of an ended batch failed', { batch_id: a.id, error: (e as Error).message })
      } finally {
        a.ending = false
        // shared: items another instance runs are waited for, not spun on
        if (leases && failed === 0) setTimeout(() => this.maybeEnd(a), RECHECK_MS).unref?.()
        else this.maybeEnd(a)
      }
    })()
  }

  /** Cancel: a queued or processing batch → cancelled; a finished one → 400. */
  async cancel(row: BatchRow): Promise<BatchRow> {
    if (FINAL.has(row.status)) throw new HttpError(400, `Batch ${row.id} is ${row.status}; only a queued or processing batch can be cancelled`)
    if (this.active.get(row.id)?.finalizing) throw new HttpError(400, `Batch ${row.id} has run every item; it is completed once its output files are written`)
    const ended = (await this.end(row.id, 'cancelled', { cancelledAt: Date.now() })) ?? row
    void this.bus?.publish(TOPIC, row.id)
    return ended
  }

  /** → failed, with the reason in `errors`. */
  async fail(id: string, code: string, message: string): Promise<void> {
    try {
      await this.end(id, 'failed', { failedAt: Date.now(), errors: JSON.stringify([{ code, message, line: null, param: null }]) })
    } catch (e) {
      this.s.log.error('batches: failing a batch failed', { batch_id: id, code, error: (e as Error).message })
    }
  }

  /** Batches past their completion window expire; their items not yet run fail with batch_expired. */
  async checkExpiry(now = Date.now()): Promise<void> {
    try {
      // shared: a create another gateway's crash cut short goes once it is old enough
      if (this.leases || this.looks) await this.sweep()
      for (const a of [...this.active.values()]) {
        if (a.stopped) continue
        const row = await this.store.byId(a.id)
        if (row && !FINAL.has(row.status) && row.expiresAt <= now) await this.end(a.id, 'expired', { expiredAt: now })
      }
    } catch (e) {
      this.s.log.error('batches: checking expiry failed', { error: (e as Error).message })
    }
  }

  /** The files service's delete hook: a queued or processing batch reading the file fails. */
  async onFileDeleted(file: FileRecord, reason: DeleteReason): Promise<void> {
    for (const row of await this.store.readingFile(file.id)) {
      if (row.apiKeyId !== file.apiKeyId || FINAL.has(row.status)) continue
      await this.fail(row.id, INPUT_GONE, inputGoneMessage(file.id, reason))
    }
  }

  /**
   * A delete removes the file's record, then fails the batches reading it (onFileDeleted): a
   * crash between the two leaves one open on a file that is gone, failed here at the next start.
   * A file that expired while the gateway was down is failed here too, before the expiry pass
   * removes its record: the message says it expired.
   */
  private async failIfInputGone(row: BatchRow): Promise<void> {
    if (row.inputFileId === null || FINAL.has(row.status)) return
    const why = await inputFileGone(this.s.files, row.apiKeyId, row.inputFileId)
    if (!why) return
    // its record just removed here (the expiry pass at start): the hook fails it, saying how
    if (why === 'unknown' && this.s.files.telling(row.inputFileId)) return
    this.s.log.warn('batches: the input file of an open batch is gone; failing it', { batch_id: row.id, file_id: row.inputFileId, why })
    await this.fail(row.id, INPUT_GONE, inputGoneMessage(row.inputFileId, why))
  }

  /** Resolves once every batch that can end has ended (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.active.values()].map((a) => a.chain))
    while (this.finalizing.size > 0) await Promise.allSettled([...this.finalizing])
  }

  /** Stop handing out items; let those in flight land (bounded by the pool), store them, stop. */
  async close(graceMs: number): Promise<void> {
    this.closed = true
    if (this.expiryTimer) clearInterval(this.expiryTimer)
    if (this.shareTimer) clearInterval(this.shareTimer)
    if (this.tick) clearTimeout(this.tick)
    await this.pool.close(graceMs)
    for (let n = this.landed.length; n > 0; n = this.landed.length) {
      await this.flush()
      // a write that failed keeps its results: give up on them, they run again after the restart
      if (this.landed.length >= n) break
    }
    await Promise.race([this.idle(), Bun.sleep(graceMs)])
    // what this instance claimed and never sent goes back to the others at once; what a worker
    // held when the grace ran out may have reached the upstream: its claim stays, to run out
    // and fail it as lost there, never sent again
    if (this.leases) for (const a of this.active.values()) await this.leases.dropExcept(a.id, a.cut).catch(() => {})
    // alone: the marks of items never sent go, so they run after the restart
    if (this.marks) for (const a of this.active.values()) await this.marks.giveBack(a.id, a.cut).catch(() => {})
    // last: another gateway on the data dir takes over once its marks are as they stay
    this.runner?.release()
  }
}
