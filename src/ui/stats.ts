// The providers view's figures: per provider (an upstream family or the mock), the requests
// of the last hour, how many failed, and the median latency. Read from the generation records,
// within one key's records for a key (index generations_key) or all of them for the admin
// (index generations_created).
import type { Database } from 'bun:sqlite'

export interface ProviderStats {
  provider: string
  requests: number
  errors: number
  error_rate: number
  p50_latency_ms: number | null
}

export function providerStats(sqlite: Database, since: number, keyId?: string): ProviderStats[] {
  const scope = keyId === undefined ? '' : 'api_key_id = $key AND'
  const base = keyId === undefined ? { since } : { since, key: keyId }
  const groups = sqlite
    .query(`SELECT provider, count(*) AS requests, sum(error IS NOT NULL) AS errors, count(latency_ms) AS timed
      FROM generations WHERE ${scope} created_at >= $since GROUP BY provider ORDER BY provider`)
    .all(base as never) as { provider: string; requests: number; errors: number; timed: number }[]
  const median = sqlite.query(`SELECT latency_ms AS ms FROM generations WHERE ${scope} created_at >= $since AND provider = $provider
    AND latency_ms IS NOT NULL ORDER BY latency_ms LIMIT 1 OFFSET $offset`)
  return groups.map((g) => {
    // the lower median: a latency some request really had
    const m = g.timed > 0 ? (median.get({ ...base, provider: g.provider, offset: Math.floor((g.timed - 1) / 2) } as never) as { ms: number } | null) : null
    return { provider: g.provider, requests: g.requests, errors: g.errors, error_rate: g.requests ? g.errors / g.requests : 0, p50_latency_ms: m?.ms ?? null }
  })
}
