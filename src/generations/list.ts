// The paged listing of generation records, newest first (the dashboard's generations view):
// `GET /api/v1/generations` without `id`. Scoped to one key, or to none for the admin. The
// order (created_at, rowid) is the order of the indexes generations_key and generations_created,
// so a page reads its rows straight off an index, never sorting the table. On PostgreSQL the
// tie-breaker is the gateway's time-ordered id instead of SQLite's rowid (store.ts does the same).
import { names, selectList } from '../db/columns.ts'
import { generations } from '../db/schema.ts'
import { DIALECT, type Param, type Sql } from '../db/sql.ts'
import { COLUMNS, type Raw } from './store.ts'
import type { GenerationRow } from './row.ts'
import type { Endpoint } from './types.ts'

export const ENDPOINTS: readonly Endpoint[] = ['openai.chat.completions', 'openai.responses', 'anthropic.messages']
export const STATUSES = ['ok', 'error'] as const

export interface ListFilter {
  /** Only this key's records (always set for an API key's listing). */
  keyId?: string
  account?: string
  model?: string
  endpoint?: Endpoint
  /** `ok`: no error; `error`: the request failed. */
  status?: (typeof STATUSES)[number]
  /** A cursor: records strictly older than this one. */
  after?: { createdAt: number; tie: number | string }
  limit: number
}

const g = names(generations)

/** Clauses an index serves (generations_key, generations_account_created): the scope. */
const SCOPE: [keyof ListFilter, string][] = [
  ['keyId', `${g.apiKeyId} = ?`],
  ['account', `${g.account} = ?`],
]
/** Clauses checked row by row: no index has them. */
const FILTERS: [keyof ListFilter, string][] = [
  ['model', `${g.model} = ?`],
  ['endpoint', `${g.endpoint} = ?`],
]

/**
 * Rows of the scope one filtered page may read. A rare filter would otherwise read the whole
 * table (a second for a million records) on the thread that serves every request; with the
 * budget a page stops there and says where to go on from (`partial`).
 */
export const SCAN_BUDGET = 50_000

export interface Page {
  rows: GenerationRow[]
  hasMore: boolean
  /** The gateway id to pass as `after` for the next page. */
  next: string | null
  /** The page stopped at the scan budget, not at `limit` matches: the next one goes on from `next`. */
  partial: boolean
}

type Bound = { id: string; at: number; tie: number | string }

/** The column that orders records of one ms: SQLite's rowid, PostgreSQL's time-ordered gateway id. */
const TIE = { sqlite: DIALECT.sqlite.rowid, pg: g.id }

export class GenerationList {
  private readonly tie: string

  constructor(private sql: Sql, private scanBudget = SCAN_BUDGET) {
    this.tie = TIE[sql.dialect]
  }

  /** The cursor of a record the caller may see (its gateway id), or undefined. */
  async cursor(id: string, keyId?: string): Promise<{ createdAt: number; tie: number | string } | undefined> {
    const r = await this.sql.get<{ createdAt: number; tie: number | string; keyId: string }>(
      `SELECT ${selectList(generations, ['createdAt'])}, ${this.tie} AS tie, ${g.apiKeyId} AS "keyId" FROM ${g.$table} WHERE ${g.id} = ?`,
      [id],
    )
    if (!r || (keyId !== undefined && r.keyId !== keyId)) return undefined
    return { createdAt: Number(r.createdAt), tie: r.tie }
  }

  /** Up to `limit` matching records, newest first. */
  async page(f: ListFilter): Promise<Page> {
    const tie = this.tie
    const scope: string[] = []
    const scopeParams: Param[] = []
    const filters: string[] = []
    const filterParams: Param[] = []
    for (const [list, params, clauses] of [[scope, scopeParams, SCOPE], [filters, filterParams, FILTERS]] as const) {
      for (const [field, clause] of clauses) {
        const v = f[field]
        if (v === undefined) continue
        list.push(clause)
        params.push(v as string)
      }
    }
    if (f.status) filters.push(f.status === 'ok' ? `${g.error} IS NULL` : `${g.error} IS NOT NULL`)
    if (f.after) {
      scope.push(`(${g.createdAt}, ${tie}) < (?, ?)`)
      scopeParams.push(f.after.createdAt, f.after.tie)
    }
    const order = `ORDER BY ${g.createdAt} DESC, ${tie} DESC`
    const where = (extra: string[]) => (extra.length ? 'WHERE ' + extra.join(' AND ') : '')
    // with filters: where the budget ends, the `scanBudget`-th row of the scope (a walk of its
    // index, which holds created_at and rowid: no row is read), and the page stops there
    let bound: Bound | null = null
    if (filters.length > 0) {
      bound = await this.sql.get<Bound>(`SELECT ${selectList(generations, ['id'])}, ${g.createdAt} AS at, ${tie} AS tie FROM ${g.$table} ${where(scope)} ${order} LIMIT 1 OFFSET ${this.scanBudget - 1}`, scopeParams)
      if (bound) {
        filters.push(`(${g.createdAt}, ${tie}) >= (?, ?)`)
        filterParams.push(Number(bound.at), bound.tie)
      }
    }
    const raw = await this.sql.all<Raw>(`SELECT ${COLUMNS} FROM ${g.$table} ${where([...scope, ...filters])} ${order} LIMIT ?`, [...scopeParams, ...filterParams, f.limit + 1])
    const rows = raw.slice(0, f.limit).map((r) => ({ ...r, createdAt: Number(r.createdAt), stream: r.stream === 1 || r.stream === true, unpriced: r.unpriced === 1 || r.unpriced === true }))
    if (raw.length > f.limit) return { rows, hasMore: true, next: rows.at(-1)!.id, partial: false }
    // fewer matches than asked within the budget, and the scope goes on past it
    if (bound) return { rows, hasMore: true, next: bound.id, partial: true }
    return { rows, hasMore: false, next: rows.at(-1)?.id ?? null, partial: false }
  }
}
