// Batch work shared by instances on one PostgreSQL database: each instance claims pending
// items as it hands them to its workers (FOR UPDATE SKIP LOCKED: two instances never claim the
// same item), with a lease it renews while it holds them. An instance claims only what runs
// at once, so a claim is as good as sent: when an instance dies (kill -9), its claimed items
// may have reached the upstream, and once their lease has run out the others fail them with
// LOST_ITEM rather than send them again — every item goes upstream at most once and ends with
// exactly one result. Claims an instance gives back (shutdown, cancel, an item refused for now
// at admission, or one whose worker died before its upstream call began, that would otherwise
// wait claimed and unsent) run elsewhere, or here again. One
// instance at a time writes a batch's output files, under a lease of the same kind on the
// batch row. (SQLite: one instance, no leases; its items in flight are marked, marks.ts.)
import type { Sql } from '../db/sql.ts'
import type { ClaimedItem } from './store.ts'
import type { ItemError } from './types.ts'
import { names, selectList } from '../db/columns.ts'
import { batchItems, batches } from '../db/schema.ts'
import { loseAnswerIfAsked } from '../generations/test-lost-answer.ts'

const item = names(batchItems)
const batch = names(batches)
/** How long an instance kept out of a batch's places counts as waiting for them: two of its tries (active.ts's RECHECK_MS). */
const WAITER_MS = 1_200
/**
 * A batch's items that `where` picks and no other transaction has locked, locked (`?`: the
 * batch, then `where`'s own). A statement that updates claimed items waits for none (but
 * `release`, of items never sent, which nothing stores): a locked one
 * is being stored by the results writer, whose transaction goes on to other items (in its own
 * order) and to the keys' and the batch's rows, so waiting on it from a statement that holds some
 * of them already ended in a deadlock, PostgreSQL aborting one side after a second (renewals beside
 * a busy writer did, every few seconds).
 */
const lockFree = (where: string) => `SELECT ${item.batchId}, ${item.idx} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${where} FOR UPDATE SKIP LOCKED`
/** The rows of `cte` (the CTE of lockFree's) in an `UPDATE … AS b … FROM cte`. */
const same = (cte: string) => `WHERE b.${item.batchId} = ${cte}.${item.batchId} AND b.${item.idx} = ${cte}.${item.idx}`
/** This instance's pending claims on a batch, a lease longer (one a writer holds locked is ending: not waited for). */
const RENEW = `WITH mine AS (${lockFree(`${item.leaseOwner} = ? AND ${item.status} IS NULL`)}) UPDATE ${item.$table} AS b SET ${item.leaseUntil} = ? FROM mine ${same('mine')}`
/** A claimed item's columns, under their TypeScript names. */
const CLAIMED = selectList(batchItems, ['idx', 'model', 'promptEstimate', 'maxOutputTokens', 'choices', 'serviceTier', 'beyond'], 'b.')

export class ItemLeases {
  /** This process, as lease_owner. */
  readonly owner = 'inst_' + Bun.randomUUIDv7().replaceAll('-', '')

  constructor(
    private readonly sql: Sql,
    readonly leaseMs: number,
  ) {}

  /**
   * Up to `n` pending items no live lease holds, in input order, now this instance's, and no more
   * than leaves the batch's claims, every instance's, within `cap` (its concurrency is the
   * batch's, not each instance's). Its own live claims are not picked again: they are in flight
   * here, or waiting (scheduler.ts, unsent.ts). `limited`: fewer than `n` for want of room, not of items.
   */
  async claim(batchId: string, n: number, cap: number): Promise<{ items: ClaimedItem[]; limited: boolean }> {
    const out = await this.sql.tx(async (q) => {
      const now = Date.now()
      // one claim of a batch at a time, so that the count below holds every other one's
      const row = await q.get<{ waiter: string | null; until: number | string | null }>(
        `SELECT ${batch.claimWaiter} AS waiter, ${batch.claimWaiterUntil} AS until FROM ${batch.$table} WHERE ${batch.id} = ? FOR UPDATE`,
        [batchId],
      )
      const held = await q.get<{ n: number | string; mine: number | string }>(
        `SELECT count(*) AS n, count(*) FILTER (WHERE ${item.leaseOwner} = ?) AS mine FROM ${item.$table}
         WHERE ${item.batchId} = ? AND ${item.status} IS NULL AND ${item.leaseOwner} IS NOT NULL`,
        [this.owner, batchId],
      )
      let room = Math.min(n, cap - Number(held?.n ?? 0))
      // another instance was kept out lately: this one keeps to half the places, so that the ones
      // its items give back go to the other (it would take each again the moment it is free)
      const shared = row?.waiter != null && row.waiter !== this.owner && Number(row.until) > now
      if (shared) room = Math.min(room, Math.ceil(cap / 2) - Number(held?.mine ?? 0))
      const items = room > 0 ? await this.pick(q, batchId, room) : []
      const limited = room < n && items.length === Math.max(0, room)
      // kept out with nothing here: said on the batch row for the others' next claims
      if (limited && items.length === 0 && Number(held?.mine ?? 0) === 0) {
        await q.run(`UPDATE ${batch.$table} SET ${batch.claimWaiter} = ?, ${batch.claimWaiterUntil} = ? WHERE ${batch.id} = ?`, [this.owner, now + WAITER_MS, batchId])
      }
      return { items, limited }
    })
    // a test's lost answer here: the items claimed, and the claim failing as the database away
    loseAnswerIfAsked('claim')
    return out
  }

  private pick(q: Sql, batchId: string, n: number): Promise<ClaimedItem[]> {
    const now = Date.now()
    // the rows are picked (and locked) once, in a CTE: as an IN (…LIMIT…) subquery PostgreSQL
    // may evaluate the pick per row and claim every pending item
    return q
      .all<ClaimedItem>(
        `WITH picked AS (
           SELECT ${item.batchId}, ${item.idx} FROM ${item.$table}
           WHERE ${item.batchId} = ? AND ${item.status} IS NULL AND ${item.leaseOwner} IS NULL
           ORDER BY ${item.idx} LIMIT ? FOR UPDATE SKIP LOCKED)
         UPDATE ${item.$table} AS b SET ${item.leaseOwner} = ?, ${item.leaseUntil} = ?
         FROM picked WHERE b.${item.batchId} = picked.${item.batchId} AND b.${item.idx} = picked.${item.idx}
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
      // a row locked now is being stored by its owner, which is alive after all
      const n = await q.run(
        `WITH lost AS (${lockFree(`${item.status} IS NULL AND ${item.leaseOwner} IS NOT NULL AND ${item.leaseOwner} <> ? AND ${item.leaseUntil} < ?`)})
         UPDATE ${item.$table} AS b SET ${item.status} = 'failed', ${item.error} = ?, ${item.finishedAt} = ?, ${item.leaseOwner} = NULL, ${item.leaseUntil} = NULL
         FROM lost ${same('lost')}`,
        [batchId, this.owner, now, JSON.stringify(error), now],
      )
      if (n > 0) await q.run(`UPDATE ${batch.$table} SET ${batch.failed} = ${batch.failed} + ? WHERE ${batch.id} = ?`, [n, batchId])
      return n
    })
  }

  /** Keeps this instance's claims on a batch's items alive. */
  async renew(batchId: string): Promise<void> {
    await this.sql.run(RENEW, [batchId, this.owner, Date.now() + this.leaseMs])
  }

  /** Gives up this instance's claims on a batch's items that it will not run (shutdown). */
  async drop(batchId: string): Promise<void> {
    await this.dropExcept(batchId, [])
  }

  /** Gives up this instance's claims on a batch's items, but those in `keep` (in flight). */
  async dropExcept(batchId: string, keep: number[]): Promise<void> {
    const except = keep.length > 0 ? ` AND ${item.idx} NOT IN (${keep.map(() => '?').join(', ')})` : ''
    // one locked now is being stored: it is not given back
    const text = `WITH mine AS (${lockFree(`${item.leaseOwner} = ? AND ${item.status} IS NULL${except}`)})
      UPDATE ${item.$table} AS b SET ${item.leaseUntil} = NULL, ${item.leaseOwner} = NULL FROM mine ${same('mine')}`
    await this.sql.run(text, [batchId, this.owner, ...keep])
  }

  /**
   * Gives up this instance's claims on some of a batch's items (refused for now at admission,
   * never sent): any instance may claim them again, this one too. It waits for a row another
   * statement holds: skipped, as the statements above skip them, its claim would stay, renewed
   * here for ever, and the item never run anywhere (this instance's renewal holds its rows a moment
   * every second). Nothing stores these items (never sent) and the statements that lock them all
   * skip locked rows, so the wait is short and closes no ring.
   */
  async release(batchId: string, idxs: number[]): Promise<void> {
    if (idxs.length === 0) return
    const text = `UPDATE ${item.$table} SET ${item.leaseUntil} = NULL, ${item.leaseOwner} = NULL
      WHERE ${item.batchId} = ? AND ${item.leaseOwner} = ? AND ${item.status} IS NULL AND ${item.idx} IN (${idxs.map(() => '?').join(', ')})`
    await this.sql.run(text, [batchId, this.owner, ...idxs])
  }

  /**
   * Whether this instance may write the batch's output files and end it: `mine`; `other` while
   * another one is; `ended` once one has (or the batch is gone), when this one has nothing left to do for it.
   */
  async finalizer(batchId: string): Promise<'mine' | 'other' | 'ended'> {
    const now = Date.now()
    const rows = await this.sql.all(
      `UPDATE ${batch.$table} SET ${batch.finalizer} = ?, ${batch.finalizerUntil} = ? WHERE ${batch.id} = ? AND ${batch.endedAt} IS NULL
       AND (${batch.finalizer} IS NULL OR ${batch.finalizerUntil} < ? OR ${batch.finalizer} = ?) RETURNING ${batch.id}`,
      [this.owner, now + this.leaseMs, batchId, now, this.owner],
    )
    if (rows.length === 1) return 'mine'
    const row = await this.sql.get<{ ended: number | null }>(`SELECT ${batch.endedAt} AS ended FROM ${batch.$table} WHERE ${batch.id} = ?`, [batchId])
    return !row || row.ended !== null ? 'ended' : 'other'
  }
}
