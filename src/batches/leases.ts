// Batch work shared by instances on one PostgreSQL database: each instance claims pending
// items as it hands them to its workers (FOR UPDATE SKIP LOCKED: two instances never claim the
// same item), with a lease it renews while it holds them. An instance claims only what runs
// at once, so a claim is as good as sent: when an instance dies (kill -9), its claimed items
// may have reached the upstream, and once their lease has run out the others fail them with
// LOST_ITEM rather than send them again — every item goes upstream at most once and ends with
// exactly one result. Claims an instance gives back (shutdown, cancel) run elsewhere. One
// instance at a time writes a batch's output files, under a lease of the same kind on the
// batch row. (SQLite: one instance, no leases.)
import type { Sql } from '../db/sql.ts'
import type { ClaimedItem } from './store.ts'
import type { ItemError } from './types.ts'
import { selectList } from '../db/columns.ts'
import { batchItems } from '../db/schema.ts'

/** A claimed item's columns, under their TypeScript names. */
const CLAIMED = selectList(batchItems, ['idx', 'model', 'promptEstimate', 'maxOutputTokens'], 'b.')

export class ItemLeases {
  /** This process, as lease_owner. */
  readonly owner = 'inst_' + Bun.randomUUIDv7().replaceAll('-', '')

  constructor(
    private readonly sql: Sql,
    readonly leaseMs: number,
  ) {}

  /**
   * Up to `n` pending items no live lease holds, in input order, now this instance's. Its own
   * live claims are not picked again: they are in flight here, or waiting (scheduler.ts).
   */
  claim(batchId: string, n: number): Promise<ClaimedItem[]> {
    const now = Date.now()
    // the rows are picked (and locked) once, in a CTE: as an IN (…LIMIT…) subquery PostgreSQL
    // may evaluate the pick per row and claim every pending item
    return this.sql
      .all<ClaimedItem>(
        `WITH picked AS (
           SELECT batch_id, idx FROM batch_items
           WHERE batch_id = ? AND status IS NULL AND lease_owner IS NULL
           ORDER BY idx LIMIT ? FOR UPDATE SKIP LOCKED)
         UPDATE batch_items AS b SET lease_owner = ?, lease_until = ?
         FROM picked WHERE b.batch_id = picked.batch_id AND b.idx = picked.idx
         RETURNING ${CLAIMED}`,
        [batchId, n, this.owner, now + this.leaseMs],
      )
      .then((rows) => rows.sort((a, b) => a.idx - b.idx))
  }

  /**
   * Fails, with `error`, the items another instance claimed and stopped renewing (it died with
   * them in flight), and counts them on the batch. → how many. Two instances doing this at once
   * fail each item once: the row lock makes the second one's `status IS NULL` false.
   */
  failLost(batchId: string, error: ItemError): Promise<number> {
    const now = Date.now()
    return this.sql.tx(async (q) => {
      const n = await q.run(
        `UPDATE batch_items SET status = 'failed', error = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL
         WHERE batch_id = ? AND status IS NULL AND lease_owner IS NOT NULL AND lease_owner <> ? AND lease_until < ?`,
        [JSON.stringify(error), now, batchId, this.owner, now],
      )
      if (n > 0) await q.run('UPDATE batches SET failed = failed + ? WHERE id = ?', [n, batchId])
      return n
    })
  }

  /** Keeps this instance's claims on a batch's items alive. */
  async renew(batchId: string): Promise<void> {
    await this.sql.run('UPDATE batch_items SET lease_until = ? WHERE batch_id = ? AND lease_owner = ? AND status IS NULL', [Date.now() + this.leaseMs, batchId, this.owner])
  }

  /** Gives up this instance's claims on a batch's items that it will not run (shutdown). */
  async drop(batchId: string): Promise<void> {
    await this.dropExcept(batchId, [])
  }

  /** Gives up this instance's claims on a batch's items, but those in `keep` (in flight). */
  async dropExcept(batchId: string, keep: number[]): Promise<void> {
    const except = keep.length > 0 ? ` AND idx NOT IN (${keep.map(() => '?').join(', ')})` : ''
    await this.sql.run(`UPDATE batch_items SET lease_until = NULL, lease_owner = NULL WHERE batch_id = ? AND lease_owner = ? AND status IS NULL${except}`, [batchId, this.owner, ...keep])
  }

  /** Whether this instance may write the batch's output files and end it (no other one is). */
  async finalizer(batchId: string): Promise<boolean> {
    const now = Date.now()
    const rows = await this.sql.all(
      `UPDATE batches SET finalizer = ?, finalizer_until = ? WHERE id = ? AND ended_at IS NULL
       AND (finalizer IS NULL OR finalizer_until < ? OR finalizer = ?) RETURNING id`,
      [this.owner, now + this.leaseMs, batchId, now, this.owner],
    )
    return rows.length === 1
  }
}
