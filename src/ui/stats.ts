// The providers view's figures: per provider (an upstream family or the mock), the requests
// of the last hour, how many failed, and the median latency. Read from the generation records,
// within one key's records for a key (index generations_key) or all of them for the admin
// (index generations_created).
import type { Param, Sql } from '../db/sql.ts'

export interface ProviderStats {
  provider: string
  requests: number
  errors: number
  error_rate: number
  p50_latency_ms: number | null
}

export async function providerStats(sql: Sql, since: number, keyId?: string): Promise<ProviderStats[]> {
  const scope = keyId === undefined ? '' : 'api_key_id = ? AND'
  const base: Param[] = keyId === undefined ? [since] : [keyId, since]
  // counts cast to int8: PostgreSQL gives count(*) as int8 (a string in its driver) and sums as numeric
  const groups = await sql.all<{ provider: string; requests: number | string; errors: number | string; timed: number | string }>(
    `SELECT provider, count(*) AS requests, CAST(sum(CASE WHEN error IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS errors, count(latency_ms) AS timed
      FROM generations WHERE ${scope} created_at >= ? GROUP BY provider ORDER BY provider`,
    base,
  )
  const median = `SELECT latency_ms AS ms FROM generations WHERE ${scope} created_at >= ? AND provider = ?
    AND latency_ms IS NOT NULL ORDER BY latency_ms LIMIT 1 OFFSET ?`
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
