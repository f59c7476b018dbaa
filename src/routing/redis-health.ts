// Deployment health shared by the instances of a cluster. Each instance decides on its own
// memory view (MemoryHealth), synchronously, as a single gateway does; behind it, Redis holds
// what the instances share:
//   - cooldowns: one sorted set, member = deployment key, score = when its rest ends (Redis
//     time); whichever instance starts or lengthens a rest writes it;
//   - consecutive failures: one hash, deployment key → count; a failure anywhere adds one, a
//     success anywhere clears it, and the count reaching `failuresToCool` starts the rest.
// Every instance reads both (one script call) when another says on the change bus that it wrote
// them, at most every 250 ms, so the others stop sending to a deployment within about a quarter
// of a second of its rest starting; and every 5 s in any case, for a message the bus lost. An
// idle cluster asks nothing of Redis for this. Without a bus (tests) it reads every 250 ms.
// Writes go out in the background; with Redis away an instance goes on on its own view. The
// probe after a rest is per instance: each lets one request through and decides on its answer.
import type { Bus } from '../cluster/bus.ts'
import { asUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import type { RoutingSettings } from '../config/providers.ts'
import type { Logger } from '../http/log.ts'
import { longestRest, MemoryHealth, type DeploymentHealth, type DeploymentReport, type FailureInfo, type HealthOptions, type HealthState } from './health.ts'

const HOUR_MS = 3_600_000
export const REFRESH_MS = 250
/** With a bus: read this often too, for what a lost message did not tell. */
export const FALLBACK_MS = 5_000
const TOPIC = 'health'

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// KEYS: cooldowns, failures. ARGV: deployment, failuresToCool, cooldownMs, the rest this
// instance wants (ms, 0: none), how long the failure counts are kept.
// Returns { now, cooled until (0: not cooling), count }.
const FAIL = script(`${NOW}
local n = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local existing = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
local ms = tonumber(ARGV[4])
local limit = tonumber(ARGV[2])
if existing <= now and limit > 0 and n >= limit and ms < tonumber(ARGV[3]) then ms = tonumber(ARGV[3]) end
local untilAt = existing
if ms > 0 and now + ms > existing then
  untilAt = now + ms
  redis.call('ZADD', KEYS[1], untilAt, ARGV[1])
  if redis.call('PTTL', KEYS[1]) < ms then redis.call('PEXPIRE', KEYS[1], ms) end
end
if untilAt <= now then untilAt = 0 end
return { now, untilAt, n }
`)

// ARGV: the longest rest (ms); one that ends later (written by an instance from before that
// bound) is cut to it here, in Redis, so that every instance reads the same end and none keeps
// pushing it on. Returns { now, [deployment, until, …], [deployment, count, …] }.
const READ = script(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local latest = now + tonumber(ARGV[1])
local cooling = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #cooling, 2 do
  if tonumber(cooling[i + 1]) > latest then
    redis.call('ZADD', KEYS[1], latest, cooling[i])
    cooling[i + 1] = string.format('%d', latest)
  end
end
return { now, cooling, redis.call('HGETALL', KEYS[2]) }
`)

export class RedisHealth implements DeploymentHealth {
  readonly local: MemoryHealth
  private readonly keys: [cooldowns: string, failures: string]
  /** Writes under way per deployment: a count read meanwhile may predate them, so it is not taken. */
  private pending = new Map<string, number>()
  /** The shared failure counts as last seen (only non-zero ones need a reset on success). */
  private shared = new Map<string, number>()
  private readonly timer: ReturnType<typeof setInterval>
  private reading = false
  /** A write was announced since the read under way began: read again after it. */
  private stale = false
  private lastRead = -Infinity
  private soon: ReturnType<typeof setTimeout> | undefined
  private readonly bus?: Bus
  private readonly unsubscribe?: () => void
  /** This instance's mark on what it announces, so that it does not read again on its own word. */
  private readonly self = crypto.randomUUID()

  /** Whether a deployment's health is shared; every one's when not told. */
  private readonly shares: (key: string) => boolean

  /**
   * `shares`: the deployments whose health the instances share (the config's and the built-in
   * table's). One a client's model id makes (a random `mock-…`, an unlisted id) stays this
   * instance's, bounded as its memory view is: shared, each id a client named and failed left a
   * field in Redis, read by every instance at each refresh, and an entry in `shared` for good.
   */
  constructor(private readonly redis: SharedRedis, settings: RoutingSettings, private readonly log: Logger, opts: HealthOptions & { refreshMs?: number; bus?: Bus; shares?: (key: string) => boolean } = {}) {
    this.local = new MemoryHealth(settings, opts)
    this.shares = opts.shares ?? (() => true)
    const p = redis.settings.prefix + 'health:'
    this.keys = [p + 'cooling', p + 'failures']
    this.bus = opts.bus
    // a message from another instance, or null (the bus lost messages): read soon
    this.unsubscribe = this.bus?.subscribe(TOPIC, (from) => from !== this.self && this.readSoon())
    this.timer = setInterval(() => void this.refresh(), opts.refreshMs ?? (this.bus ? FALLBACK_MS : REFRESH_MS))
    this.timer.unref?.()
    void this.refresh()
  }

  /** A read now, or REFRESH_MS after the last one began; one after the read under way if it runs. */
  private readSoon() {
    this.stale = true
    if (this.reading || this.soon !== undefined) return
    const wait = this.lastRead + REFRESH_MS - performance.now()
    if (wait <= 0) return void this.refresh()
    this.soon = setTimeout(() => {
      this.soon = undefined
      void this.refresh()
    }, wait)
    this.soon.unref?.()
  }

  get settings(): RoutingSettings {
    return this.local.settings
  }
  set settings(s: RoutingSettings) {
    this.local.settings = s
  }

  state(key: string): HealthState {
    return this.local.state(key)
  }

  maySend(key: string): boolean {
    return this.local.maySend(key)
  }

  abandoned(key: string) {
    this.local.abandoned(key)
  }

  snapshot(keys?: string[]): DeploymentReport[] {
    return this.local.snapshot(keys)
  }

  succeeded(key: string, ms?: number) {
    this.local.succeeded(key, ms)
    if (!this.shared.get(key) && !this.pending.get(key)) return
    this.shared.set(key, 0)
    this.write(key, this.redis.send('HDEL', [this.keys[1], key]), () => {
      this.local.adopt(key, { failures: 0 })
      this.announce()
    })
  }

  failed(key: string, info: FailureInfo = {}) {
    const until = this.local.failed(key, info)
    if (!this.shares(key)) return
    const wants = until > 0 ? until - this.local.now() : 0
    const s = this.local.settings
    const args = [key, String(s.failuresToCool), String(s.cooldownMs), String(wants), String(HOUR_MS)]
    this.write(key, this.redis.eval(FAIL, this.keys, args), (raw) => {
      const [now, cooledUntil, count] = (raw as unknown[]).map(Number) as [number, number, number]
      this.shared.set(key, count)
      this.local.adopt(key, { failures: count, until: cooledUntil > 0 ? this.toLocal(cooledUntil, now) : undefined })
      this.announce()
    })
  }

  /** Reads the shared cooldowns and counts into the local view; the timer calls it, tests may too. */
  async refresh(): Promise<void> {
    if (this.reading) return
    this.reading = true
    this.stale = false
    this.lastRead = performance.now()
    try {
      const [now, cooling, failures] = (await this.redis.eval(READ, this.keys, [String(longestRest(this.local.settings))])) as [number, string[], string[]]
      for (let i = 0; i + 1 < cooling.length; i += 2) this.local.adopt(cooling[i]!, { until: this.toLocal(Number(cooling[i + 1]), Number(now)) })
      const counts = new Map<string, number>()
      for (let i = 0; i + 1 < failures.length; i += 2) counts.set(failures[i]!, Number(failures[i + 1]))
      for (const key of new Set([...this.shared.keys(), ...counts.keys()])) {
        if (this.pending.get(key)) continue
        const n = counts.get(key) ?? 0
        this.shared.set(key, n)
        this.local.adopt(key, { failures: n })
      }
    } catch (e) {
      this.quiet(e)
    } finally {
      this.reading = false
      if (this.stale) this.readSoon()
    }
  }

  /** Tells the other instances that this one wrote: they read what changed. */
  private announce() {
    void this.bus?.publish(TOPIC, this.self)
  }

  /** A Redis time as this instance's clock reads it (the reply's `now` is Redis's now). */
  private toLocal(at: number, redisNow: number): number {
    return this.local.now() + (at - redisNow)
  }

  private write(key: string, op: Promise<unknown>, done: (raw: unknown) => void) {
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1)
    op.then(done, (e) => this.quiet(e)).finally(() => {
      const n = (this.pending.get(key) ?? 1) - 1
      if (n > 0) this.pending.set(key, n)
      else this.pending.delete(key)
    })
  }

  /** An unreachable Redis is logged by SharedRedis once per outage; only a server's own error is news. */
  private quiet(e: unknown) {
    asUnavailable(e, this.log)
  }

  close() {
    clearInterval(this.timer)
    clearTimeout(this.soon)
    this.unsubscribe?.()
  }
}
