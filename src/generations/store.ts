// The generations table and its hourly rollup, written together. Plain SQL through the
// store's seam (statements prepared once on SQLite): this is the write path of every request
// and the seeding path of the benchmark.
import type { Storage } from '../db/client.ts'
import { insertList, selectList } from '../db/columns.ts'
import { generations } from '../db/schema.ts'
import { DIALECT, rowParts, type Param, type Sql } from '../db/sql.ts'
import { addRollup, toRollup, type GenerationRow, type RollupDelta } from './row.ts'

// ON CONFLICT DO NOTHING only guards a batch against one impossible row (ids are the gateway's
// own, fresh per record); an ignored row is reported by the caller, never dropped silently.
// Many rows per statement, and RETURNING says which went in: one round trip per 100 records.
const INSERT_COLUMNS = insertList(generations)
const PER_ROW = `(${Array(INSERT_COLUMNS.keys.length).fill('?').join(', ')})`
const inserts = new Map<number, string>()
const INSERT = (n: number) => {
  let q = inserts.get(n)
  if (!q) inserts.set(n, (q = `INSERT INTO generations (${INSERT_COLUMNS.sql}) VALUES ${Array(n).fill(PER_ROW).join(', ')} ON CONFLICT DO NOTHING RETURNING id`))
  return q
}

const UPSERT_HOUR = `INSERT INTO usage_hourly
  (account, model, hour, requests, input_tokens, output_tokens, total_tokens, cost, unpriced_requests)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account, hour, model) DO UPDATE SET
    requests = usage_hourly.requests + excluded.requests,
    input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
    output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
    total_tokens = usage_hourly.total_tokens + excluded.total_tokens,
    cost = usage_hourly.cost + excluded.cost,
    unpriced_requests = usage_hourly.unpriced_requests + excluded.unpriced_requests`

/** A whole record, each column under its TypeScript name. */
export const COLUMNS = selectList(generations)

const BY_ID = `SELECT ${COLUMNS} FROM generations WHERE id = ?`
// a reply id an upstream reused: the latest request's record (index generations_reply); among
// records of one ms, the last stored (SQLite's rowid; the gateway's time-ordered id elsewhere)
const LATEST = { sqlite: 'created_at DESC, rowid DESC', pg: 'created_at DESC, id DESC' }
const BY_REPLY = (order: string) => `SELECT ${COLUMNS} FROM generations WHERE reply_id = ? ORDER BY ${order} LIMIT 1`
const BY_REPLY_OF_KEY = (order: string) => `SELECT ${COLUMNS} FROM generations WHERE reply_id = ? AND api_key_id = ? ORDER BY ${order} LIMIT 1`

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
    this.prune = `DELETE FROM generations WHERE ${rowid} IN (SELECT ${rowid} FROM generations WHERE created_at < ? LIMIT ?)`
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
      await q.run(UPSERT_HOUR, [d.account, d.model, d.hour, d.requests, d.inputTokens, d.outputTokens, d.totalTokens, d.cost, d.unpricedRequests])
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
