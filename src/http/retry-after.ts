// The wait a refusal names when the gateway chose it itself (its own rate limit, or an upstream
// 429 that named none). `Retry-After` says it in whole seconds, as every client reads it; the
// official SDKs read `retry-after-ms` first and sleep exactly what it says, so it carries the
// same wait plus a share of it that differs from answer to answer (at most half of it, at most a
// second): clients refused in the same instant would otherwise all come back in the same instant.

/** The headers of a wait of `ms` (at least a second in `Retry-After`). */
export function retryHeaders(ms: number, random: () => number = Math.random): { 'retry-after': string; 'retry-after-ms': string } {
  const spread = Math.min(ms / 2, 1_000) * random()
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))), 'retry-after-ms': String(Math.round(Math.max(ms, 0) + spread)) }
}
