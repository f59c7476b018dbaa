// The generations table and its hourly rollup, written together. Plain SQL through the
// store's seam (statements prepared once on SQLite): this is the write path of every request
// and the seeding path of the benchmark.
import type { Storage } from '../db/client.ts'
import { insertList, names, selectList, type ColumnKey } from '../db/columns.ts'
import { generations, usageHourly } from '../db/schema.ts'
import { DIALECT, rowParts, type Param, type Sql } from '../db/sql.ts'
import { addRollup, toRollup, type GenerationRow, type RollupDelta } from './row.ts'

// ON CONFLICT DO NOTHING only guards a batch against one impossible row (ids are the gateway's
// own, fresh per record); an ignored row is reported by the caller, never dropped silently.
// Many rows per statement, and RETURNING says which went in: one round trip per 100 records.
const g = names(generations)
const INSERT_COLUMNS = insertList(generations)
const PER_ROW = `(${Array(INSERT_COLUMNS.keys.length).fill('?').join(', ')})`
const inserts = new Map<number, string>()
const INSERT = (n: number) => {
  let q = inserts.get(n)
  if (!q) inserts.set(n, (q = `INSERT INTO ${g.$table} (${INSERT_COLUMNS.sql}) VALUES ${Array(n).fill(PER_ROW).join(', ')} ON CONFLICT DO NOTHING RETURNING ${selectList(generations, ['id'])}`))
  return q
}

// an hour's row: its key, then the counters an upsert adds to; the values go in in this order
const u = names(usageHourly)
const HOUR_KEY = ['account', 'model', 'hour'] as const satisfies readonly ColumnKey<typeof usageHourly>[]
const COUNTERS = ['requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cost', 'unpricedRequests'] as const satisfies readonly ColumnKey<typeof usageHourly>[]
const HOUR_COLUMNS = [...HOUR_KEY, ...COUNTERS]
const UPSERT_HOUR = `INSERT INTO ${u.$table}
  (${HOUR_COLUMNS.map((c) => u[c]).join(', ')})
  VALUES (${HOUR_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (${u.account}, ${u.hour}, ${u.model}) DO UPDATE SET
    ${COUNTERS.map((c) => `${u[c]} = ${u.$table}.${u[c]} + excluded.${u[c]}`).join(',\n    ')}`

/** A whole record, each column under its TypeScript name. */
export const COLUMNS = selectList(generations)

const BY_ID = `SELECT ${COLUMNS} FROM ${g.$table} WHERE ${g.id} = ?`
// a reply id an upstream reused: the latest request's record (index generations_reply); among
// records of one ms, the last stored (SQLite's rowid; the gateway's time-ordered id elsewhere)
const LATEST = { sqlite: `${g.createdAt} DESC, ${DIALECT.sqlite.rowid} DESC`, pg: `${g.createdAt} DESC, ${g.id} DESC` }
const BY_REPLY = (order: string) => `SELECT ${COLUMNS} FROM ${g.$table} WHERE ${g.replyId} = ? ORDER BY ${order} LIMIT 1`
const BY_REPLY_OF_KEY = (order: string) => `SELECT ${COLUMNS} FROM ${g.$table} WHERE ${g.replyId} = ? AND ${g.apiKeyId} = ? ORDER BY ${order} LIMIT 1`

export type Raw = Omit<GenerationRow, 'stream' | 'unpriced'> & { stream: number | boolean; unpriced: number | boolean }

export class GenerationStore {
  private readonly byReply: string
  private readonly byReplyOfKey: string
  private readonly prune: string

  constructor(private storage: Storage) {
    const d = storage.sql.dialect
    this.byReply = BY_REPLY(LATEST[d])
    this.byReplyOfKey = BY_REPLY_OF_KEY(LATEST[d])
    const rowid = DIALECT[d].rowid
    this.prune = `DELETE FROM ${g.$table} WHERE ${rowid} IN (SELECT ${rowid} FROM ${g.$table} WHERE ${g.createdAt} < ? LIMIT ?)`
  }

  /**
   * Insert rows and roll up only those actually inserted, so a row can never be counted
   * without being stored. Returns the inserted rows. Pass the transaction (`q`) for batches.
   */
  async insertRows(rows: GenerationRow[], q: Sql = this.storage.sql): Promise<GenerationRow[]> {
    const inserted: GenerationRow[] = []
    for (const part of rowParts(rows)) {
      const params: Param[] = []
      for (const r of part) for (const k of INSERT_COLUMNS.keys) params.push(r[k])
      const ids = new Set((await q.all<{ id: string }>(INSERT(part.length), params)).map((r) => r.id))
      for (const r of part) if (ids.has(r.id)) inserted.push(r)
    }
    // one rollup upsert per (account, model, hour) of the batch, not one per row: under load a
    // batch is dozens of records of a few models
    const sums = new Map<string, RollupDelta>()
    for (const r of inserted) {
      const d = toRollup(r)
      const k = `${d.account}\u0000${d.hour}\u0000${d.model}`
      const sum = sums.get(k)
      if (sum === undefined) sums.set(k, d)
      else addRollup(sum, d)
    }
    for (const d of sums.values()) {
      await q.run(UPSERT_HOUR, HOUR_COLUMNS.map((c) => d[c]))
    }
    return inserted
  }

  /**
   * A record by the gateway's id, else by the id the client saw (the latest of several).
   * With `keyId`, only that key's records count, so another key's reuse of the same reply id
   * neither hides nor reveals anything.
   */
  async get(id: string, keyId?: string): Promise<GenerationRow | undefined> {
    const sql = this.storage.sql
    let r = await sql.get<Raw>(BY_ID, [id])
    if (r && keyId !== undefined && r.apiKeyId !== keyId) r = null
    r ??= keyId === undefined ? await sql.get<Raw>(this.byReply, [id]) : await sql.get<Raw>(this.byReplyOfKey, [id, keyId])
    // SQLite keeps booleans as 0/1
    return r ? { ...r, stream: !!r.stream, unpriced: !!r.unpriced } : undefined
  }

  /** Delete up to `limit` records created before `before` (epoch ms); the rollup stays. Returns how many went. */
  pruneSome(before: number, limit: number): Promise<number> {
    return this.storage.sql.run(this.prune, [before, limit])
  }
}
