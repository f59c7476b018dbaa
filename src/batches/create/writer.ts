// Stores checked items as a worker reads them, in short transactions (a few hundred rows or
// a few MB), so the main thread's own writes never wait long for SQLite's one write lock.
// While it runs, a row in batch_ingests marks the items as not yet owned by a batch: the
// main thread removes it when it creates the batch, and a start after a crash removes the
// items it names. Where other gateways may be creating batches in the same database (PostgreSQL,
// or a SQLite data dir several serve from), only markers older than any create takes are taken
// for a crash's (STALE_INGEST_MS), at the start and every half minute; a create whose marker was
// taken all the same is refused at its end (store.ts insert), never made with half its items.
import { names } from '../../db/columns.ts'
import { batchIngests, batchItems } from '../../db/schema.ts'
import { DIALECT, rowParts, type Param, type Sql } from '../../db/sql.ts'
import type { CheckedItem } from './validate.ts'

const MAX_ROWS = 500
const MAX_BYTES = 4 * 1024 * 1024
const DELETE_CHUNK = 2_000

const item = names(batchItems)
const ingest = names(batchIngests)
/** The columns an item is stored with, in the order `flush` gives their values. */
const ITEM_COLUMNS = [item.batchId, item.idx, item.customId, item.body, item.model, item.promptEstimate, item.maxOutputTokens, item.choices, item.serviceTier, item.beyond]
const ITEM_ROW = `(${ITEM_COLUMNS.map(() => '?').join(', ')})`
const UNMARK = `DELETE FROM ${ingest.$table} WHERE ${ingest.batchId} = ?`

export class ItemWriter {
  private rows: [number, CheckedItem][] = []
  private bytes = 0
  /** The insert in progress: one at a time, in order. */
  private writing: Promise<void> = Promise.resolve()

  constructor(private readonly sql: Sql, readonly batchId: string) {}

  async begin() {
    await this.sql.run(`INSERT INTO ${ingest.$table} (${ingest.batchId}, ${ingest.startedAt}) VALUES (?, ?)`, [this.batchId, Date.now()])
  }

  /** Queues an item; resolves once the store has room for more (its chunk written when full). */
  async add(idx: number, item: CheckedItem) {
    this.rows.push([idx, item])
    this.bytes += item.body.length
    if (this.rows.length >= MAX_ROWS || this.bytes >= MAX_BYTES) await this.flush()
  }

  flush(): Promise<void> {
    if (this.rows.length === 0) return this.writing
    const rows = this.rows
    this.rows = []
    this.bytes = 0
    this.writing = this.writing.then(() =>
      this.sql.tx(async (q) => {
        for (const part of rowParts(rows)) {
          const params: Param[] = []
          for (const [idx, it] of part) params.push(this.batchId, idx, it.customId, it.body, it.model, it.promptEstimate, it.maxOutputTokens, it.choices, it.serviceTier, it.beyond)
          const values = part.map(() => ITEM_ROW).join(', ')
          await q.run(`INSERT INTO ${item.$table} (${ITEM_COLUMNS.join(', ')}) VALUES ${values}`, params)
        }
      }),
    )
    return this.writing
  }

  /** The batch was refused: its items go, in chunks, and so does the marker. */
  async discard() {
    this.rows = []
    await this.writing.catch(() => {})
    const rowid = DIALECT[this.sql.dialect].rowid
    const del = `DELETE FROM ${item.$table} WHERE ${rowid} IN (SELECT ${rowid} FROM ${item.$table} WHERE ${item.batchId} = ? LIMIT ?)`
    while ((await this.sql.run(del, [this.batchId, DELETE_CHUNK])) > 0) await new Promise((r) => setTimeout(r, 0))
    await this.sql.run(UNMARK, [this.batchId])
  }
}

/**
 * A create's marker older than this is a crash's: a create of the largest file (50,000 items,
 * 200 MB) stores its items in well under a minute, so this is many times the longest one.
 */
export const STALE_INGEST_MS = 15 * 60_000

/**
 * What a crash in the middle of a create left: items no batch owns. Main thread. `before`: only
 * creates begun before this time (epoch ms), where other gateways may be creating batches now;
 * every one when this process is alone on its store (a start).
 */
export async function sweepIngests(sql: Sql, before = Infinity): Promise<number> {
  const left = Number.isFinite(before)
    ? await sql.all<{ id: string }>(`SELECT ${ingest.batchId} AS id FROM ${ingest.$table} WHERE ${ingest.startedAt} < ?`, [before])
    : await sql.all<{ id: string }>(`SELECT ${ingest.batchId} AS id FROM ${ingest.$table}`)
  let removed = 0
  for (const { id } of left) {
    removed += await sql.run(`DELETE FROM ${item.$table} WHERE ${item.batchId} = ?`, [id])
    await sql.run(UNMARK, [id])
  }
  return removed
}
