// The batches and batch_items tables: batch rows through drizzle; the item statements that
// run per item (read, result) are plain SQL (prepared once on SQLite). The main thread reads
// and ends batches; a worker's results writer stores results with this store on its own
// connection. Every read of a batch is scoped to its key: another key's batch is simply not found.
import { and, desc, eq, gt, inArray, isNull, lt, or, type SQL } from 'drizzle-orm'
import type { Storage } from '../db/client.ts'
import { names, selectList } from '../db/columns.ts'
import { batchIngests, batchItems, batches as batchTable } from '../db/schema.ts'
import { DIALECT, type Param, type Sql } from '../db/sql.ts'
import type { BatchFamily, BatchRow, BatchStatus, ItemError } from './types.ts'
import type { PruneStep } from '../lib/prune-steps.ts'

/** A pending item as the scheduler admits it (its body stays in the database for the worker). */
export interface ClaimedItem {
  idx: number
  model: string
  promptEstimate: number
  maxOutputTokens: number | null
  /** null: one (an item stored before the column was). */
  choices: number | null
  /** The tier it is held at (null: standard, and an item stored before the column was). */
  serviceTier: string | null
  /** What it may be billed for beyond its prompt and cap, JSON (item-hold.ts; null: nothing, and an item stored before the column was). */
  beyond: string | null
}

/** An item's stored result, as the results route, exports and output files read it. */
export interface ItemRow {
  idx: number
  customId: string | null
  status: 'succeeded' | 'failed'
  response: string | null
  error: string | null
  usage: string | null
  requestId: string | null
}

/** A result to store. */
export interface ResultWrite {
  batchId: string
  idx: number
  status: 'succeeded' | 'failed'
  response: string | null
  error: string | null
  usage: string | null
  requestId: string
  finishedAt: number
}

/** Which items an end of batch fails, and the counter that keeps them. */
export type EndKind = 'cancelled' | 'expired' | 'failed'

const item = names(batchItems)
const batch = names(batchTable)
const ingest = names(batchIngests)
const ITEM_COLUMNS = selectList(batchItems, ['idx', 'customId', 'status', 'response', 'error', 'usage', 'requestId'])
const CLAIMED_COLUMNS = selectList(batchItems, ['idx', 'model', 'promptEstimate', 'maxOutputTokens', 'choices', 'serviceTier', 'beyond'])
/** The ingest marker of a batch goes: its items are owned now, or gone. */
const UNMARK = `DELETE FROM ${ingest.$table} WHERE ${ingest.batchId} = ?`
/** A create whose items another gateway's sweep took for a crash's leftovers (create/writer.ts): it is refused. */
export class IngestSwept extends Error {}
/** A result, stored only if the item has none yet. */
const cmp = (a: ResultWrite, b: ResultWrite) => (a.batchId < b.batchId ? -1 : a.batchId > b.batchId ? 1 : a.idx - b.idx)
const STORE_RESULT = `UPDATE ${item.$table} SET ${item.status} = ?, ${item.response} = ?, ${item.error} = ?, ${item.usage} = ?, ${item.requestId} = ?, ${item.finishedAt} = ? WHERE ${item.batchId} = ? AND ${item.idx} = ? AND ${item.status} IS NULL`
/** An item's result as stored, to tell one stored by an earlier attempt of the same write (`storedAs`). */
const STORED_RESULT = `SELECT ${selectList(batchItems, ['status', 'error', 'requestId', 'finishedAt'])} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.idx} = ?`
const BODY = `SELECT ${selectList(batchItems, ['body'])} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.idx} = ?`
/** Retention: a batch whose items are being removed, and the next whose end is past the retention. */
const MARKED_WITH_ITEMS = `SELECT ${batch.id} AS "id" FROM ${batch.$table} b WHERE ${batch.itemsPrunedAt} IS NOT NULL AND EXISTS (SELECT 1 FROM ${item.$table} i WHERE i.${item.batchId} = b.${batch.id}) LIMIT 1`
const ENDED_BEFORE = `SELECT ${batch.id} AS "id" FROM ${batch.$table} WHERE ${batch.endedAt} < ? AND ${batch.itemsPrunedAt} IS NULL ORDER BY ${batch.endedAt} LIMIT 1`
const MARK_PRUNED = `UPDATE ${batch.$table} SET ${batch.itemsPrunedAt} = ? WHERE ${batch.id} = ? AND ${batch.itemsPrunedAt} IS NULL`
/** A batch's item at a position in index order; its items to an index; all its items. */
const NTH_ITEM = `SELECT ${item.idx} AS "idx" FROM ${item.$table} WHERE ${item.batchId} = ? ORDER BY ${item.idx} LIMIT 1 OFFSET ?`
const ITEMS_TO = `DELETE FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.idx} <= ?`
const ITEMS_OF = `DELETE FROM ${item.$table} WHERE ${item.batchId} = ?`
const COUNT_RESULTS = `UPDATE ${batch.$table} SET ${batch.succeeded} = ${batch.succeeded} + ?, ${batch.failed} = ${batch.failed} + ? WHERE ${batch.id} = ?`

export class BatchStore {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db
  }

  private get t() {
    return this.storage.t.batches
  }

  get sql(): Sql {
    return this.storage.sql
  }

  private get rowid() {
    return DIALECT[this.sql.dialect].rowid
  }

  /**
   * The batch row, and its items now owned by it (the ingest marker goes). Throws IngestSwept,
   * making nothing, when the marker is gone: another gateway's sweep took the create for a
   * crash's and may have removed some of its items.
   */
  async insert(row: BatchRow): Promise<void> {
    // drizzle writes the statement in this dialect; it runs on the transaction's connection
    const insert = this.db.insert(this.t).values(row).toSQL()
    await this.sql.tx(async (q) => {
      if ((await q.run(UNMARK, [row.id])) === 0) throw new IngestSwept()
      await q.run(insert.sql, insert.params as Param[])
    })
  }

  async get(owner: string, id: string, family?: BatchFamily): Promise<BatchRow | null> {
    const batches = this.t
    const where = and(eq(batches.id, id), eq(batches.apiKeyId, owner), family ? eq(batches.family, family) : undefined)
    const [r] = await this.db.select().from(batches).where(where).limit(1)
    return r ?? null
  }

  async byId(id: string): Promise<BatchRow | null> {
    const [r] = await this.db.select().from(this.t).where(eq(this.t.id, id)).limit(1)
    return r ?? null
  }

  /**
   * Newest first, `limit` + 1 read to know `hasMore`. `after`/`before` name a batch of the
   * owner's (null when they do not); `before` pages walk towards newer batches.
   */
  async list(owner: string, q: { limit: number; after?: string; before?: string; endpoint?: string; family?: BatchFamily }): Promise<{ data: BatchRow[]; hasMore: boolean } | null> {
    const batches = this.t
    const cursorId = q.after ?? q.before
    let cursor: SQL | undefined
    if (cursorId !== undefined) {
      const c = await this.get(owner, cursorId, q.family)
      if (!c) return null
      cursor = q.before
        ? or(gt(batches.createdAt, c.createdAt), and(eq(batches.createdAt, c.createdAt), gt(batches.id, c.id)))
        : or(lt(batches.createdAt, c.createdAt), and(eq(batches.createdAt, c.createdAt), lt(batches.id, c.id)))
    }
    const where = and(eq(batches.apiKeyId, owner), q.family ? eq(batches.family, q.family) : undefined, cursor)
    const order = q.before ? [batches.createdAt, batches.id] : [desc(batches.createdAt), desc(batches.id)]
    const rows = await this.db.select().from(batches).where(where).orderBy(...order).limit(q.limit + 1)
    const hasMore = rows.length > q.limit
    const data = rows.slice(0, q.limit)
    return { data: q.before ? data.reverse() : data, hasMore }
  }

  /** Batches not ended yet: the scheduler's work after a start. */
  open(): Promise<BatchRow[]> {
    return this.db.select().from(this.t).where(isNull(this.t.endedAt)).orderBy(this.t.createdAt)
  }

  /** Open batches that read this file. */
  readingFile(fileId: string): Promise<BatchRow[]> {
    return this.db.select().from(this.t).where(and(eq(this.t.inputFileId, fileId), isNull(this.t.endedAt)))
  }

  async update(id: string, set: Partial<BatchRow>): Promise<void> {
    await this.db.update(this.t).set(set).where(eq(this.t.id, id))
  }

  /** A status change that holds only while the row is still in one of `from`: a cancel that
   *  landed first (here or on another instance) is never overwritten. → whether it applied. */
  async transition(id: string, from: BatchStatus[], set: Partial<BatchRow>): Promise<boolean> {
    const changed = await this.db.update(this.t).set(set).where(and(eq(this.t.id, id), inArray(this.t.status, from))).returning({ id: this.t.id })
    return changed.length > 0
  }

  /** Up to `n` pending items from index `from` on, in input order (a read: what is in flight is kept in memory). */
  pending(batchId: string, from: number, n: number): Promise<ClaimedItem[]> {
    return this.sql.all<ClaimedItem>(
      `SELECT ${CLAIMED_COLUMNS}
       FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.status} IS NULL AND ${item.idx} >= ? ORDER BY ${item.idx} LIMIT ?`,
      [batchId, from, n],
    )
  }

  /** An item's request body (a worker reads it: it never crosses the main thread). */
  async body(batchId: string, idx: number): Promise<string | null> {
    return (await this.sql.get<{ body: string }>(BODY, [batchId, idx]))?.body ?? null
  }

  /** Items without a result yet (pending or in flight). */
  async unfinished(batchId: string): Promise<number> {
    return (await this.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.status} IS NULL`, [batchId]))!.n
  }

  /**
   * Stores results and moves the counters; pass the transaction (`q`). An item that already
   * has a result keeps it (each index has exactly one): for each result, whether it was stored.
   */
  async writeResults(results: ResultWrite[], q: Sql): Promise<boolean[]> {
    const counts = new Map<string, { ok: number; failed: number }>()
    const stored: boolean[] = new Array(results.length).fill(false)
    // in one order, the claims' (by batch, then index): two transactions that store or fail items
    // of a batch take their rows' locks in the same order, and so never wait on each other in a ring
    const order = results.map((_, i) => i).sort((a, b) => cmp(results[a]!, results[b]!))
    for (const i of order) {
      const r = results[i]!
      stored[i] = (await q.run(STORE_RESULT, [r.status, r.response, r.error, r.usage, r.requestId, r.finishedAt, r.batchId, r.idx])) === 1
    }
    results.forEach((r, i) => {
      if (!stored[i]) return
      let c = counts.get(r.batchId)
      if (!c) counts.set(r.batchId, (c = { ok: 0, failed: 0 }))
      if (r.status === 'succeeded') c.ok++
      else c.failed++
    })
    for (const [id, c] of counts) await q.run(COUNT_RESULTS, [c.ok, c.failed, id])
    return stored
  }

  /**
   * Of results `writeResults` did not store (the item had one), whether the one it has is this
   * one: stored by an earlier attempt of the same write whose COMMIT took effect with its answer
   * lost. Told by the item's status, error, request id and finish time (taken when the result was
   * queued, the same for every attempt); pass the transaction (`q`).
   */
  async storedAs(results: ResultWrite[], q: Sql): Promise<boolean[]> {
    const out: boolean[] = []
    for (const r of results) {
      const row = await q.get<{ status: string | null; error: string | null; requestId: string | null; finishedAt: number | string | null }>(STORED_RESULT, [r.batchId, r.idx])
      out.push(row !== null && row.status === r.status && row.error === r.error && row.requestId === r.requestId && Number(row.finishedAt) === r.finishedAt)
    }
    return out
  }

  /**
   * Fails up to `chunk` pending items with index `from` or later (those never handed out) of
   * an ended batch with `error`, and counts them; returns how many (0: none left). In chunks,
   * so the loop is never held long; `only` limits it to these indexes (items put back);
   * `unmarked` leaves out the items marked in flight (SQLite).
   */
  failPending(batchId: string, kind: EndKind, error: ItemError, chunk: number, from: number, only?: number[], unleasedAt?: number, unmarked = false): Promise<number> {
    const column = kind === 'cancelled' ? batch.cancelledItems : kind === 'expired' ? batch.expiredItems : null
    const text = JSON.stringify(error)
    const now = Date.now()
    const rowid = this.rowid
    // an item a results writer is storing now (its row locked) ends with its result, not this
    const skipLocked = DIALECT[this.sql.dialect].skipLocked
    return this.sql.tx(async (q) => {
      let n = 0
      if (only) {
        const one = `UPDATE ${item.$table} SET ${item.status} = 'failed', ${item.error} = ?, ${item.finishedAt} = ? WHERE ${rowid} IN (SELECT ${rowid} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.idx} = ? AND ${item.status} IS NULL${skipLocked})`
        for (const idx of only) n += await q.run(one, [text, now, batchId, idx])
      } else {
        // instances sharing the database: items another one holds under a live lease finish there
        const unleased = unleasedAt === undefined ? '' : ` AND (${item.leaseUntil} IS NULL OR ${item.leaseUntil} < ?)`
        // one SQLite data dir, another gateway runs the batch: the items it marked in flight end there, with their results
        const free = unmarked ? ` AND ${item.leaseOwner} IS NULL` : ''
        n = await q.run(
          `UPDATE ${item.$table} SET ${item.status} = 'failed', ${item.error} = ?, ${item.finishedAt} = ? WHERE ${rowid} IN (SELECT ${rowid} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.status} IS NULL AND ${item.idx} >= ?${unleased}${free} ORDER BY ${item.idx} LIMIT ?${skipLocked})`,
          unleasedAt === undefined ? [text, now, batchId, from, chunk] : [text, now, batchId, from, unleasedAt, chunk],
        )
      }
      if (n > 0) {
        await q.run(`UPDATE ${batch.$table} SET ${batch.failed} = ${batch.failed} + ?${column ? `, ${column} = ${column} + ?` : ''} WHERE ${batch.id} = ?`, column ? [n, n, batchId] : [n, batchId])
      }
      return n
    })
  }

  /** Results with index from `from` (inclusive) to `to` (exclusive), in order; `status` filters. */
  results(batchId: string, from: number, to: number, limit: number, status?: 'succeeded' | 'failed'): Promise<ItemRow[]> {
    const filter = status === 'succeeded' ? `${item.status} = 'succeeded'` : status === 'failed' ? `${item.status} = 'failed'` : `${item.status} IS NOT NULL`
    return this.sql.all<ItemRow>(
      `SELECT ${ITEM_COLUMNS} FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.idx} >= ? AND ${item.idx} < ? AND ${filter} ORDER BY ${item.idx} LIMIT ?`,
      [batchId, from, to, limit],
    )
  }

  /**
   * Deletes a batch's first `limit` items by index, as a range of the table's key: a subquery of
   * row ids (`rowid IN (SELECT … LIMIT n)`) was planned by SQLite as a scan of every batch's items
   * on a large table (5 million: 3-4.5 s a step).
   */
  private async deleteSomeItems(batchId: string, limit: number): Promise<number> {
    const last = await this.sql.get<{ idx: number }>(NTH_ITEM, [batchId, limit - 1])
    return last ? this.sql.run(ITEMS_TO, [batchId, last.idx]) : this.sql.run(ITEMS_OF, [batchId])
  }

  /** Removes a batch's items (a refused create, a deleted batch), in chunks, and its ingest marker. */
  async deleteItems(batchId: string): Promise<void> {
    while ((await this.deleteSomeItems(batchId, 2000)) > 0) await new Promise((r) => setImmediate(r))
    await this.sql.run(UNMARK, [batchId])
  }

  /** The batch whose items the pruner is removing; null: none; undefined: not looked for since the start. */
  private emptying?: string | null

  /**
   * One step of removing the items of batches that ended before `before`: marks the batch
   * whose end is oldest (its results are gone from then on, for readers too), then deletes up to
   * `limit` of its items a step. A batch marked and not emptied (a stop between steps) goes first.
   */
  async pruneItemsSome(before: number, now: number, limit: number): Promise<PruneStep> {
    let id = this.emptying === undefined ? (await this.sql.get<{ id: string }>(MARKED_WITH_ITEMS))?.id : (this.emptying ?? undefined)
    if (id === undefined) {
      id = (await this.sql.get<{ id: string }>(ENDED_BEFORE, [before]))?.id
      if (id === undefined) {
        this.emptying = null
        return { deleted: 0, more: false }
      }
      await this.sql.run(MARK_PRUNED, [now, id])
    }
    const deleted = await this.deleteSomeItems(id, limit)
    this.emptying = deleted < limit ? null : id
    return { deleted, more: true }
  }

  /** Removes an ended batch and its results. */
  async delete(id: string): Promise<void> {
    await this.db.delete(this.t).where(eq(this.t.id, id))
    await this.deleteItems(id)
  }
}
