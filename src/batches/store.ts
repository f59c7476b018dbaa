// The batches and batch_items tables: batch rows through drizzle; the item statements that
// run per item (read, result) are prepared once. The main thread reads and ends batches; a
// worker's results writer stores results with this store on its own connection. Every read of a
// batch is scoped to its key: another key's batch is simply not found.
import type { Statement } from 'bun:sqlite'
import { and, desc, eq, gt, isNull, lt, or, type SQL } from 'drizzle-orm'
import type { Storage } from '../db/client.ts'
import { batches } from '../db/schema.ts'
import type { BatchFamily, BatchRow, ItemError } from './types.ts'

/** A pending item as the scheduler admits it (its body stays in the database for the worker). */
export interface ClaimedItem {
  idx: number
  model: string
  promptEstimate: number
  maxOutputTokens: number | null
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

const ITEM_COLUMNS = 'idx, custom_id AS customId, status, response, error, usage, request_id AS requestId'

export class BatchStore {
  private stmts = new Map<string, Statement>()

  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db
  }

  get sqlite() {
    return this.storage.sqlite
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql)
    if (!s) this.stmts.set(sql, (s = this.sqlite.prepare(sql)))
    return s
  }

  /** The batch row, and its items now owned by it (the ingest marker goes). */
  insert(row: BatchRow): void {
    this.sqlite.transaction(() => {
      this.db.insert(batches).values(row).run()
      this.stmt('DELETE FROM batch_ingests WHERE batch_id = ?').run(row.id)
    })()
  }

  get(owner: string, id: string, family?: BatchFamily): BatchRow | null {
    const where = and(eq(batches.id, id), eq(batches.apiKeyId, owner), family ? eq(batches.family, family) : undefined)
    return this.db.select().from(batches).where(where).get() ?? null
  }

  byId(id: string): BatchRow | null {
    return this.db.select().from(batches).where(eq(batches.id, id)).get() ?? null
  }

  /**
   * Newest first, `limit` + 1 read to know `hasMore`. `after`/`before` name a batch of the
   * owner's (null when they do not); `before` pages walk towards newer batches.
   */
  list(owner: string, q: { limit: number; after?: string; before?: string; endpoint?: string; family?: BatchFamily }): { data: BatchRow[]; hasMore: boolean } | null {
    const cursorId = q.after ?? q.before
    let cursor: SQL | undefined
    if (cursorId !== undefined) {
      const c = this.get(owner, cursorId, q.family)
      if (!c) return null
      cursor = q.before
        ? or(gt(batches.createdAt, c.createdAt), and(eq(batches.createdAt, c.createdAt), gt(batches.id, c.id)))
        : or(lt(batches.createdAt, c.createdAt), and(eq(batches.createdAt, c.createdAt), lt(batches.id, c.id)))
    }
    const where = and(eq(batches.apiKeyId, owner), q.family ? eq(batches.family, q.family) : undefined, cursor)
    const order = q.before ? [batches.createdAt, batches.id] : [desc(batches.createdAt), desc(batches.id)]
    const rows = this.db.select().from(batches).where(where).orderBy(...order).limit(q.limit + 1).all()
    const hasMore = rows.length > q.limit
    const data = rows.slice(0, q.limit)
    return { data: q.before ? data.reverse() : data, hasMore }
  }

  /** Batches not ended yet: the scheduler's work after a start. */
  open(): BatchRow[] {
    return this.db.select().from(batches).where(isNull(batches.endedAt)).orderBy(batches.createdAt).all()
  }

  /** Open batches that read this file. */
  readingFile(fileId: string): BatchRow[] {
    return this.db.select().from(batches).where(and(eq(batches.inputFileId, fileId), isNull(batches.endedAt))).all()
  }

  update(id: string, set: Partial<BatchRow>): void {
    this.db.update(batches).set(set).where(eq(batches.id, id)).run()
  }

  /** Up to `n` pending items from index `from` on, in input order (a read: what is in flight is kept in memory). */
  pending(batchId: string, from: number, n: number): ClaimedItem[] {
    return this.stmt(
      `SELECT idx, model, prompt_estimate AS promptEstimate, max_output_tokens AS maxOutputTokens
       FROM batch_items WHERE batch_id = ? AND status IS NULL AND idx >= ? ORDER BY idx LIMIT ?`,
    ).all(batchId, from, n) as ClaimedItem[]
  }

  /** An item's request body (a worker reads it: it never crosses the main thread). */
  body(batchId: string, idx: number): string | null {
    return (this.stmt('SELECT body FROM batch_items WHERE batch_id = ? AND idx = ?').get(batchId, idx) as { body: string } | null)?.body ?? null
  }

  /** Items without a result yet (pending or in flight). */
  unfinished(batchId: string): number {
    return (this.stmt('SELECT count(*) AS n FROM batch_items WHERE batch_id = ? AND status IS NULL').get(batchId) as { n: number }).n
  }

  /**
   * Stores results and moves the counters; call inside a transaction. An item that already
   * has a result keeps it (each index has exactly one): for each result, whether it was stored.
   */
  writeResults(results: ResultWrite[]): boolean[] {
    const upd = this.stmt(
      'UPDATE batch_items SET status = ?, response = ?, error = ?, usage = ?, request_id = ?, finished_at = ? WHERE batch_id = ? AND idx = ? AND status IS NULL',
    )
    const counts = new Map<string, { ok: number; failed: number }>()
    const stored = results.map((r) => upd.run(r.status, r.response, r.error, r.usage, r.requestId, r.finishedAt, r.batchId, r.idx).changes === 1)
    results.forEach((r, i) => {
      if (!stored[i]) return
      let c = counts.get(r.batchId)
      if (!c) counts.set(r.batchId, (c = { ok: 0, failed: 0 }))
      if (r.status === 'succeeded') c.ok++
      else c.failed++
    })
    const bump = this.stmt('UPDATE batches SET succeeded = succeeded + ?, failed = failed + ? WHERE id = ?')
    for (const [id, c] of counts) bump.run(c.ok, c.failed, id)
    return stored
  }

  /**
   * Fails up to `chunk` pending items with index `from` or later (those never handed out) of
   * an ended batch with `error`, and counts them; returns how many (0: none left). In chunks,
   * so the loop is never held long; `only` limits it to these indexes (items put back).
   */
  failPending(batchId: string, kind: EndKind, error: ItemError, chunk: number, from: number, only?: number[]): number {
    const column = kind === 'cancelled' ? 'cancelled_items' : kind === 'expired' ? 'expired_items' : null
    const text = JSON.stringify(error)
    const now = Date.now()
    return this.sqlite.transaction(() => {
      let n = 0
      if (only) {
        const one = this.stmt(`UPDATE batch_items SET status = 'failed', error = ?, finished_at = ? WHERE batch_id = ? AND idx = ? AND status IS NULL`)
        for (const idx of only) n += one.run(text, now, batchId, idx).changes
      } else {
        n = this.stmt(
          `UPDATE batch_items SET status = 'failed', error = ?, finished_at = ? WHERE rowid IN (SELECT rowid FROM batch_items WHERE batch_id = ? AND status IS NULL AND idx >= ? ORDER BY idx LIMIT ?)`,
        ).run(text, now, batchId, from, chunk).changes
      }
      if (n > 0) {
        this.stmt(`UPDATE batches SET failed = failed + ?${column ? `, ${column} = ${column} + ?` : ''} WHERE id = ?`).run(...(column ? [n, n, batchId] : [n, batchId]))
      }
      return n
    })()
  }

  /** Results with index from `from` (inclusive) to `to` (exclusive), in order; `status` filters. */
  results(batchId: string, from: number, to: number, limit: number, status?: 'succeeded' | 'failed'): ItemRow[] {
    const filter = status === 'succeeded' ? "status = 'succeeded'" : status === 'failed' ? "status = 'failed'" : 'status IS NOT NULL'
    return this.stmt(
      `SELECT ${ITEM_COLUMNS} FROM batch_items WHERE batch_id = ? AND idx >= ? AND idx < ? AND ${filter} ORDER BY idx LIMIT ?`,
    ).all(batchId, from, to, limit) as ItemRow[]
  }

  /** Removes a batch's items (a refused create, a deleted batch), in chunks, and its ingest marker. */
  async deleteItems(batchId: string): Promise<void> {
    const del = this.stmt('DELETE FROM batch_items WHERE rowid IN (SELECT rowid FROM batch_items WHERE batch_id = ? LIMIT 2000)')
    while (del.run(batchId).changes > 0) await new Promise((r) => setImmediate(r))
    this.stmt('DELETE FROM batch_ingests WHERE batch_id = ?').run(batchId)
  }

  /** Removes an ended batch and its results. */
  async delete(id: string): Promise<void> {
    this.db.delete(batches).where(eq(batches.id, id)).run()
    await this.deleteItems(id)
  }
}
