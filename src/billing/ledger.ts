// Where admitted requests' reservations are held. One interface, three ledgers: this file's
// memory ledger (one instance), pg-ledger.ts (instances sharing PostgreSQL and no Redis) and
// redis-ledger.ts (instances sharing Redis). A ledger decides admission on the rule
//   credits − spent − reserved > 0
// and holds the admitted request's worst-case cost until the request's real cost is known.
// It never writes spend: that is billing.ts's, through the recorder's transaction.
import type { Piece, Sql } from '../db/sql.ts'
import { SpendByKey } from './spend.ts'

/**
 * A reservation not renewed within this long is dropped, so a request that died without a record
 * (its gateway killed outright) does not hold its key's credit for long. A request in progress has
 * its hold renewed every third of this (Billing.keep: one statement or script call a key for all
 * of an instance's requests, off the request path), however long it runs.
 */
export const RESERVATION_TTL_MS = 60_000

/** A key as this instance sees it at admission. */
export interface KeyFigures {
  id: string
  credits: number
  /** Stored spend plus what this instance charged and has not stored yet. */
  spent: number
}

export type Hold = { admitted: true; reservationId?: string } | { admitted: false; spent: number; reserved: number }

export interface Ledger {
  /** What it runs on, for the banner and tests. */
  readonly kind: 'memory' | 'postgres' | 'redis'
  /** Admit when credits − spent − reserved > 0, and hold `usd` (nothing when null or 0). The Redis ledger throws RedisUnavailable. */
  reserve(key: KeyFigures, usd: number | null): Hold | Promise<Hold>
  /**
   * The request ended, costing `usd` (0: nothing): its reservation ends. `keyId` undefined: the
   * key is the reservation's. `unlimited`: the key has no credit limit now, so its cost guards no
   * admission and may wait longer to be counted. Unknown or ended ids are ignored. Never throws.
   */
  settle(reservationId: string | undefined, keyId: string | undefined, usd: number, unlimited?: boolean): void
  /**
   * These keys' records are about to be stored, or are stored already (a batch worker's): their
   * settlements waiting for an admission go now, so that a shared ledger has a cost no later than
   * the database, or as soon after it as it can (a kill between the two leaves it counting a lost
   * record's cost, not missing a stored one's). Those of a key with no credit limit may wait on:
   * they guard no admission. Resolved once what went has its answer (or is kept owed, Redis
   * away); never rejects.
   */
  sendNow(keyIds: Iterable<string>): Promise<void>
  /** A cost settled here that will never be stored (its record was given up). Never throws. */
  unsettle(keyId: string, usd: number): void
  /**
   * Reservations of requests still in progress: each lapses RESERVATION_TTL_MS from now (a
   * stream, or a reply a slow model thinks over, may outlast it). Unknown ids are ignored.
   * Never throws.
   */
  renew(ids: string[]): void
  /** Held against the key by this instance's requests in progress. */
  reserved(keyId: string): number
  /** Reservations this instance holds. */
  readonly open: number
  /**
   * PostgreSQL: the transaction that stores charged costs also ends their reservations, so a
   * cost is always visible to the other instances, held or stored. Called when the records to
   * write are taken, before anything is awaited.
   */
  startWrite?(): LedgerWrite
  /** The key's figures as the shared store holds them (spent: null when it has not seen the key), for diagnostics and tests. */
  figures?(keyId: string): Promise<{ spent: number | null; reserved: number }>
  /** PostgreSQL: how to read what this instance charged and has not stored yet (billing's figure). */
  readUnwritten?(of: (keyId: string) => number): void
  /** Redis: how to read a key's spent as the database stores it (for a seed that missed other instances' spend). */
  readStored?(of: (keyId: string) => Promise<number | null>): void
  /** Stop background work (shutdown). */
  stop?(): Promise<void>
}

export interface LedgerWrite {
  /** First thing in the writing transaction. */
  begin(q: Sql): Promise<void>
  /** Or, for a write sent as one statement: its part of it (none when it has nothing to do). */
  inline(): Piece | undefined
  /** Once the transaction is over. */
  end(committed: boolean): void
}

interface Reservation {
  keyId: string
  usd: number
  at: number
}

/** One instance's reservations, in memory: admission is synchronous, no await on the hot path. */
export class MemoryLedger implements Ledger {
  readonly kind = 'memory'
  // insertion order is age order, so expired reservations are always at the front
  private reservations = new Map<string, Reservation>()
  private reservedBy = new SpendByKey()

  constructor(private now: () => number = Date.now, private ttlMs = RESERVATION_TTL_MS) {}

  reserve(key: KeyFigures, usd: number | null): Hold {
    const reserved = this.reserved(key.id)
    if (!(key.credits - key.spent - reserved > 0)) return { admitted: false, spent: key.spent, reserved }
    return usd === null ? { admitted: true } : { admitted: true, reservationId: this.hold(key.id, usd) }
  }

  /** Hold `usd` against a key until it is settled; returns the reservation id. */
  hold(keyId: string, usd: number): string {
    this.expire()
    const id = 'rsv_' + Bun.randomUUIDv7().replaceAll('-', '')
    const amount = Number.isFinite(usd) && usd > 0 ? usd : 0
    this.reservations.set(id, { keyId, usd: amount, at: this.now() })
    this.reservedBy.add(keyId, amount)
    return id
  }

  settle(id: string | undefined): void {
    if (id === undefined) return
    const r = this.reservations.get(id)
    if (!r) return
    this.reservations.delete(id)
    this.reservedBy.add(r.keyId, -r.usd)
  }

  sendNow(): Promise<void> {
    // nothing waits here
    return Promise.resolve()
  }

  unsettle(): void {
    // spend is not counted here: billing takes it back from what it shows
  }

  renew(ids: string[]): void {
    // made again at the end: insertion order stays age order
    const at = this.now()
    for (const id of ids) {
      const r = this.reservations.get(id)
      if (!r) continue
      this.reservations.delete(id)
      this.reservations.set(id, { ...r, at })
    }
  }

  reserved(keyId: string): number {
    this.expire()
    return this.reservedBy.get(keyId)
  }

  get open(): number {
    return this.reservations.size
  }

  private expire() {
    const cutoff = this.now() - this.ttlMs
    for (const [id, r] of this.reservations) {
      if (r.at > cutoff) break
      this.settle(id)
    }
  }
}
