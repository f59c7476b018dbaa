// Usage rows for one account over a window. Whole hours come from the hourly rollup (a few
// hundred rows for a month); the partial hours at the edges of an arbitrary from/to come from
// the generation records themselves (index generations_account_created), so edges are exact.
import { names, selectList } from '../db/columns.ts'
import { generations, usageHourly } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import { EXTRAS_SUMS, type ExtrasSum } from '../generations/extras.ts'
import { BUCKET_MS, type ReportWindow, type UsageRow } from './report.ts'

const HOUR = BUCKET_MS.hour

// sums cast back to int8: PostgreSQL sums int8 into numeric, which its driver gives as text
const int = (e: string) => `CAST(${e} AS BIGINT)`

const u = names(usageHourly)
const g = names(generations)

// each sum of a report row: from the rollup's column, and from the records' own. Every one is
// a column the row is read for anyway (the rollup's, or the record's fetched for its model),
// so more of them cost no more reads.
const SUMS: [alias: keyof UsageRow, rollup: string, records: string][] = [
  ['requests', `sum(${u.requests})`, 'count(*)'],
  ['inputTokens', `sum(${u.inputTokens})`, `sum(${g.promptTokens})`],
  ['outputTokens', `sum(${u.outputTokens})`, `sum(${g.completionTokens})`],
  ['totalTokens', `sum(${u.totalTokens})`, `sum(${g.totalTokens})`],
  ['unpricedRequests', `sum(${u.unpricedRequests})`, `sum(CASE WHEN ${g.unpriced} THEN 1 ELSE 0 END)`],
  ['cacheReadTokens', `sum(${u.cacheReadTokens})`, `sum(${g.cacheReadInputTokens})`],
  ['cacheWriteTokens', `sum(${u.cacheWriteTokens})`, `sum(${g.cacheCreationInputTokens})`],
  // null: the upstream did not say, counted as none
  ['reasoningTokens', `sum(${u.reasoningTokens})`, `coalesce(sum(${g.reasoningTokens}), 0)`],
]
const COST = { rollup: `coalesce(sum(${u.cost}), 0)`, records: `coalesce(sum(${g.cost}), 0)` }

// A count the records keep in their `usage_extras` JSON (null for most: nothing to read), at a
// path of EXTRAS_SUMS, in each dialect's words.
const EXTRA_AT: Record<Sql['dialect'], (path: readonly string[]) => string> = {
  sqlite: (path) => `json_extract(${g.usageExtras}, '$.${path.join('.')}')`,
  pg: (path) => `CAST(CAST(${g.usageExtras} AS jsonb) #>> '{${path.join(',')}}' AS BIGINT)`,
}
const extraSums = (d: Sql['dialect']): typeof SUMS =>
  (Object.entries(EXTRAS_SUMS) as [ExtrasSum, readonly (readonly string[])[]][]).map(([k, paths]) => [
    k,
    `sum(${u[k]})`,
    paths.map((p) => `coalesce(sum(${EXTRA_AT[d](p)}), 0)`).join(' + '),
  ])

const sums = (of: 'rollup' | 'records', d: Sql['dialect']) =>
  [...[...SUMS, ...extraSums(d)].map((s) => `${int(s[of === 'rollup' ? 1 : 2])} AS "${s[0]}"`), `${COST[of]} AS cost`].join(',\n  ')

// grouped by report bucket in SQL, so a 30-day daily report returns ~30 × models rows.
// Parameters: size, size[, account], from, to[, model]
const ROLLUP = (d: Sql['dialect'], withModel: boolean, withAccount: boolean) => `SELECT (${u.hour} / ?) * ? AS at, ${selectList(usageHourly, ['model'])}, ${sums('rollup', d)}
  FROM ${u.$table} WHERE ${withAccount ? `${u.account} = ? AND` : ''} ${u.hour} >= ? AND ${u.hour} < ? ${withModel ? `AND ${u.model} = ?` : ''}
  GROUP BY 1, ${u.model}`

// Parameters: from[, account], from, to[, model]
const EXACT = (d: Sql['dialect'], withModel: boolean, withAccount: boolean) => `SELECT CAST(? AS BIGINT) AS at, ${selectList(generations, ['model'])}, ${sums('records', d)}
  FROM ${g.$table} WHERE ${withAccount ? `${g.account} = ? AND` : ''} ${g.createdAt} >= ? AND ${g.createdAt} < ? ${withModel ? `AND ${g.model} = ?` : ''}
  GROUP BY ${g.model}`

interface Segment {
  from: number
  to: number
  exact: boolean
}

/**
 * Cut [from, to) into a partial head hour, whole hours and a partial tail hour. A partial hour
 * older than `exactSince` (records there may be pruned) is read whole from the rollup instead.
 * So is a tail hour ending at `until` (the report's now): no record is later, so its rollup
 * row is exact, where its records would be read one by one (an hour of a busy gateway's
 * traffic, on every report that ends now).
 */
export function segments(from: number, to: number, exactSince: number, until = Infinity): Segment[] {
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
  if (floor < to && floor >= ceil) {
    if (to >= until) out.push({ from: floor, to: floor + HOUR, exact: false })
    else edge(floor, to)
  }
  return out
}

export class UsageQuery {
  constructor(private sql: Sql) {}

  /** `account` undefined: every account (the admin's view). `until`: the report's now, when `w` ends then. */
  async rows(account: string | undefined, w: ReportWindow, exactSince: number, until?: number): Promise<UsageRow[]> {
    const withModel = w.model !== undefined
    const withAccount = account !== undefined
    const out: UsageRow[] = []
    for (const seg of segments(w.from, w.to, exactSince, until)) {
      const tail = withModel ? [w.model!] : []
      const acc = withAccount ? [account] : []
      const size = BUCKET_MS[w.granularity]
      const rows = seg.exact
        ? await this.sql.all<UsageRow>(EXACT(this.sql.dialect, withModel, withAccount), [seg.from, ...acc, seg.from, seg.to, ...tail])
        : await this.sql.all<UsageRow>(ROLLUP(this.sql.dialect, withModel, withAccount), [size, size, ...acc, seg.from, seg.to, ...tail])
      for (const r of rows) out.push(r)
    }
    return out
  }
}
