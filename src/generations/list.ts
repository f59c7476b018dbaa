// The paged listing of generation records, newest first (the dashboard's generations view):
// `GET /api/v1/generations` without `id`. Scoped to one key, or to none for the admin. The
// order (created_at, rowid) is the order of the indexes generations_key and generations_created,
// so a page reads its rows straight off an index, never sorting the table.
import type { Database, Statement } from 'bun:sqlite'
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
  after?: { createdAt: number; rowid: number }
  limit: number
}

/** Clauses an index serves (generations_key, generations_account_created): the scope. */
const SCOPE: [keyof ListFilter, string][] = [
  ['keyId', 'api_key_id = $keyId'],
  ['account', 'account = $account'],
]
/** Clauses checked row by row: no index has them. */
const FILTERS: [keyof ListFilter, string][] = [
  ['model', 'model = $model'],
  ['endpoint', 'endpoint = $endpoint'],
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

type Bound = { id: string; at: number; rowid: number }

export class GenerationList {
  private stmts = new Map<string, Statement>()

  constructor(private sqlite: Database, private scanBudget = SCAN_BUDGET) {}

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql)
    if (!s) this.stmts.set(sql, (s = this.sqlite.prepare(sql)))
    return s
  }

  /** The cursor of a record the caller may see (its gateway id), or undefined. */
  cursor(id: string, keyId?: string): { createdAt: number; rowid: number } | undefined {
    const r = this.stmt('SELECT created_at AS createdAt, rowid, api_key_id AS keyId FROM generations WHERE id = ?').get(id) as
      | { createdAt: number; rowid: number; keyId: string }
      | null
    if (!r || (keyId !== undefined && r.keyId !== keyId)) return undefined
    return { createdAt: r.createdAt, rowid: r.rowid }
  }

  /** Up to `limit` matching records, newest first. */
  page(f: ListFilter): Page {
    const scope: string[] = []
    const filters: string[] = []
    const params: Record<string, string | number> = { limit: f.limit + 1 }
    for (const [list, clauses] of [[scope, SCOPE], [filters, FILTERS]] as const) {
      for (const [field, clause] of clauses) {
        const v = f[field]
        if (v === undefined) continue
        list.push(clause)
        params[field] = v as string
      }
    }
    if (f.status) filters.push(f.status === 'ok' ? 'error IS NULL' : 'error IS NOT NULL')
    if (f.after) {
      scope.push('(created_at, rowid) < ($at, $rowid)')
      params.at = f.after.createdAt
      params.rowid = f.after.rowid
    }
    const order = 'ORDER BY created_at DESC, rowid DESC'
    const where = (extra: string[]) => (extra.length ? 'WHERE ' + extra.join(' AND ') : '')
    // with filters: where the budget ends, the `scanBudget`-th row of the scope (a walk of its
    // index, which holds created_at and rowid: no row is read), and the page stops there
    let bound: Bound | null = null
    if (filters.length > 0) {
      const { limit: _, ...scopeParams } = params
      bound = this.stmt(`SELECT id, created_at AS at, rowid FROM generations ${where(scope)} ${order} LIMIT 1 OFFSET ${this.scanBudget - 1}`).get(scopeParams as never) as Bound | null
      if (bound) {
        filters.push('(created_at, rowid) >= ($boundAt, $boundRowid)')
        params.boundAt = bound.at
        params.boundRowid = bound.rowid
      }
    }
    const raw = this.stmt(`SELECT ${COLUMNS} FROM generations ${where([...scope, ...filters])} ${order} LIMIT $limit`).all(params as never) as Raw[]
    const rows = raw.slice(0, f.limit).map((r) => ({ ...r, stream: r.stream === 1, unpriced: r.unpriced === 1 }))
    if (raw.length > f.limit) return { rows, hasMore: true, next: rows.at(-1)!.id, partial: false }
    // fewer matches than asked within the budget, and the scope goes on past it
    if (bound) return { rows, hasMore: true, next: bound.id, partial: true }
    return { rows, hasMore: false, next: rows.at(-1)?.id ?? null, partial: false }
  }
}
