// A deployment's last hour for the dashboard: requests, errors, failovers and the median
// latency, in sixty one-minute buckets that are reused as the hour rolls on. Latencies go into a
// logarithmic histogram (buckets 10 % wide), so a minute costs at most a few hundred numbers
// however busy it was, and the median is exact to within its bucket.

const MINUTE = 60_000
export const MINUTES = 60
const GROWTH = Math.log(1.1)

interface Minute {
  /** Which minute since the epoch the bucket holds now; a stale one is cleared before use. */
  at: number
  requests: number
  errors: number
  failovers: number
  /** Latency histogram: bucket index → count. */
  latency: Map<number, number>
}

export interface HourTotals {
  requests: number
  errors: number
  failovers: number
  /** Median latency of the hour's successful requests, ms; null without any. */
  p50Ms: number | null
}

export interface Outcome {
  error?: boolean
  failover?: boolean
  /** Latency of a successful request, ms. */
  ms?: number
}

const bucketOf = (ms: number) => Math.floor(Math.log(Math.max(0, ms) + 1) / GROWTH)
/** The middle of a bucket (geometric), back in ms. */
const valueOf = (bucket: number) => Math.exp((bucket + 0.5) * GROWTH) - 1

export class HourStats {
  /** Fixed length: one slot per minute of the hour, whatever the traffic. */
  readonly slots: Minute[] = Array.from({ length: MINUTES }, () => ({ at: -1, requests: 0, errors: 0, failovers: 0, latency: new Map() }))

  add(now: number, o: Outcome) {
    const at = Math.floor(now / MINUTE)
    const m = this.slots[at % MINUTES]!
    if (m.at !== at) Object.assign(m, { at, requests: 0, errors: 0, failovers: 0, latency: new Map() })
    m.requests++
    if (o.error) m.errors++
    if (o.failover) m.failovers++
    if (o.ms !== undefined && !o.error) {
      const b = bucketOf(o.ms)
      m.latency.set(b, (m.latency.get(b) ?? 0) + 1)
    }
  }

  totals(now: number): HourTotals {
    const current = Math.floor(now / MINUTE)
    const out: HourTotals = { requests: 0, errors: 0, failovers: 0, p50Ms: null }
    const latency = new Map<number, number>()
    let samples = 0
    for (const m of this.slots) {
      if (m.at <= current - MINUTES || m.at > current) continue
      out.requests += m.requests
      out.errors += m.errors
      out.failovers += m.failovers
      for (const [b, n] of m.latency) {
        latency.set(b, (latency.get(b) ?? 0) + n)
        samples += n
      }
    }
    if (samples === 0) return out
    let seen = 0
    for (const b of [...latency.keys()].sort((x, y) => x - y)) {
      seen += latency.get(b)!
      if (seen * 2 >= samples) {
        out.p50Ms = Math.round(valueOf(b))
        break
      }
    }
    return out
  }
}
