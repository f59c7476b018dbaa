// Batch items in flight on SQLite (one instance on one file, kept to it by the data-dir lock): as
// a round of items is handed out, one statement marks them with this process's id (the
// `lease_owner` that PostgreSQL's claims use, with no lease time: no other instance waits on
// them) before any can reach the upstream. A process killed with items marked may have sent
// them, so the next start fails them with LOST_ITEM instead of sending them again, as another
// instance fails a dead one's claims on PostgreSQL (leases.ts): every item goes upstream at most
// once. An item handed out and then kept waiting unsent (for credit, for the shared store, or for
// a worker: its own died or never started before its upstream call began) has its mark taken off
// again (one statement a turn, unmark), so a kill -9 does not count it lost; a graceful stop gives
// back the marks of the items it never sent, and those run after the restart. A stored result
// ends its item's mark: every statement here looks at items with none.
// Several gateways may serve from one data dir (sharing Redis): only the holder of the batch
// runner lock (runner-lock.ts) runs batches and marks, so its start still takes every other mark
// for a dead process's. An item another gateway failed (a cancel there) is not marked, nor sent.
import type { Sql } from '../db/sql.ts'
import type { ItemError } from './types.ts'
import { names } from '../db/columns.ts'
import { batchItems, batches } from '../db/schema.ts'

const item = names(batchItems)
const batch = names(batches)
/** The indexes of a round, as one JSON parameter: one prepared statement whatever their number. */
const IDXS = `(SELECT value FROM json_each(?))`
const MARK = `UPDATE ${item.$table} SET ${item.leaseOwner} = ? WHERE ${item.batchId} = ? AND ${item.idx} IN ${IDXS} AND ${item.status} IS NULL RETURNING ${item.idx} AS idx`
const FAIL_LOST = `UPDATE ${item.$table} SET ${item.status} = 'failed', ${item.error} = ?, ${item.finishedAt} = ?, ${item.leaseOwner} = NULL
  WHERE ${item.batchId} = ? AND ${item.status} IS NULL AND ${item.leaseOwner} IS NOT NULL AND ${item.leaseOwner} <> ?`
const COUNT_FAILED = `UPDATE ${batch.$table} SET ${batch.failed} = ${batch.failed} + ? WHERE ${batch.id} = ?`
const UNMARK = `UPDATE ${item.$table} SET ${item.leaseOwner} = NULL
  WHERE ${item.batchId} = ? AND ${item.leaseOwner} = ? AND ${item.status} IS NULL AND ${item.idx} IN ${IDXS}`
const GIVE_BACK = `UPDATE ${item.$table} SET ${item.leaseOwner} = NULL
  WHERE ${item.batchId} = ? AND ${item.leaseOwner} = ? AND ${item.status} IS NULL AND ${item.idx} NOT IN ${IDXS}`

export class InFlightMarks {
  /** This process, as lease_owner. */
  readonly owner = 'proc_' + Bun.randomUUIDv7().replaceAll('-', '')

  constructor(private readonly sql: Sql) {}

  /**
   * Marks a round of a batch's items in flight here: one statement, before any is sent. → the
   * indexes marked: not one that has a result already (failed by a cancel on another gateway).
   */
  async mark(batchId: string, idxs: number[]): Promise<Set<number>> {
    if (idxs.length === 0) return new Set()
    const rows = await this.sql.tx((q) => q.all<{ idx: number }>(MARK, [this.owner, batchId, JSON.stringify(idxs)]))
    return new Set(rows.map((r) => r.idx))
  }

  /** Items of a round that wait here unsent (refused for now at admission): their marks go, in one statement. */
  async unmark(batchId: string, idxs: number[]): Promise<void> {
    if (idxs.length === 0) return
    await this.sql.tx((q) => q.run(UNMARK, [batchId, this.owner, JSON.stringify(idxs)]))
  }

  /**
   * Fails, with `error`, a batch's items an earlier process marked and stored no result for (it
   * was killed with them in flight), and counts them on the batch. → how many.
   */
  failLost(batchId: string, error: ItemError): Promise<number> {
    return this.sql.tx(async (q) => {
      const n = await q.run(FAIL_LOST, [JSON.stringify(error), Date.now(), batchId, this.owner])
      if (n > 0) await q.run(COUNT_FAILED, [n, batchId])
      return n
    })
  }

  /** A graceful stop: the marks of a batch's items without a result go, but those in `keep` (they may have been sent). */
  async giveBack(batchId: string, keep: number[]): Promise<void> {
    await this.sql.tx((q) => q.run(GIVE_BACK, [batchId, this.owner, JSON.stringify(keep)]))
  }
}
