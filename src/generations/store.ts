// The generations table and its hourly rollup, written together. Plain SQL through the
// store's seam (statements prepared once on SQLite): this is the write path of every request
// and the seeding path of the benchmark.
import type { Storage } from '../db/client.ts'
import { insertList, jsonRows, names, selectList, type ColumnKey } from '../db/columns.ts'
import { generations as pgGenerations, usageHourly as pgUsageHourly } from '../db/pg-schema.ts'
import { generations, pruneMarks, usageHourly } from '../db/schema.ts'
import { DIALECT, rowParts, type Param, type Piece, type Sql } from '../db/sql.ts'
import { addRollup, ROLLUP_COUNTERS, toRollup, type GenerationRow, type RollupDelta } from './row.ts'

// The conflict clause only guards a batch against one impossible row (ids are the gateway's
// own, fresh per record); an ignored row is reported by the caller, never dropped silently.
// Many rows per statement, and RETURNING says which went in: one round trip per 100 records.
// On SQLite the clause skips a row that breaks any constraint (DIALECT, db/sql.ts): one skipped
// beside no stored row of its id is caught below.
const g = names(generations)
const INSERT_COLUMNS = insertList(generations)
const PER_ROW = `(${Array(INSERT_COLUMNS.keys.length).fill('?').join(', ')})`
const inserts = { sqlite: new Map<number, string>(), pg: new Map<number, string>() }
const INSERT = (n: number, d: Sql['dialect']) => {
  let q = inserts[d].get(n)
  if (!q) {
    const { insertSkipping, skipConflicts } = DIALECT[d]
    q = `${insertSkipping} ${g.$table} (${INSERT_COLUMNS.sql}) VALUES ${Array(n).fill(PER_ROW).join(', ')} ${skipConflicts} RETURNING ${selectList(generations, ['id'])}`
    inserts[d].set(n, q)
  }
  return q
}
const STORED = `SELECT 1 AS one FROM ${g.$table} WHERE ${g.id} = ?`

// an hour's row: its key, then the counters an upsert adds to; the values go in in this order
const u = names(usageHourly)
const HOUR_KEY = ['account', 'model', 'hour'] as const satisfies readonly ColumnKey<typeof usageHourly>[]
const COUNTERS = ROLLUP_COUNTERS satisfies readonly ColumnKey<typeof usageHourly>[]
const HOUR_COLUMNS = [...HOUR_KEY, ...COUNTERS]
const ADD_TO_HOUR = `ON CONFLICT (${u.account}, ${u.hour}, ${u.model}) DO UPDATE SET
    ${COUNTERS.map((c) => `${u[c]} = ${u.$table}.${u[c]} + excluded.${u[c]}`).join(',\n    ')}`
const UPSERT_HOUR = `INSERT INTO ${u.$table}
  (${HOUR_COLUMNS.map((c) => u[c]).join(', ')})
  VALUES (${HOUR_COLUMNS.map(() => '?').join(', ')})
  ${ADD_TO_HOUR}`

// PostgreSQL: the records and their rollup in one statement, with whatever else the write
// carries (`pieces`: the keys' spend, the ledger's reservations) as CTEs of the same statement.
// In a transaction (`insertRows`) BEGIN is answered before the statements go and COMMIT after
// them: three round trips at best (Bun.SQL pipelines statements issued together only once each
// is prepared on its connection; until then, two round trips each). One statement is atomic
// on its own, with no BEGIN or COMMIT: one round trip. The rows go as one JSON parameter, not
// 31 parameters a row.
// The rollup and spend are of every row, so a row the insert skips (an id stored already) fails
// the whole statement (`whole` divides by zero; its result is read, or PostgreSQL would never
// compute it) and nothing of it stays.
const jsonOf = (keys: readonly string[]) => keys.map((k) => `v."${k}"`).join(', ')
const INSERT_JSON = `INSERT INTO ${g.$table} (${INSERT_COLUMNS.sql}) SELECT ${jsonOf(INSERT_COLUMNS.keys)} FROM ${jsonRows(pgGenerations, INSERT_COLUMNS.keys)} ON CONFLICT DO NOTHING RETURNING ${g.id}`
const HOURS_JSON = `INSERT INTO ${u.$table} (${HOUR_COLUMNS.map((c) => u[c]).join(', ')}) SELECT ${jsonOf(HOUR_COLUMNS)} FROM ${jsonRows(pgUsageHourly, HOUR_COLUMNS)} ${ADD_TO_HOUR}`
const WHOLE = (pieces: readonly Piece[]) =>
  `WITH ins AS (${INSERT_JSON}),
  whole AS (SELECT 1 / (count(*) = ?)::int AS ok FROM ins),
  hours AS (${HOURS_JSON})${pieces.map((p, i) => `,\n  p${i} AS (${p.text})`).join('')}
  SELECT ins.${g.id} AS id FROM ins, whole WHERE whole.ok = 1`

/** The error of a batch that `insertWhole` could not store whole (division by zero). */
export const isNotWhole = (e: unknown) => (e as { errno?: unknown })?.errno === '22012'

const DROP_EMPTY_HOUR = `DELETE FROM ${u.$table} WHERE ${HOUR_KEY.map((c) => `${u[c]} = ?`).join(' AND ')} AND ${u.requests} <= 0`

/** One rollup delta per (account, hour, model) of the rows: under load a batch is dozens of records of a few models. */
function rollupsOf(rows: GenerationRow[]): RollupDelta[] {
  const sums = new Map<string, RollupDelta>()
  for (const r of rows) {
    const d = toRollup(r)
    const k = `${d.account}\u0000${d.hour}\u0000${d.model}`
    const sum = sums.get(k)
    if (sum === undefined) sums.set(k, d)
    else addRollup(sum, d)
  }
  return [...sums.values()]
}

// how far pruning of the records has reached: raised before a prune deletes, never lowered
const pm = names(pruneMarks)
const MARK_PRUNED = `INSERT INTO ${pm.$table} (${pm.what}, ${pm.prunedBefore}) VALUES (?, ?)
  ON CONFLICT (${pm.what}) DO UPDATE SET ${pm.prunedBefore} = excluded.${pm.prunedBefore} WHERE ${pm.$table}.${pm.prunedBefore} < excluded.${pm.prunedBefore}`
const PRUNED = `SELECT ${pm.prunedBefore} AS before FROM ${pm.$table} WHERE ${pm.what} = ?`

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
   * Insert rows and add them to the hourly rollup; returns the rows actually inserted, and only
   * those stay counted. Every statement is issued before any answer is awaited (PostgreSQL
   * pipelines them once prepared; the recorder's writes there go as one statement instead,
   * `insertWhole`), so the rollup first counts every row; one the insert skipped (its id was
   * stored already) is then taken back out. Pass the transaction (`q`): the two steps must
   * commit together.
   */
  async insertRows(rows: GenerationRow[], q: Sql): Promise<GenerationRow[]> {
    const parts = [...rowParts(rows)].map((part) => {
      const params: Param[] = []
      for (const r of part) for (const k of INSERT_COLUMNS.keys) params.push(r[k])
      return q.all<{ id: string }>(INSERT(part.length, q.dialect), params)
    })
    const counted = rollupsOf(rows).map((d) => q.run(UPSERT_HOUR, HOUR_COLUMNS.map((c) => d[c])))
    const [returned] = await Promise.all([Promise.all(parts), Promise.all(counted)])
    const ids = new Set(returned.flat().map((r) => r.id))
    if (ids.size === rows.length) return rows
    // each id once: a second row with the same id was not the one stored
    const inserted: GenerationRow[] = []
    const skipped: GenerationRow[] = []
    for (const r of rows) (ids.delete(r.id) ? inserted : skipped).push(r)
    // a row skipped with no row of its id stored broke a constraint: the write fails, as it would have
    for (const r of skipped) if (!(await q.get(STORED, [r.id]))) throw new Error(`generation record ${r.id} was refused by a constraint of ${g.$table}`)
    for (const d of rollupsOf(skipped)) {
      await q.run(UPSERT_HOUR, [...HOUR_KEY.map((c) => d[c]), ...COUNTERS.map((c) => -d[c])])
      await q.run(DROP_EMPTY_HOUR, HOUR_KEY.map((c) => d[c]))
    }
    return inserted
  }

  /**
   * PostgreSQL: the rows, their rollup and `pieces` in one statement, stored all together or
   * not at all. A row whose id is stored already fails it (`isNotWhole`): `insertRows` in a
   * transaction sorts such a batch out.
   */
  async insertWhole(rows: GenerationRow[], pieces: readonly Piece[], sql: Sql): Promise<void> {
    const params: Param[] = [JSON.stringify(rows), rows.length, JSON.stringify(rollupsOf(rows))]
    for (const p of pieces) params.push(...p.params)
    await sql.all(WHOLE(pieces), params)
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

  /** Says, before any is deleted, that records created before `before` may be (`prunedBefore`). */
  async markPruned(before: number): Promise<void> {
    await this.storage.sql.run(MARK_PRUNED, [g.$table, before])
  }

  /** Records created before this (epoch ms) may have been pruned; none at or after it was. Undefined: no prune said. */
  async prunedBefore(): Promise<number | undefined> {
    const r = await this.storage.sql.get<{ before: number | string }>(PRUNED, [g.$table])
    return r ? Number(r.before) : undefined
  }

  /** Whether a record of this id is stored. */
  async has(id: string): Promise<boolean> {
    return !!(await this.storage.sql.get(STORED, [id]))
  }

  /** Delete up to `limit` records created before `before` (epoch ms); the rollup stays. Returns how many went. */
  pruneSome(before: number, limit: number): Promise<number> {
    return this.storage.sql.run(this.prune, [before, limit])
  }
}
