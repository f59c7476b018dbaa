// Rolling-window rate limits. Each bucket is an exact sliding log kept in a ring buffer
// of the last `limit` request times: a request is allowed when fewer than `limit` fall in
// the window. Amortised O(1) per request; the store is an interface so a shared store
// (Redis) can replace the memory one for several instances.
import { retryHeaders } from '../http/retry-after.ts'

export interface Decision {
  allowed: boolean
  limit: number
  remaining: number
  /** Epoch ms when a slot frees up (the oldest request in the window leaves it), on the decision's clock. */
  resetAt: number
  /** The decision's clock when it was made, where it is not this process's steady one (shared limits: Redis's). */
  now?: number
}

export interface RateLimitStore {
  /** What a hit would be answered now, without counting it. */
  peek(bucket: string, limit: number, windowMs: number, now: number): Decision
  /** Count a hit (call only after every limit that applies allowed it). */
  hit(bucket: string, limit: number, windowMs: number, now: number): Decision
  prune(now: number): void
}

interface Log {
  /** A ring that grows (doubling) up to the limit as the bucket fills: a bucket seen once costs a few bytes. */
  times: Float64Array
  head: number
  size: number
  limit: number
  windowMs: number
}

const FIRST_CAPACITY = 4
/**
 * Buckets kept at most (40,000 distinct forwarded addresses used to hold 225 MB). Past
 * it, expired buckets go first, then the least recently used: an evicted address starts a
 * fresh window, which errs on the side of letting it in, never of refusing someone else.
 */
export const MAX_BUCKETS = 100_000

/** `l` under a new limit or window: its newest times, as many as the new limit holds. */
function resized(l: Log, limit: number, windowMs: number): Log {
  const keep = Math.min(l.size, limit)
  const times = new Float64Array(Math.min(limit, Math.max(FIRST_CAPACITY, keep)))
  for (let i = 0; i < keep; i++) times[i] = l.times[(l.head + l.size - keep + i) % l.times.length]!
  return { times, head: 0, size: keep, limit, windowMs }
}

export class MemoryStore implements RateLimitStore {
  private logs = new Map<string, Log>()

  /**
   * Only address buckets are ever evicted: they are what an outsider can multiply. A key's
   * window is never reset by a flood of new addresses (key buckets are bounded by the keys).
   */
  constructor(
    private readonly maxBuckets = MAX_BUCKETS,
    private readonly evictable: (bucket: string) => boolean = (b) => b.startsWith('ip:'),
  ) {}

  get size(): number {
    return this.logs.size
  }

  private log(bucket: string, limit: number, windowMs: number, now: number): Log {
    let l = this.logs.get(bucket)
    if (!l) {
      l = { times: new Float64Array(Math.min(limit, FIRST_CAPACITY)), head: 0, size: 0, limit, windowMs }
      if (this.logs.size >= this.maxBuckets) this.evict(now)
      this.logs.set(bucket, l)
    } else if (l.limit !== limit || l.windowMs !== windowMs) {
      // a key's rpm changed: its requests so far still count (a fresh window would hand a key
      // whose rpm was just lowered a whole new minute)
      l = resized(l, limit, windowMs)
      this.logs.set(bucket, l)
    } else if (this.evictable(bucket)) {
      // most recently used last, so eviction takes the least recently used first (only
      // evictable buckets are ever taken, so only their order matters)
      this.logs.delete(bucket)
      this.logs.set(bucket, l)
    }
    const cutoff = now - windowMs
    while (l.size > 0 && l.times[l.head]! <= cutoff) {
      l.head = (l.head + 1) % l.times.length
      l.size--
    }
    return l
  }

  private lastEvictPrune = 0

  private evict(now: number) {
    // a full prune is O(buckets): at most once a second, however fast new addresses come
    if (now - this.lastEvictPrune >= 1000) {
      this.lastEvictPrune = now
      this.prune(now)
    }
    for (const k of this.logs.keys()) {
      if (this.logs.size < this.maxBuckets) break
      if (this.evictable(k)) this.logs.delete(k)
    }
  }

  private grow(l: Log) {
    const times = new Float64Array(Math.min(l.limit, l.times.length * 2))
    for (let i = 0; i < l.size; i++) times[i] = l.times[(l.head + i) % l.times.length]!
    l.times = times
    l.head = 0
  }

  private decide(l: Log, limit: number, now: number): Decision {
    return {
      allowed: l.size < limit,
      limit,
      remaining: limit - l.size,
      resetAt: l.size > 0 ? l.times[l.head]! + l.windowMs : now + l.windowMs,
    }
  }

  peek(bucket: string, limit: number, windowMs: number, now: number): Decision {
    return this.decide(this.log(bucket, limit, windowMs, now), limit, now)
  }

  hit(bucket: string, limit: number, windowMs: number, now: number): Decision {
    const l = this.log(bucket, limit, windowMs, now)
    this.count(l, limit, now)
    return this.decide(l, limit, now)
  }

  private count(l: Log, limit: number, now: number) {
    if (l.size >= limit) return
    if (l.size === l.times.length) this.grow(l)
    l.times[(l.head + l.size) % l.times.length] = now
    l.size++
  }

  /** RateLimiter.take in one pass: each bucket looked up once (the request path's case). */
  take(limits: Limit[], now: number): Outcome {
    const logs: Log[] = []
    for (const x of limits) {
      const l = this.log(x.bucket, x.limit, x.windowMs, now)
      if (l.size >= x.limit) return { allowed: false, binding: { ...this.decide(l, x.limit, now), scope: x.scope } }
      logs.push(l)
    }
    let binding: Outcome['binding'] | undefined
    for (let i = 0; i < limits.length; i++) {
      const x = limits[i]!
      this.count(logs[i]!, x.limit, now)
      const remaining = x.limit - logs[i]!.size
      if (!binding || remaining < binding.remaining) binding = { ...this.decide(logs[i]!, x.limit, now), scope: x.scope }
    }
    return { allowed: true, binding: binding! }
  }

  prune(now: number) {
    for (const [k, l] of this.logs) {
      const newest = l.size > 0 ? l.times[(l.head + l.size - 1) % l.times.length]! : 0
      if (newest <= now - l.windowMs) this.logs.delete(k)
    }
  }
}

export interface Limit {
  bucket: string
  limit: number
  windowMs: number
  /** Which limit this is, for the 429 message. */
  scope: 'key' | 'ip'
}

export interface Outcome {
  allowed: boolean
  /** The limit that refused, or the binding one (fewest remaining) when allowed. */
  binding: Decision & { scope: 'key' | 'ip' }
}

/**
 * What the request pipeline asks for a request. The in-process RateLimiter answers at once;
 * a limiter shared by several instances (auth/redis-ratelimit.ts) answers with a promise.
 */
export interface RateLimitBackend {
  /** All-or-nothing, as RateLimiter.take. */
  take(limits: Limit[], now?: number): Outcome | Promise<Outcome>
  /**
   * A shared limiter's `take(first)` and then, only when that allowed it, `take(then)`, in one
   * round trip: an address's limits and a key's, decided as two takes would decide them.
   */
  takeBoth?(first: Limit[], then: Limit[]): Promise<[Outcome, Outcome | undefined]>
}

/**
 * The rate-limit windows' clock: the wall clock as it was when the process started, moved on by a
 * monotonic one. A step of the system clock (NTP, a VM restored) neither stretches a window (a
 * step back of an hour refused every key already counted, for the hour) nor empties one.
 */
export const steadyNow = (): number => performance.timeOrigin + performance.now()

export class RateLimiter implements RateLimitBackend {
  constructor(readonly store: RateLimitStore = new MemoryStore()) {}

  /** All-or-nothing: counted against every limit only when every limit allows it. */
  take(limits: Limit[], now = steadyNow()): Outcome {
    if (this.store instanceof MemoryStore) return this.store.take(limits, now)
    const peeks = limits.map((l) => ({ ...this.store.peek(l.bucket, l.limit, l.windowMs, now), scope: l.scope }))
    const refused = peeks.find((p) => !p.allowed)
    if (refused) return { allowed: false, binding: refused }
    let binding: Outcome['binding'] | undefined
    for (const l of limits) {
      const d = { ...this.store.hit(l.bucket, l.limit, l.windowMs, now), scope: l.scope }
      if (!binding || d.remaining < binding.remaining) binding = d
    }
    return { allowed: true, binding: binding! }
  }

  /** Combine an earlier outcome (the IP's) with a later one (the key's) for the headers. */
  static tighter(a: Outcome['binding'], b: Outcome['binding']): Outcome['binding'] {
    return b.remaining < a.remaining ? b : a
  }
}

/**
 * The headers of a decision. Its time left is read on its own clock (this process's steady one,
 * or Redis's for shared limits), and the reset given as this machine's epoch seconds from now.
 */
export function rateLimitHeaders(d: Decision, refused: boolean): Record<string, string> {
  const left = Math.max(0, d.resetAt - (d.now ?? steadyNow()))
  const h: Record<string, string> = {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(refused ? 0 : d.remaining),
    'x-ratelimit-reset': String(Math.ceil((Date.now() + left) / 1000)),
  }
  if (refused) Object.assign(h, retryHeaders(left))
  return h
}
