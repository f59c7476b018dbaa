// Reservations shared by instances on one PostgreSQL database (no Redis): each admitted
// request's worst-case cost is a row in credit_reservations, made in the transaction that reads
// the key's stored spend and open reservations with the key's row locked (FOR UPDATE), so two
// instances never both spend the last of a balance. A reservation's row is deleted in the
// write that stores its cost (the recorder's), so between the two the cost is always
// visible to every instance, held or stored. What this instance charged but has not stored yet
// stays in memory (billing's `unwritten`), as on one instance. Rows left by an instance that
// died (they stopped counting when they lapsed) are deleted by whichever instance comes by next,
// a few hundred at a time, once a minute. Admissions of one key that arrive while its
// transaction runs wait for it and go together in the next one, decided in the order asked:
// one lock, one sum and one insert for all of them, so a busy key's admissions are not bounded
// by one transaction's round trips each. A key busy on this instance and far from the end of its
// balance has its next requests' holds made while it is served (cluster/ahead.ts, as on Redis):
// real rows that every instance counts, so a steady stream of one key's requests shares one
// transaction among several of them instead of paying one each.
import { Ahead, HOLD_HEADROOM, HOLD_MARGIN, turns } from '../cluster/ahead.ts'
import { names, selectList } from '../db/columns.ts'
import { apiKeys, creditReservations } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import { RESERVATION_TTL_MS, type Hold, type KeyFigures, type Ledger, type LedgerWrite } from './ledger.ts'
import { PgOrphans } from './pg-orphans.ts'
import type { SQL } from 'bun'
import { SpendByKey } from './spend.ts'
import { failOwnIfAsked } from '../test-start-failure.ts'

/** Releases no write has taken along within this long are ended on their own. */
const ORPHAN_MS = 1_000
const SWEEP_MS = 250
const WRITE_GUARD_MS = 5_000
/**
 * How often rows of an instance that died with requests open are looked for: those of a gateway
 * whose lock is gone (pg-orphans.ts), and those past their lapse.
 */
const PURGE_EVERY_MS = 10_000
/** Lapsed rows deleted by one statement, and statements a purge at most: small steps, off the request path. */
const PURGE_CHUNK = 500
const PURGE_STEPS = 20

// the statements, their columns by the table declaration
const r = names(creditReservations)
const k = names(apiKeys)
const KEY_FOR_UPDATE = `SELECT ${selectList(apiKeys, ['credits', 'spent'])} FROM ${k.$table} WHERE ${k.id} = ? FOR UPDATE`
const OPEN_OF_KEY = `SELECT coalesce(sum(${r.usd}), 0) AS usd FROM ${r.$table} WHERE ${r.apiKeyId} = ? AND ${r.expiresAt} > ?`
// any number of holds of one key in one text (ids `rsv_` and hex, amounts as numbers: no comma),
// so PostgreSQL prepares it once per connection
const HOLD = `INSERT INTO ${r.$table} (${r.id}, ${r.apiKeyId}, ${r.usd}, ${r.expiresAt})
  SELECT h.id, ?, h.usd, ? FROM unnest(string_to_array(?, ','), string_to_array(?, ',')::float8[]) AS h(id, usd)`

/** Rows of requests in progress lapse later: any number of ids in one text. */
const RENEW = `UPDATE ${r.$table} SET ${r.expiresAt} = ? WHERE ${r.id} = ANY(string_to_array(?, ','))`

/** An admission waiting for its key's next transaction. */
interface Asked {
  usd: number | null
  /** A hold made ahead: admitted only while the balance past it is roomy. */
  ahead: boolean
  /** Set when admitted: the balance past this hold had room for HOLD_HEADROOM more like it. */
  roomy: boolean
  hold: Promise<Hold>
  resolve(h: Hold): void
  reject(e: unknown): void
}

/** A hold made ahead, waiting for a request of its key. */
interface HeldAhead {
  id: string
  usd: number
}

interface Held {
  keyId: string
  usd: number
  /** When the request ended, or null while it runs. */
  endedAt: number | null
}

export class PgLedger implements Ledger {
  readonly kind = 'postgres'
  /** This instance's reservations, by id: running, or ended and not yet deleted. */
  private readonly held = new Map<string, Held>()
  /**
   * Their sums by key, kept as they change: an admission reads two figures, not every
   * reservation of the instance (a thousand open streams once made each admission walk them
   * all twice). `present`: every reservation in `held`; `running`: those not ended.
   */
  private readonly present = new SpendByKey()
  private readonly running = new SpendByKey()
  private runningCount = 0
  private readonly timer: ReturnType<typeof setInterval>
  private unwritten: (keyId: string) => number = () => 0
  /** A write of this instance in progress (see decide). */
  private writing?: Promise<void>
  /** Admissions waiting, by key, while that key's transaction runs. */
  private readonly asked = new Map<string, Asked[]>()
  /** Keys whose transactions run, each until no admission of it waits (stop waits for them). */
  private readonly deciding = new Map<string, Promise<void>>()

  private readonly purgeTimer: ReturnType<typeof setInterval>
  /** This gateway's number among those sharing the database, once taken (`own`), and the looks for dead ones' holds. */
  private orphans?: PgOrphans
  /** Holds made ahead, by key; none when taking ahead is off. Given back: ended, as a request's. */
  readonly ahead?: Ahead<HeldAhead>

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs = RESERVATION_TTL_MS,
    purgeEveryMs = PURGE_EVERY_MS,
    takeAhead = true,
  ) {
    if (takeAhead) this.ahead = new Ahead((h) => this.settle(h.id))
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS)
    this.timer.unref?.()
    this.purgeTimer = setInterval(() => void this.tidy(), purgeEveryMs)
    this.purgeTimer.unref?.()
  }

  readUnwritten(of: (keyId: string) => number): void {
    this.unwritten = of
  }

  /**
   * Take this gateway's owner number, kept from now on, then look for the holds of gateways that
   * are gone (this one before a restart, killed with requests open): pg-orphans.ts. Call before
   * admitting anything. `closeClient`: the client is the lock's alone, closed at stop. Returns
   * how many holds were deleted.
   */
  async own(client: SQL, closeClient = false): Promise<number> {
    // a test's refusal here: a start that fails with the database open
    failOwnIfAsked()
    this.orphans = await PgOrphans.take(this.sql, client, closeClient, () => [...this.held].map(([id, h]) => ({ id, k: h.keyId, usd: h.usd })), this.ttlMs)
    return this.orphans.release()
  }

  /** Deletes the holds of gateways no longer running, once seen gone long enough (pg-orphans.ts); how many. */
  releaseOrphans(): Promise<number> {
    return this.orphans?.release() ?? Promise.resolve(0)
  }

  async reserve(key: KeyFigures, usd: number | null): Promise<Hold> {
    const hold = await this.reserveOnce(key, usd)
    // refused: the holds that refused it may be those of a gateway that died; if any were, asked again
    if (hold.admitted || !(hold.reserved > 0) || !(await this.orphans?.refused())) return hold
    return this.ask(key.id, usd, false).hold
  }

  private async reserveOnce(key: KeyFigures, usd: number | null): Promise<Hold> {
    const amount = usd !== null && Number.isFinite(usd) && usd > 0 ? usd : 0
    const ahead = this.ahead
    // each funded request is counted once a turn (no Redis limits count them here)
    if (!ahead || amount === 0 || turns.ask()) return this.ask(key.id, usd, false).hold
    const now = performance.now()
    const busy = ahead.busy(key.id, now)
    // a hold made ahead serves a request whose worst case it covers (held a little more, briefly)
    const fits = (h: HeldAhead) => h.usd >= amount
    const got = ahead.take(key.id, now, fits) ?? (await ahead.next(key.id, fits))
    if (got) {
      this.holdAhead(key.id, got.usd)
      return { admitted: true, reservationId: got.id }
    }
    const asked = this.ask(key.id, usd, false)
    const hold = await asked.hold
    if (busy && asked.roomy) this.holdAhead(key.id, amount * HOLD_MARGIN)
    return hold
  }

  /** An admission for the key's next transaction: its `hold` resolves once that one commits. */
  private ask(keyId: string, usd: number | null, ahead: boolean): Asked {
    const w = Promise.withResolvers<Hold>()
    let waiting = this.asked.get(keyId)
    if (!waiting) this.asked.set(keyId, (waiting = []))
    const a: Asked = { usd, ahead, roomy: false, hold: w.promise, resolve: w.resolve, reject: w.reject }
    waiting.push(a)
    if (!this.deciding.has(keyId)) this.deciding.set(keyId, this.decideAll(keyId))
    return a
  }

  /** The next requests' holds of `usd`, asked now: made only while the key's balance is roomy. */
  private holdAhead(keyId: string, usd: number) {
    const ahead = this.ahead!
    for (let n = ahead.wanted(keyId); n > 0; n--)
      this.ask(keyId, usd, true).hold.then(
        (h) => ahead.settle(keyId, h.admitted && h.reservationId ? { id: h.reservationId, usd } : undefined, performance.now()),
        () => ahead.settle(keyId, undefined, performance.now()),
      )
  }

  /** The key's transactions one after the other, each taking every admission asked meanwhile. */
  private async decideAll(keyId: string) {
    // a microtask later: every admission asked in the same run of code (holdAhead asks several
    // at once) goes in the first transaction, not only the one that began it
    await undefined
    try {
      for (let batch = this.asked.get(keyId); batch; batch = this.asked.get(keyId)) {
        this.asked.delete(keyId)
        try {
          const holds = await this.decide(keyId, batch)
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(holds[i]!)
        } catch (e) {
          for (const a of batch) a.reject(e)
        }
      }
    } finally {
      this.deciding.delete(keyId)
    }
  }

  /** One transaction for `batch`, in order: each admitted while the balance past the holds before it allows. */
  private async decide(keyId: string, batch: Asked[]): Promise<Hold[]> {
    // while a write of this instance is under way, the stored spend may include a cost that
    // `unwritten` still counts too: wait for it (a few ms)
    while (this.writing) await this.writing
    const now = Date.now()
    const made: { id: string; usd: number }[] = []
    const holds = await this.sql.tx(async (q) => {
      made.length = 0
      const row = await q.get<{ credits: number | null; spent: number }>(KEY_FOR_UPDATE, [keyId])
      // the key is gone or unlimited now: nothing to hold (its status is the guard's to check)
      if (!row || row.credits === null) return batch.map((): Hold => ({ admitted: true }))
      const open = (await q.get<{ usd: number }>(OPEN_OF_KEY, [keyId, now]))!.usd
      // other instances' reservations from the table; this instance's from memory (an ended
      // request's row goes with its record's write, its cost is in `unwritten` until then)
      let reserved = Math.max(0, open - this.heldUsd(keyId)) + this.reserved(keyId)
      const spent = row.spent + this.unwritten(keyId)
      const out = batch.map((a): Hold => {
        const { usd } = a
        a.roomy = false
        const room = row.credits! - spent - reserved
        if (!(room > 0)) return { admitted: false, spent, reserved }
        if (usd === null || !(usd > 0)) return { admitted: true }
        const roomy = room - usd >= HOLD_HEADROOM * usd
        // a hold ahead is parked only far from the end of the balance
        if (a.ahead && !roomy) return { admitted: false, spent, reserved }
        const id = this.newId()
        made.push({ id, usd })
        reserved += usd
        a.roomy = roomy
        return { admitted: true, reservationId: id }
      })
      if (made.length > 0) await q.run(HOLD, [keyId, now + this.ttlMs, made.map((h) => h.id).join(','), made.map((h) => String(h.usd)).join(',')])
      return out
    })
    // committed: this instance's holds from now on
    for (const h of made) {
      this.held.set(h.id, { keyId, usd: h.usd, endedAt: null })
      this.present.add(keyId, h.usd)
      this.running.add(keyId, h.usd)
      this.runningCount++
    }
    return holds
  }

  private newId(): string {
    const hex = Bun.randomUUIDv7().replaceAll('-', '')
    return this.orphans ? `rsv_${this.orphans.ownerId}_${hex}` : `rsv_${hex}`
  }

  settle(id: string | undefined): void {
    const h = id === undefined ? undefined : this.held.get(id)
    if (h && h.endedAt === null) {
      h.endedAt = Date.now()
      this.running.add(h.keyId, -h.usd)
      this.runningCount--
    }
  }

  sendNow(): Promise<void> {
    // spend is stored by the recorder, never counted here
    return Promise.resolve()
  }

  unsettle(): void {
    // spend is stored by the recorder, never counted here
  }

  renew(ids: string[]): void {
    // and the rows of ended requests still waiting for their record's write: their cost is not
    // stored yet, so the row is what the other instances count it by
    const all = [...ids, ...this.ended()]
    if (all.length === 0) return
    // a renewal that fails is tried again at the next; a row that lapses meanwhile stops counting for the other instances
    this.sql.run(RENEW, [Date.now() + this.ttlMs, all.join(',')]).catch(() => {})
  }

  reserved(keyId: string): number {
    return this.running.get(keyId)
  }

  get open(): number {
    return this.runningCount
  }

  /** This instance's reservations that may still have their row, running or ended. */
  private heldUsd(keyId: string): number {
    return this.present.get(keyId)
  }

  /** A reservation's row is gone: it leaves `held` (an ended one only, so `running` has it out already). */
  private forget(id: string) {
    const h = this.held.get(id)
    if (!h) return
    this.held.delete(id)
    this.present.add(h.keyId, -h.usd)
  }

  private ended(olderThan = Infinity): string[] {
    const out: string[] = []
    for (const [id, h] of this.held) if (h.endedAt !== null && h.endedAt <= olderThan) out.push(id)
    return out
  }

  /**
   * The rows to delete are those of requests that had ended when the write's records were taken:
   * each of those records was charged as its request ended, so its cost is in this write. A
   * request that ends while the write is under way has its cost in the next one, and keeps its
   * row until then.
   */
  startWrite(): LedgerWrite {
    const ids = this.ended()
    let done: (() => void) | undefined
    // once per write, whichever way it goes (one statement, then a transaction if that failed)
    const open = () => {
      if (done) return
      let finish!: () => void
      const writing = new Promise<void>((r) => (finish = r))
      this.writing = writing
      // never held up for good by a write that went wrong before calling back
      const guard = setTimeout(() => done?.(), WRITE_GUARD_MS)
      done = () => {
        clearTimeout(guard)
        if (this.writing === writing) this.writing = undefined
        finish()
      }
    }
    return {
      begin: async (q) => {
        open()
        await deleteIds(q, ids)
      },
      inline: () => {
        open()
        return ids.length > 0 ? { text: DELETE_IDS, params: [ids.join(',')] } : undefined
      },
      end: (committed) => {
        // rolled back: the rows are still there, and still this instance's to delete
        if (committed) for (const id of ids) this.forget(id)
        done?.()
      },
    }
  }

  /**
   * Ended reservations no write took along (a request that ended without a record, a record
   * given up). Only for keys with no cost of this instance still unstored: a record that is
   * merely slow (a loaded database) takes its reservation along itself, and deleting the row
   * before the cost is stored would hide that cost from the other instances in between.
   */
  private sweeping = false
  private async sweep() {
    if (this.sweeping) return
    const ids = this.ended(Date.now() - ORPHAN_MS).filter((id) => !(this.unwritten(this.held.get(id)!.keyId) > 0))
    if (ids.length === 0) return
    this.sweeping = true
    try {
      await deleteIds(this.sql, ids)
      for (const id of ids) this.forget(id)
    } catch {
      // the database is away: tried again on the next sweep
    } finally {
      this.sweeping = false
    }
  }

  /** Every few seconds: dead gateways' holds and lapsed rows deleted. */
  private async tidy() {
    try {
      await this.releaseOrphans()
    } catch {
      // the database is away: the next time
    }
    await this.purgeLapsed()
  }

  private purging = false

  /**
   * Rows past their lapse: no admission counts them any more (OPEN_OF_KEY), and the instance that
   * made them would have deleted them unless it died first. Another instance's row it is deleting
   * right now is skipped, not waited for. Returns the rows deleted.
   */
  async purgeLapsed(): Promise<number> {
    if (this.purging) return 0
    this.purging = true
    let deleted = 0
    try {
      for (let step = 0; step < PURGE_STEPS; step++) {
        const n = await this.sql.run(DELETE_LAPSED, [Date.now(), PURGE_CHUNK])
        deleted += n
        if (n < PURGE_CHUNK) break
      }
    } catch {
      // the database is away: the next purge tries again
    } finally {
      this.purging = false
    }
    return deleted
  }

  async stop(): Promise<void> {
    // what waits here for a request is ended, and so is whatever is still on its way
    this.ahead?.close()
    clearInterval(this.timer)
    clearInterval(this.purgeTimer)
    this.orphans?.stopLooking()
    // holds made ahead still on their way end as they come back (closed), before the rows go
    await Promise.allSettled([...this.deciding.values()])
    await deleteIds(this.sql, this.ended()).catch(() => {})
    this.orphans?.close()
  }
}

// one text for any number of ids (`rsv_` and hex: no comma), so PostgreSQL prepares it once per
// connection, and a record write can carry it in its one statement (GenerationStore.insertWhole)
const DELETE_IDS = `DELETE FROM ${r.$table} WHERE ${r.id} = ANY(string_to_array(?, ','))`

const DELETE_LAPSED = `DELETE FROM ${r.$table} WHERE ${r.id} IN (SELECT ${r.id} FROM ${r.$table} WHERE ${r.expiresAt} <= ? LIMIT ? FOR UPDATE SKIP LOCKED)`

async function deleteIds(q: Sql, ids: string[]) {
  if (ids.length > 0) await q.run(DELETE_IDS, [ids.join(',')])
}
