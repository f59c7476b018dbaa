// Whether a deployment may be sent to, and what it did lately. A deployment that fails
// `failuresToCool` times in a row, or answers 429 with Retry-After, rests (is cooled) for the
// cooldown (or that long); after the rest exactly one request, the probe, is let through, and
// its outcome decides: a success makes the deployment ok again, a failure cools it for another
// full cooldown. The hot path (maySend, then succeeded / failed) is synchronous and cheap: a
// map lookup and a few fields. The cluster variant (redis-health.ts) keeps this memory view as
// its local copy and shares cooldowns and failure counts through Redis behind it.
import { DEFAULT_ROUTING, type Deployment, type RoutingSettings } from '../config/providers.ts'
import { HourStats, type HourTotals } from './hour-stats.ts'

/** How health keys a deployment: `provider/upstreamId`. */
export const deploymentKey = (d: Pick<Deployment, 'provider' | 'upstreamId'>) => `${d.provider}/${d.upstreamId}`

/**
 * - ok: requests go to it;
 * - cooling: none until `until` (epoch ms);
 * - half-open: the rest is over, the next maySend is its probe;
 * - probing: the probe is out; nothing else goes until it reports.
 */
export type HealthState = { kind: 'ok' } | { kind: 'cooling'; until: number } | { kind: 'half-open' } | { kind: 'probing' }

const OK: HealthState = Object.freeze({ kind: 'ok' })

/**
 * The longest rest a Retry-After sets: an upstream's hint past it (a day's quota spent, or a
 * number that means nothing: 1e9 seconds) rests the deployment this long, then one probe asks.
 */
export const MAX_HINTED_REST_MS = 60 * 60_000

/** The longest rest a deployment is given: a Retry-After's bound, or the cooldown if longer. */
export const longestRest = (settings: { cooldownMs: number }): number => Math.max(MAX_HINTED_REST_MS, settings.cooldownMs)

export interface FailureInfo {
  /** A 429's Retry-After, ms: the deployment rests at once for at least this long. */
  retryAfterMs?: number
  /** The request moved on to another deployment or model after this failure (dashboard counter). */
  failover?: boolean
}

/** One deployment on the dashboard. */
export interface DeploymentReport {
  key: string
  state: HealthState['kind']
  /** While cooling: when it may be probed again (epoch ms). */
  coolingUntil?: number
  consecutiveFailures: number
  /** This instance's last hour. */
  lastHour: HourTotals
}

export interface DeploymentHealth {
  /** Where the deployment stands, without side effects (ordering reads this). */
  state(key: string): HealthState
  /**
   * Right before sending: true when it may be sent to. For a half-open deployment this claims
   * the probe: the first caller gets true, every other one false until the probe reports
   * (succeeded, failed or abandoned).
   */
  maySend(key: string): boolean
  /** It answered (the caller's latency measure, e.g. time to the first byte, in `ms`). */
  succeeded(key: string, ms?: number): void
  /** A failure that counts against the deployment (one of `retry_on`). */
  failed(key: string, info?: FailureInfo): void
  /** A request that was let through ended with no verdict on the deployment (the client left): frees a claimed probe. */
  abandoned(key: string): void
  /** The dashboard's view: of `keys` (unknown ones as fresh), or of every deployment seen. */
  snapshot(keys?: string[]): DeploymentReport[]
  close(): void
}

interface Entry {
  /** Cooled until this time; 0 when it never was, or has succeeded since. */
  until: number
  /** When the probe was let through (null: none out). */
  probeAt: number | null
  failures: number
  stats: HourStats
}

export interface HealthOptions {
  now?: () => number
  /** A probe that has not reported after this long is taken as lost: another is let through. Default: the cooldown. */
  probeLeaseMs?: number
}

/** Deployments whose state one instance keeps. */
const MAX_ENTRIES = 4096
/** How far eviction looks for an entry that is not resting before it takes the oldest. */
const EVICT_SCAN = 64

export class MemoryHealth implements DeploymentHealth {
  private entries = new Map<string, Entry>()
  readonly now: () => number

  constructor(public settings: RoutingSettings = DEFAULT_ROUTING, private readonly opts: HealthOptions = {}) {
    this.now = opts.now ?? Date.now
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key)
    if (!e) {
      if (this.entries.size >= MAX_ENTRIES) this.evict()
      this.entries.set(key, (e = { until: 0, probeAt: null, failures: 0, stats: new HourStats() }))
    }
    return e
  }

  /**
   * A deployment is met for every model id a client names (`mock-…`, an unlisted id), so the
   * entries are bounded: the oldest one that is not resting goes (its last hour's figures with
   * it), else one of the oldest.
   */
  private evict() {
    let n = 0
    for (const [key, e] of this.entries) {
      if (e.until === 0 || ++n > EVICT_SCAN) {
        this.entries.delete(key)
        return
      }
    }
  }

  state(key: string): HealthState {
    const e = this.entries.get(key)
    if (!e || e.until === 0) return OK
    const now = this.now()
    if (e.until > now) return { kind: 'cooling', until: e.until }
    const lease = this.opts.probeLeaseMs ?? this.settings.cooldownMs
    return e.probeAt !== null && now - e.probeAt < lease ? { kind: 'probing' } : { kind: 'half-open' }
  }

  maySend(key: string): boolean {
    const s = this.state(key)
    if (s.kind === 'ok') return true
    if (s.kind !== 'half-open') return false
    this.entry(key).probeAt = this.now()
    return true
  }

  succeeded(key: string, ms?: number) {
    const e = this.entry(key)
    const now = this.now()
    e.stats.add(now, { ms })
    e.failures = 0
    // a late answer to a request sent before the rest began does not end the rest
    if (e.until <= now) {
      e.until = 0
      e.probeAt = null
    }
  }

  /** Returns the time the deployment is cooled until when this failure began or lengthened its rest, else 0. */
  failed(key: string, info: FailureInfo = {}): number {
    const e = this.entry(key)
    const now = this.now()
    e.stats.add(now, { error: true, failover: info.failover })
    e.failures++
    const cooling = e.until > now
    // the probe (or any request after the rest) failing cools it again; during a rest only
    // a Retry-After can lengthen it
    const threshold = this.settings.failuresToCool > 0 && e.failures >= this.settings.failuresToCool
    let ms = info.retryAfterMs !== undefined && info.retryAfterMs > 0 ? Math.min(info.retryAfterMs, MAX_HINTED_REST_MS) : 0
    if (!cooling && (e.until > 0 || threshold)) ms = Math.max(ms, this.settings.cooldownMs)
    if (ms <= 0 || now + ms <= e.until) return 0
    e.until = now + ms
    e.probeAt = null
    return e.until
  }

  abandoned(key: string) {
    const e = this.entries.get(key)
    if (e) e.probeAt = null
  }

  /**
   * What another instance decided (the cluster variant): a longer rest, the shared failure count.
   * A rest past the longest this gateway sets (one an instance from before the bound wrote) is
   * taken as that long.
   */
  adopt(key: string, shared: { until?: number; failures?: number }) {
    const e = this.entry(key)
    if (shared.failures !== undefined) e.failures = shared.failures
    const now = this.now()
    const until = shared.until === undefined ? undefined : Math.min(shared.until, now + longestRest(this.settings))
    if (until !== undefined && until > e.until && until > now) {
      e.until = until
      e.probeAt = null
    }
  }

  snapshot(keys?: string[]): DeploymentReport[] {
    const now = this.now()
    return (keys ?? [...this.entries.keys()]).map((key) => {
      const s = this.state(key)
      const e = this.entries.get(key)
      return {
        key,
        state: s.kind,
        ...(s.kind === 'cooling' ? { coolingUntil: s.until } : {}),
        consecutiveFailures: e?.failures ?? 0,
        lastHour: e ? e.stats.totals(now) : { requests: 0, errors: 0, failovers: 0, p50Ms: null },
      }
    })
  }

  close() {}
}
