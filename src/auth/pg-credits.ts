// Credits shared by instances on one PostgreSQL database (no Redis): each admitted request's
// worst-case cost is a row in credit_reservations, made in the transaction that reads the
// key's stored spend and open reservations with the key's row locked (FOR UPDATE), so two
// instances never both spend the last of a balance. A reservation ends in the transaction
// that writes its record's cost (the recorder's), so between the two the cost is always
// visible to every instance, held or spent. What this instance settled but has not written
// yet (unflushed) stays in memory, as on one instance.
import type { Sql } from '../db/sql.ts'
import type { ApiKey } from '../http/context.ts'
import { RESERVATION_TTL_MS, CreditLedger, type AdmitResult, type Credits } from './credits.ts'

/** Releases the recorder has not made final within this long are ended on their own. */
const ORPHAN_MS = 1_000
const SWEEP_MS = 250
const WRITE_GUARD_MS = 5_000
const DELETE_CHUNK = 500

interface Held {
  keyId: string
  usd: number
  /** When the request ended (its release), or null while it runs. */
  releasedAt: number | null
}

export class PgCredits implements Credits {
  /** Only the unflushed bookkeeping of the in-memory ledger is used. */
  private readonly local = new CreditLedger()
  /** This instance's reservations, by id: running, or released and not yet deleted. */
  private readonly held = new Map<string, Held>()
  private readonly timer: ReturnType<typeof setInterval>

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs = RESERVATION_TTL_MS,
  ) {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS)
    this.timer.unref?.()
  }

  async admit(key: ApiKey & { credits: number }, usd: number | null): Promise<AdmitResult> {
    // while a record write of this instance is under way, the stored spend may include a cost
    // that `unflushed` still counts too: wait for it (a few ms)
    while (this.writing) await this.writing
    const now = Date.now()
    return this.sql.tx(async (q) => {
      const row = await q.get<{ credits: number | null; spent: number }>('SELECT credits, spent FROM api_keys WHERE id = ? FOR UPDATE', [key.id])
      // the key is gone or unlimited now: nothing to hold (its status is the guard's to check)
      if (!row || row.credits === null) return {}
      const open = (await q.get<{ usd: number }>('SELECT coalesce(sum(usd), 0) AS usd FROM credit_reservations WHERE api_key_id = ? AND expires_at > ?', [key.id, now]))!.usd
      // other instances' reservations from the table; this instance's from memory, as on one
      // instance (an ended request's row goes with its record, its cost is in `unflushed`)
      const reserved = Math.max(0, open - this.heldUsd(key.id)) + this.reserved(key.id)
      const spent = row.spent + this.local.unflushed(key.id)
      if (!(row.credits - spent - reserved > 0)) return { refused: { credits: row.credits, spent, reserved } }
      if (usd === null || !(usd > 0)) return {}
      const id = 'rsv_' + Bun.randomUUIDv7().replaceAll('-', '')
      await q.run('INSERT INTO credit_reservations (id, api_key_id, usd, expires_at) VALUES (?, ?, ?, ?)', [id, key.id, usd, now + this.ttlMs])
      this.held.set(id, { keyId: key.id, usd, releasedAt: null })
      return { reservationId: id }
    })
  }

  release(id: string | undefined): void {
    const h = id === undefined ? undefined : this.held.get(id)
    if (h && h.releasedAt === null) h.releasedAt = Date.now()
  }

  reserved(keyId: string): number {
    let n = 0
    for (const h of this.held.values()) if (h.keyId === keyId && h.releasedAt === null) n += h.usd
    return n
  }

  get open(): number {
    let n = 0
    for (const h of this.held.values()) if (h.releasedAt === null) n++
    return n
  }

  unflushed(keyId: string): number {
    return this.local.unflushed(keyId)
  }

  addUnflushed(keyId: string, usd: number): void {
    this.local.addUnflushed(keyId, usd)
  }

  /** This instance's reservations that may still have their row, running or ended. */
  private heldUsd(keyId: string): number {
    let n = 0
    for (const h of this.held.values()) if (h.keyId === keyId) n += h.usd
    return n
  }

  private released(olderThan = Infinity): string[] {
    const out: string[] = []
    for (const [id, h] of this.held) if (h.releasedAt !== null && h.releasedAt <= olderThan) out.push(id)
    return out
  }

  /** A record write of this instance in progress (see admit). */
  private writing?: Promise<void>

  async commitReleases(q: Sql): Promise<(committed: boolean) => void> {
    let finish!: () => void
    const writing = new Promise<void>((r) => (finish = r))
    this.writing = writing
    // never held up for good by a write that went wrong before calling back
    const guard = setTimeout(() => done(), WRITE_GUARD_MS)
    const done = () => {
      clearTimeout(guard)
      if (this.writing === writing) this.writing = undefined
      finish()
    }
    const ids = this.released()
    try {
      await deleteIds(q, ids)
    } catch (e) {
      done()
      throw e
    }
    return (committed) => {
      // rolled back: the rows are still there, and still this instance's to delete
      if (committed) for (const id of ids) this.held.delete(id)
      done()
    }
  }

  /**
   * Releases no record write took along (a request that ended without one, a record given up).
   * Only for keys with no cost of this instance still unwritten: a record that is merely slow
   * (a loaded database) takes its release along itself, and deleting the row before the cost
   * is written would hide that cost from the other instances for the moment in between.
   */
  private sweeping = false
  private async sweep() {
    if (this.sweeping) return
    const ids = this.released(Date.now() - ORPHAN_MS).filter((id) => !(this.local.unflushed(this.held.get(id)!.keyId) > 0))
    if (ids.length === 0) return
    this.sweeping = true
    try {
      await deleteIds(this.sql, ids)
      for (const id of ids) this.held.delete(id)
    } catch {
      // the database is away: tried again on the next sweep
    } finally {
      this.sweeping = false
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    const ids = this.released()
    await deleteIds(this.sql, ids).catch(() => {})
  }
}

async function deleteIds(q: Sql, ids: string[]) {
  for (let i = 0; i < ids.length; i += DELETE_CHUNK) {
    const part = ids.slice(i, i + DELETE_CHUNK)
    await q.run(`DELETE FROM credit_reservations WHERE id IN (${part.map(() => '?').join(', ')})`, part)
  }
}
