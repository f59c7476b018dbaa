// Usage rows for one account over a window. Whole hours come from the hourly rollup (a few
// hundred rows for a month); the partial hours at the edges of an arbitrary from/to come from
// the generation records themselves (index generations_account_created), so edges are exact.
import type { Sql } from '../db/sql.ts'
import { BUCKET_MS, type ReportWindow, type UsageRow } from './report.ts'

const HOUR = BUCKET_MS.hour

// sums cast back to int8: PostgreSQL sums int8 into numeric, which its driver gives as text
const int = (e: string) => `CAST(${e} AS BIGINT)`

const SUMS = `${int('sum(requests)')} AS requests, ${int('sum(input_tokens)')} AS "inputTokens", ${int('sum(output_tokens)')} AS "outputTokens",
  ${int('sum(total_tokens)')} AS "totalTokens", coalesce(sum(cost), 0) AS cost, ${int('sum(unpriced_requests)')} AS "unpricedRequests"`

// grouped by report bucket in SQL, so a 30-day daily report returns ~30 × models rows.
// Parameters: size, size[, account], from, to[, model]
const ROLLUP = (withModel: boolean, withAccount: boolean) => `SELECT (hour / ?) * ? AS at, model, ${SUMS}
  FROM usage_hourly WHERE ${withAccount ? 'account = ? AND' : ''} hour >= ? AND hour < ? ${withModel ? 'AND model = ?' : ''}
  GROUP BY 1, model`

// Parameters: from[, account], from, to[, model]
const EXACT = (withModel: boolean, withAccount: boolean) => `SELECT CAST(? AS BIGINT) AS at, model, count(*) AS requests, ${int('sum(prompt_tokens)')} AS "inputTokens",
  ${int('sum(completion_tokens)')} AS "outputTokens", ${int('sum(total_tokens)')} AS "totalTokens", coalesce(sum(cost), 0) AS cost,
  ${int('sum(CASE WHEN unpriced THEN 1 ELSE 0 END)')} AS "unpricedRequests"
  FROM generations WHERE ${withAccount ? 'account = ? AND' : ''} created_at >= ? AND created_at < ? ${withModel ? 'AND model = ?' : ''}
  GROUP BY model`

interface Segment {
  from: number
  to: number
  exact: boolean
}

/**
 * Cut [from, to) into a partial head hour, whole hours and a partial tail hour. A partial hour
 * older than `exactSince` (records there may be pruned) is read whole from the rollup instead.
 */
export function segments(from: number, to: number, exactSince: number): Segment[] {
  const ceil = Math.ceil(from / HOUR) * HOUR
  const floor = Math.floor(to / HOUR) * HOUR
  const out: Segment[] = []
  const edge = (a: number, b: number) => {
    if (a >= exactSince) out.push({ from: a, to: b, exact: true })
    else {
      const h = Math.floor(a / HOUR) * HOUR
      out.push({ from: h, to: h + HOUR, exact: false })
    }
  }
  if (from < ceil) edge(from, Math.min(ceil, to))
  if (ceil < floor) out.push({ from: ceil, to: floor, exact: false })
  if (floor < to && floor >= ceil) edge(floor, to)
  return out
}

export class UsageQuery {
  constructor(private sql: Sql) {}

  /** `account` undefined: every account (the admin's view). */
  async rows(account: string | undefined, w: ReportWindow, exactSince: number): Promise<UsageRow[]> {
    const withModel = w.model !== undefined
    const withAccount = account !== undefined
    const out: UsageRow[] = []
    for (const seg of segments(w.from, w.to, exactSince)) {
      const tail = withModel ? [w.model!] : []
      const acc = withAccount ? [account] : []
      const size = BUCKET_MS[w.granularity]
      const rows = seg.exact
        ? await this.sql.all<UsageRow>(EXACT(withModel, withAccount), [seg.from, ...acc, seg.from, seg.to, ...tail])
        : await this.sql.all<UsageRow>(ROLLUP(withModel, withAccount), [size, size, ...acc, seg.from, seg.to, ...tail])
      for (const r of rows) out.push(r)
    }
    return out
  }
}
