// The in-memory side of credits. Two amounts per key live here, beside the
// spend stored in SQLite:
//   - reserved: estimated costs of admitted requests that have not been recorded yet;
//   - unflushed: real costs already settled by `record()` but not yet written by the
//     recorder's batch. The key cache shows `spent` = stored spend + unflushed, so the next
//     admission sees a settled cost at once, not a few ms later when the batch is written.
// Admission rule: a key with credits is admitted while credits − spent − reserved > 0.
//
// `Credits` is the seam: this in-memory ledger serves one instance (the default, and SQLite);
// instances sharing a database hold their reservations there instead (pg-credits.ts), or in
// Redis. Whatever holds them, the unflushed amounts stay per instance: they are this
// instance's own records not yet written.
import type { Sql } from '../db/sql.ts'
import type { ApiKey } from '../http/context.ts'

/** An admission: the reservation to release at record time (none when unpriced), or the figures of a refusal. */
export type AdmitResult = { reservationId?: string } | { refused: { credits: number; spent: number; reserved: number } }

export interface Credits {
  /**
   * Holds `usd` (null: unpriced, nothing to hold) against a funded key when credits − spent −
   * reserved > 0, `spent` counting what this instance settled but has not written yet.
   */
  admit(key: ApiKey & { credits: number }, usd: number | null): AdmitResult | Promise<AdmitResult>
  /** Drop a reservation (unknown or already released ids are ignored: settlement is idempotent). */
  release(id: string | undefined): void
  /** Held against the key by this instance's requests in progress. */
  reserved(keyId: string): number
  /** Reservations this instance holds. */
  readonly open: number
  unflushed(keyId: string): number
  addUnflushed(keyId: string, usd: number): void
  /**
   * Shared ledgers: first in the transaction that writes records and spend, make this
   * instance's releases final (a reservation ends as its cost becomes visible); returns what
   * to call once that transaction is over and the in-memory figures have moved (`written`).
   */
  commitReleases?(q: Sql): Promise<(committed: boolean) => void>
  /** Stop background work (shutdown). */
  stop?(): Promise<void>
}

/** A reservation not settled within this long is dropped, so a request that died without a record cannot lock its key out for good. */
export const RESERVATION_TTL_MS = 15 * 60_000

/**
 * Credits shared by several instances (auth/redis-credits.ts; PostgreSQL when there is no
 * Redis). Admission and reservation are one atomic step against the shared figures, so
 * concurrent requests on different instances cannot all pass the same balance. The memory
 * CreditLedger below stays in use beside it for what this instance settled but has not written.
 */
export interface SharedCredits {
  /** What it runs on, for the banner. */
  readonly kind: string
  /**
   * Admit when credits − spent − reserved > 0 and hold `usd` (nothing when 0). `key.spent` is
   * this instance's view, used only to seed a key the shared store has not seen yet.
   */
  reserve(key: { id: string; credits: number; spent: number }, usd: number): Promise<SharedReservation>
  /** The request's actual cost replaces its reservation, in one step. Never throws. */
  settle(reservationId: string | undefined, keyId: string, usd: number): Promise<void>
  /** Drop a reservation (a request that ends with no cost). Never throws. */
  release(reservationId: string | undefined): Promise<void>
  /**
   * Take back a settled cost whose record was given up (it will never reach the database), as
   * the memory ledger does: the shared figure must not run ahead of the database. Never throws.
   */
  unsettle(keyId: string, usd: number): Promise<void>
  /** The key's figures as admission reads them (spent: null before any instance admitted it), for diagnostics and tests. */
  figures(keyId: string): Promise<{ spent: number | null; reserved: number }>
}

export type SharedReservation =
  | { admitted: true; reservationId?: string }
  | { admitted: false; spent: number; reserved: number }

interface Reservation {
  keyId: string
  usd: number
  at: number
}

export class CreditLedger implements Credits {
  // insertion order is age order, so expired reservations are always at the front
  private reservations = new Map<string, Reservation>()
  private reservedBy = new Map<string, number>()
  private unflushedBy = new Map<string, number>()

  constructor(private now: () => number = Date.now, private ttlMs = RESERVATION_TTL_MS) {}

  admit(key: ApiKey & { credits: number }, usd: number | null): AdmitResult {
    const reserved = this.reserved(key.id)
    if (!(key.credits - key.spent - reserved > 0)) return { refused: { credits: key.credits, spent: key.spent, reserved } }
    return usd === null ? {} : { reservationId: this.reserve(key.id, usd) }
  }

  /** Hold `usd` against a key until `release`; returns the reservation id. */
  reserve(keyId: string, usd: number): string {
    this.expire()
    const id = 'rsv_' + Bun.randomUUIDv7().replaceAll('-', '')
    const amount = Number.isFinite(usd) && usd > 0 ? usd : 0
    this.reservations.set(id, { keyId, usd: amount, at: this.now() })
    add(this.reservedBy, keyId, amount)
    return id
  }

  /** Drop a reservation (unknown or already released ids are ignored: settlement is idempotent). */
  release(id: string | undefined): void {
    if (id === undefined) return
    const r = this.reservations.get(id)
    if (!r) return
    this.reservations.delete(id)
    add(this.reservedBy, r.keyId, -r.usd)
  }

  reserved(keyId: string): number {
    this.expire()
    return this.reservedBy.get(keyId) ?? 0
  }

  /** How many reservations are open (for tests and diagnostics). */
  get open(): number {
    return this.reservations.size
  }

  unflushed(keyId: string): number {
    return this.unflushedBy.get(keyId) ?? 0
  }

  addUnflushed(keyId: string, usd: number): void {
    add(this.unflushedBy, keyId, usd)
  }

  private expire() {
    const cutoff = this.now() - this.ttlMs
    for (const [id, r] of this.reservations) {
      if (r.at > cutoff) break
      this.release(id)
    }
  }
}

/**
 * Add to a per-key sum; a sum back at zero is removed. Within a trillionth of a dollar counts
 * as zero: adding and subtracting the same costs leaves float noise, never a real amount.
 */
function add(m: Map<string, number>, keyId: string, usd: number) {
  if (usd === 0) return
  const v = (m.get(keyId) ?? 0) + usd
  if (Math.abs(v) < 1e-12) m.delete(keyId)
  else m.set(keyId, v)
}
