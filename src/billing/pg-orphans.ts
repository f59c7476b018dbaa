// The holds a gateway killed outright left on PostgreSQL (no Redis), found and deleted by the
// gateways still running. Each running gateway holds a session advisory lock on a number of its
// own (pg-owner.ts), and its holds' ids carry the number (`rsv_<owner>_…`, pg-ledger.ts). An
// owner whose lock is free belongs to no live gateway, or to one whose session was just cut (a
// terminated backend, PostgreSQL restarted), which takes it again within a second: so an owner's
// holds are deleted only once its lock was seen free for FREE_FOR_MS, at looks no further apart
// than twice that, and still free in the DELETE. A live gateway whose lock was taken again
// writes its holds back (a look may have deleted them meanwhile).
import type { SQL } from 'bun'
import { names } from '../db/columns.ts'
import { creditReservations } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import { OWNER_LOCKS, PgOwner } from './pg-owner.ts'

/** How often this instance's lock is checked, and taken again when its session was lost. */
const KEEP_EVERY_MS = 1_000
/**
 * An owner's holds are deleted only once its lock was seen free this long, at looks no further
 * apart than twice this: a live gateway whose session was cut has its lock again well within it,
 * so its holds stay while its requests run and no other instance spends the credit they hold. A
 * dead gateway's go this much later.
 */
const FREE_FOR_MS = 5_000
/** A refusal looks for dead gateways' holds at most this often (each of them may be what refused it). */
const ON_REFUSAL_MS = 1_000

const r = names(creditReservations)

/** This instance's rows again, after its lock was lost for a while (another may have deleted them meanwhile). */
const REWRITE = `INSERT INTO ${r.$table} (${r.id}, ${r.apiKeyId}, ${r.usd}, ${r.expiresAt})
  SELECT h.id, h.k, h.usd, ? FROM json_to_recordset(?::text::json) AS h(id text, k text, usd float8) ON CONFLICT (${r.id}) DO NOTHING`

/**
 * The owners named by rows' ids (rsv_<owner>_…) whose lock is free this moment: that owner's lock
 * could be taken (for this statement's transaction only). Never this instance's own, nor ids
 * without an owner.
 */
const OWNER_OF_ID = `split_part(${r.id}, '_', 2)`
const FREE_OWNERS = `SELECT o FROM (SELECT DISTINCT ${OWNER_OF_ID} AS o FROM ${r.$table}) d
  WHERE CASE WHEN o ~ '^[1-9][0-9]{0,8}$' AND o <> ? THEN pg_try_advisory_xact_lock(${OWNER_LOCKS}, o::int) ELSE false END`
/** The rows of these owners ($1: numbers, comma-separated) whose lock is still free. */
const DELETE_OF_FREE_OWNERS = `DELETE FROM ${r.$table} WHERE ${OWNER_OF_ID} IN (
  SELECT o FROM unnest(string_to_array(?, ',')) AS o WHERE pg_try_advisory_xact_lock(${OWNER_LOCKS}, o::int))`

/** A hold of this instance as its row is written again: its id, key and amount. */
export interface OwnRow {
  id: string
  k: string
  usd: number
}

export class PgOrphans {
  /** The last look a refusal asked for, and the one under way. */
  private looked = -Infinity
  private looking?: Promise<number>
  /** Owners whose lock was free at the last looks: since when, and when last seen so. */
  private readonly freeOwners = new Map<string, { since: number; seen: number }>()
  /** A look due once an owner seen free has been free for FREE_FOR_MS. */
  private lookingAgain?: { done: Promise<number>; cancel(): void }
  private readonly keepTimer: ReturnType<typeof setInterval>
  private keeping = false
  /** The lock was taken again on a new session: this instance's rows are written again (until that succeeds). */
  private rewriteDue = false

  private constructor(
    private readonly sql: Sql,
    private readonly owner: PgOwner,
    /** This instance's holds, running or ended and not yet deleted. */
    private readonly rows: () => OwnRow[],
    private readonly ttlMs: number,
  ) {
    this.keepTimer = setInterval(() => void this.keep(), KEEP_EVERY_MS)
    this.keepTimer.unref?.()
  }

  /** A number of this gateway's own, locked on `client` (closed at stop when `closeClient`), kept from now on. */
  static async take(sql: Sql, client: SQL, closeClient: boolean, rows: () => OwnRow[], ttlMs: number): Promise<PgOrphans> {
    return new PgOrphans(sql, await PgOwner.take(client, closeClient), rows, ttlMs)
  }

  /** The number this gateway's holds' ids carry. */
  get ownerId(): number {
    return this.owner.id
  }

  /**
   * Deletes the holds of gateways no longer running: those whose lock has been seen free for
   * FREE_FOR_MS. Returns how many. An owner seen free for less has a look of its own when its time comes.
   */
  async release(): Promise<number> {
    return (await this.look()).deleted
  }

  /**
   * A request was refused while holds counted: whether a look (at most one a second) deleted a
   * dead gateway's. An owner seen free and not long enough yet is waited for (a few seconds at
   * most), and looked at again.
   */
  async refused(): Promise<boolean> {
    if (!this.looking) {
      if (performance.now() - this.looked < ON_REFUSAL_MS) return false
      this.looked = performance.now()
      this.looking = this.lookForRefusal()
        .catch(() => 0)
        .finally(() => (this.looking = undefined))
    }
    return (await this.looking) > 0
  }

  /** Stops the looks and the lock's checks (the lock itself goes at close). */
  stopLooking(): void {
    clearInterval(this.keepTimer)
    this.lookingAgain?.cancel()
  }

  /** Stop: the lock goes with its session. */
  close(): void {
    this.stopLooking()
    this.owner.close()
  }

  private async lookForRefusal(): Promise<number> {
    const first = await this.look()
    return first.deleted > 0 || !first.again ? first.deleted : first.again
  }

  private async look(): Promise<{ deleted: number; again?: Promise<number> }> {
    const free = new Set((await this.sql.all<{ o: string }>(FREE_OWNERS, [String(this.owner.id)])).map((row) => row.o))
    const now = performance.now()
    const ripe: string[] = []
    let ripeIn: number | undefined
    for (const o of this.freeOwners.keys()) if (!free.has(o)) this.freeOwners.delete(o)
    for (const o of free) {
      let f = this.freeOwners.get(o)
      // seen free long ago and not since: whatever happened between, its clock starts now
      if (!f || now - f.seen > 2 * FREE_FOR_MS) this.freeOwners.set(o, (f = { since: now, seen: now }))
      f.seen = now
      const wait = f.since + FREE_FOR_MS - now
      if (wait <= 0) ripe.push(o)
      else ripeIn = Math.min(ripeIn ?? wait, wait)
    }
    const deleted = ripe.length > 0 ? await this.sql.run(DELETE_OF_FREE_OWNERS, [ripe.join(',')]) : 0
    for (const o of ripe) this.freeOwners.delete(o)
    if (ripeIn !== undefined) this.lookAgainIn(ripeIn + 50)
    return { deleted, again: this.lookingAgain?.done }
  }

  /** One look due later (owners seen free not long enough yet): what it deleted, 0 when it failed or looks stopped. */
  private lookAgainIn(ms: number) {
    if (this.lookingAgain) return
    const w = Promise.withResolvers<number>()
    const timer = setTimeout(() => {
      this.lookingAgain = undefined
      this.release().then(w.resolve, () => w.resolve(0))
    }, ms)
    timer.unref?.()
    this.lookingAgain = { done: w.promise, cancel: () => (clearTimeout(timer), w.resolve(0)) }
  }

  /** Every second: this instance's lock is its own still, or taken again and its rows written again. */
  private async keep() {
    if (this.keeping) return
    this.keeping = true
    try {
      if (!(await this.owner.keep())) this.rewriteDue = true
      if (this.rewriteDue) {
        const rows = this.rows()
        if (rows.length > 0) await this.sql.run(REWRITE, [Date.now() + this.ttlMs, JSON.stringify(rows)])
        this.rewriteDue = false
      }
    } catch {
      // the database is away, or the lock is held by a sweep this moment: the next second
    } finally {
      this.keeping = false
    }
  }
}
