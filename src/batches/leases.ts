// Batch work shared by instances on one PostgreSQL database: each instance claims pending
// items a few at a time (FOR UPDATE SKIP LOCKED: two instances never claim the same item)
// with a lease it renews while it holds them. The items of an instance that died are claimed
// by the others once its lease has run out. One instance at a time writes a batch's output
// files, under a lease of the same kind on the batch row. (SQLite: one instance, no leases.)
import type { Sql } from '../db/sql.ts'
import type { ClaimedItem } from './store.ts'

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
           WHERE batch_id = ? AND status IS NULL AND (lease_until IS NULL OR lease_until < ?)
           ORDER BY idx LIMIT ? FOR UPDATE SKIP LOCKED)
         UPDATE batch_items AS b SET lease_owner = ?, lease_until = ?
         FROM picked WHERE b.batch_id = picked.batch_id AND b.idx = picked.idx
         RETURNING b.idx, b.model, b.prompt_estimate AS "promptEstimate", b.max_output_tokens AS "maxOutputTokens"`,
        [batchId, now, n, this.owner, now + this.leaseMs],
      )
      .then((rows) => rows.sort((a, b) => a.idx - b.idx))
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
