// The providers view's figures: per provider (an upstream family or the mock), the requests
// of the last hour, how many failed, and the median latency. Read from the generation records,
// within one key's records for a key (index generations_key) or all of them for the admin
// (index generations_created).
import { names, selectList } from '../db/columns.ts'
import { generations } from '../db/schema.ts'
import type { Param, Sql } from '../db/sql.ts'

const g = names(generations)

export interface ProviderStats {
  provider: string
  requests: number
  errors: number
  error_rate: number
  p50_latency_ms: number | null
}

export async function providerStats(sql: Sql, since: number, keyId?: string): Promise<ProviderStats[]> {
  const scope = keyId === undefined ? '' : `${g.apiKeyId} = ? AND`
  const base: Param[] = keyId === undefined ? [since] : [keyId, since]
  // counts cast to int8: PostgreSQL gives count(*) as int8 (a string in its driver) and sums as numeric
  const groups = await sql.all<{ provider: string; requests: number | string; errors: number | string; timed: number | string }>(
    `SELECT ${selectList(generations, ['provider'])}, count(*) AS requests, CAST(sum(CASE WHEN ${g.error} IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS errors, count(${g.latencyMs}) AS timed
      FROM ${g.$table} WHERE ${scope} ${g.createdAt} >= ? GROUP BY ${g.provider} ORDER BY ${g.provider}`,
    base,
  )
  const median = `SELECT ${g.latencyMs} AS ms FROM ${g.$table} WHERE ${scope} ${g.createdAt} >= ? AND ${g.provider} = ?
    AND ${g.latencyMs} IS NOT NULL ORDER BY ${g.latencyMs} LIMIT 1 OFFSET ?`
  const out: ProviderStats[] = []
  for (const g of groups) {
    const requests = Number(g.requests)
    const errors = Number(g.errors)
    const timed = Number(g.timed)
    // the lower median: a latency some request really had
    const m = timed > 0 ? await sql.get<{ ms: number }>(median, [...base, g.provider, Math.floor((timed - 1) / 2)]) : null
    out.push({ provider: g.provider, requests, errors, error_rate: requests ? errors / requests : 0, p50_latency_ms: m ? Number(m.ms) : null })
  }
  return out
}
