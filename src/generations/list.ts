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

const CLAUSES: [keyof ListFilter, string][] = [
  ['keyId', 'api_key_id = $keyId'],
  ['account', 'account = $account'],
  ['model', 'model = $model'],
  ['endpoint', 'endpoint = $endpoint'],
]

export class GenerationList {
  private stmts = new Map<string, Statement>()

  constructor(private sqlite: Database) {}

  /** The cursor of a record the caller may see (its gateway id), or undefined. */
  cursor(id: string, keyId?: string): { createdAt: number; rowid: number } | undefined {
    const r = this.sqlite.query('SELECT created_at AS createdAt, rowid, api_key_id AS keyId FROM generations WHERE id = ?').get(id) as
      | { createdAt: number; rowid: number; keyId: string }
      | null
    if (!r || (keyId !== undefined && r.keyId !== keyId)) return undefined
    return { createdAt: r.createdAt, rowid: r.rowid }
  }

  /** Up to `limit` records and whether more follow. */
  page(f: ListFilter): { rows: GenerationRow[]; hasMore: boolean } {
    const where: string[] = []
    const params: Record<string, string | number> = { limit: f.limit + 1 }
    for (const [field, clause] of CLAUSES) {
      const v = f[field]
      if (v === undefined) continue
      where.push(clause)
      params[field] = v as string
    }
    if (f.status) where.push(f.status === 'ok' ? 'error IS NULL' : 'error IS NOT NULL')
    if (f.after) {
      where.push('(created_at, rowid) < ($at, $rowid)')
      params.at = f.after.createdAt
      params.rowid = f.after.rowid
    }
    const sql = `SELECT ${COLUMNS} FROM generations ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, rowid DESC LIMIT $limit`
    let stmt = this.stmts.get(sql)
    if (!stmt) this.stmts.set(sql, (stmt = this.sqlite.prepare(sql)))
    const raw = stmt.all(params as never) as Raw[]
    const rows = raw.slice(0, f.limit).map((r) => ({ ...r, stream: r.stream === 1, unpriced: r.unpriced === 1 }))
    return { rows, hasMore: raw.length > f.limit }
  }
}
