// Usage rows for one account over a window. Whole hours come from the hourly rollup (a few
// hundred rows for a month); the partial hours at the edges of an arbitrary from/to come from
// the generation records themselves (index generations_account_created), so edges are exact.
import type { Database } from 'bun:sqlite'
import { BUCKET_MS, type ReportWindow, type UsageRow } from './report.ts'

const HOUR = BUCKET_MS.hour

const SUMS = `sum(requests) AS requests, sum(input_tokens) AS inputTokens, sum(output_tokens) AS outputTokens,
  sum(total_tokens) AS totalTokens, total(cost) AS cost, sum(unpriced_requests) AS unpricedRequests`

// grouped by report bucket in SQL, so a 30-day daily report returns ~30 × models rows
const ROLLUP = (withModel: boolean, withAccount: boolean) => `SELECT (hour / $size) * $size AS at, model, ${SUMS}
  FROM usage_hourly WHERE ${withAccount ? 'account = $account AND' : ''} hour >= $from AND hour < $to ${withModel ? 'AND model = $model' : ''}
  GROUP BY at, model`

const EXACT = (withModel: boolean, withAccount: boolean) => `SELECT $from AS at, model, count(*) AS requests, sum(prompt_tokens) AS inputTokens,
  sum(completion_tokens) AS outputTokens, sum(total_tokens) AS totalTokens, total(cost) AS cost, sum(unpriced) AS unpricedRequests
  FROM generations WHERE ${withAccount ? 'account = $account AND' : ''} created_at >= $from AND created_at < $to ${withModel ? 'AND model = $model' : ''}
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
  constructor(private sqlite: Database) {}

  /** `account` undefined: every account (the admin's view). */
  rows(account: string | undefined, w: ReportWindow, exactSince: number): UsageRow[] {
    const withModel = w.model !== undefined
    const withAccount = account !== undefined
    const out: UsageRow[] = []
    for (const seg of segments(w.from, w.to, exactSince)) {
      const params: Record<string, string | number> = { from: seg.from, to: seg.to }
      if (withAccount) params.account = account
      if (withModel) params.model = w.model!
      if (!seg.exact) params.size = BUCKET_MS[w.granularity]
      const sql = seg.exact ? EXACT(withModel, withAccount) : ROLLUP(withModel, withAccount)
      for (const r of this.sqlite.query(sql).all(params as never) as UsageRow[]) out.push(r)
    }
    return out
  }
}
