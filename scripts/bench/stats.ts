// Percentiles and the baseline-vs-gateway difference. Pure functions over samples (ms).

export interface Summary {
  n: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

export function summarize(samples: ArrayLike<number>): Summary {
  const s = Float64Array.from(samples).sort()
  let sum = 0
  for (const v of s) sum += v
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.length ? s[s.length - 1]! : NaN,
    mean: s.length ? sum / s.length : NaN,
  }
}

/** Gateway minus baseline, figure by figure (a difference of percentiles, not a percentile of differences). */
export function added(gateway: Summary, baseline: Summary): Omit<Summary, 'n'> {
  return {
    p50: gateway.p50 - baseline.p50,
    p90: gateway.p90 - baseline.p90,
    p99: gateway.p99 - baseline.p99,
    max: gateway.max - baseline.max,
    mean: gateway.mean - baseline.mean,
  }
}

export const round = (v: number, digits = 3) => (Number.isFinite(v) ? Math.round(v * 10 ** digits) / 10 ** digits : null)

/** The middle item by `key` (the lower middle of an even count); undefined for none. */
export function medianBy<T>(items: T[], key: (t: T) => number): T | undefined {
  if (items.length === 0) return undefined
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor((items.length - 1) / 2)]
}
