// Taken ahead: for a busy key, the next request's rate-limit slot and credit hold are taken in
// Redis while the current request is served, so that the next one finds them here and does not
// wait for a round trip. Each is a real take or hold, made by the same script as any other, so
// N instances still never admit more than a limit or a balance allows. What changes: a slot
// taken ahead counts in its windows from when it was taken, at most STALE_MS before its request
// came, and a slot or hold taken ahead and not used for STALE_MS is given back. Only done far
// from a limit or a balance (the callers' headroom rules), only for a key that is busy here
// (two requests within BUSY_MS), and only while the loop is not crowded (many requests a turn
// share each Redis call already): otherwise every request asks Redis itself, as before.

/** A request this soon after the last one of the same kind takes the next one's ahead. */
export const BUSY_MS = 25
/** What was taken ahead and not used for this long is given back. */
export const STALE_MS = 50
/**
 * Taken ahead at most, per name. A name keeps ready what its requests use in PACE_MS at the
 * rate they come (at 1,000 a second, 25): each call for more then serves many requests, where
 * one a request or two would each cost a round trip's system calls and wake-ups. On top of that,
 * the depth grows by one each time a request found none ready while one was on its way
 * (requests come faster than Redis answers), and shrinks by one each time one goes stale.
 */
export const MAX_DEPTH = 32
/** What a name keeps taken ahead covers its requests for this long (half of STALE_MS: used well before it goes stale). */
export const PACE_MS = STALE_MS / 2

/**
 * Requests a turn of the loop (a moving average) past which nothing is taken ahead: so many
 * requests share each Redis call already that none waits long for it, and taking ahead would only
 * add work (measured: at saturation it cost the gateway more CPU a request than it saved).
 */
export const CROWDED = 4

/** Requests asking for limits and holds, counted by turn of the loop: one count for the whole process. */
class Turns {
  private count = 0
  private counting = false
  /** Requests a turn, a moving average over the turns that had any. */
  average = 0

  private readonly close = () => {
    this.average = this.average * 0.9 + this.count * 0.1
    this.count = 0
    this.counting = false
  }

  /** Counts a request (its limits: each request asks once); whether the loop is crowded. */
  ask(): boolean {
    this.count++
    if (!this.counting) {
      this.counting = true
      setImmediate(this.close)
    }
    return this.crowded
  }

  /** Whether the loop is crowded (taking ahead would not pay), counting nothing. */
  get crowded(): boolean {
    return this.average >= CROWDED
  }
}

export const turns = new Turns()

interface Entry<T> {
  value: T
  at: number
}

interface Waiter<T> {
  fits: (t: T) => boolean
  resolve: (t: T | undefined) => void
}

interface Name<T> {
  ready: Entry<T>[]
  /** Takes ahead on their way. */
  coming: number
  /** Requests waiting for one of those, first come first served (never more than are coming). */
  waiters: Waiter<T>[]
  depth: number
  /** When its last request came. */
  last: number
  /** The time between its requests, a moving average over those that came within BUSY_MS. */
  gap: number
}

/**
 * What was taken ahead, by name (a combination of limits, a key's credits): what the next
 * requests of that name take, if it fits. `giveBack` ends what was not used.
 */
export class Ahead<T> {
  private readonly names = new Map<string, Name<T>>()
  private lastForget = 0
  private waiting = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false

  constructor(private readonly giveBack: (value: T) => void) {}

  /** Whether the name is busy here: its last request came within BUSY_MS. Counts this one. */
  busy(name: string, now: number): boolean {
    let n = this.names.get(name)
    if (!n) {
      // a walk of every name at most once a second, however many new ones come
      if (this.names.size >= MAX_NAMES && now - this.lastForget >= 1_000) this.forgetQuiet(now)
      this.names.set(name, (n = { ready: [], coming: 0, waiters: [], depth: 1, last: now, gap: BUSY_MS }))
      return false
    }
    const gap = now - n.last
    n.last = now
    if (gap > BUSY_MS) {
      n.gap = BUSY_MS
      return false
    }
    n.gap += (gap - n.gap) / 8
    return true
  }

  /** What was taken ahead for `name`, if fresh and `fits`; it is this caller's from then on. */
  take(name: string, now: number, fits: (t: T) => boolean): T | undefined {
    const n = this.names.get(name)
    if (!n) return undefined
    for (let i = 0; i < n.ready.length; i++) {
      const e = n.ready[i]!
      if (now - e.at > STALE_MS || !fits(e.value)) continue
      n.ready.splice(i, 1)
      this.waiting--
      this.used++
      return e.value
    }
    // requests come faster than what is taken ahead comes back: take more ahead
    if (n.coming > 0 && n.depth < MAX_DEPTH) n.depth++
    return undefined
  }

  /**
   * For a request that found nothing ready: the next take ahead on its way, when one is not
   * claimed yet. It was asked before this request came, so it comes back no later than this
   * request's own ask would, and Redis is not asked twice. Resolves undefined when what comes
   * does not serve (refused, too small, a stop): the request then asks Redis itself.
   */
  next(name: string, fits: (t: T) => boolean): Promise<T | undefined> | undefined {
    const n = this.names.get(name)
    if (!n || this.closed || n.coming <= n.waiters.length) return undefined
    const w = Promise.withResolvers<T | undefined>()
    n.waiters.push({ fits, resolve: w.resolve })
    return w.promise
  }

  /**
   * How many takes ahead to start for `name` now (counted as on their way): none while more than
   * half the depth is ready or coming, else as many as fill it. So past a depth of one they go in
   * twos and more, one Redis call for several requests. The depth is at least what the name's
   * requests use in PACE_MS. `riding`: a call goes this turn anyway, so any room is filled (what
   * rides along costs no call of its own).
   */
  wanted(name: string, riding = false): number {
    const n = this.names.get(name)
    if (!n || this.closed) return 0
    const depth = Math.max(n.depth, Math.min(MAX_DEPTH, Math.floor(PACE_MS / Math.max(n.gap, 0.01))))
    const have = n.ready.length + n.coming
    if (have > (riding ? depth - 1 : depth >> 1)) return 0
    const more = depth - have
    n.coming += more
    return more
  }

  /** A take ahead came back: kept for the next request, or given back (`undefined`: refused, nothing to keep). */
  settle(name: string, value: T | undefined, now: number) {
    const n = this.names.get(name)
    if (n) n.coming--
    // a request waiting for it takes it first
    const w = n?.waiters.shift()
    if (w) {
      if (value !== undefined && !this.closed && w.fits(value)) {
        this.used++
        return w.resolve(value)
      }
      w.resolve(undefined)
    }
    if (value === undefined) return
    if (this.closed || !n || n.ready.length >= MAX_DEPTH) return this.giveBack(value)
    n.ready.push({ value, at: now })
    this.waiting++
    if (this.timer === undefined) {
      this.timer = setTimeout(this.sweep, STALE_MS)
      this.timer.unref?.()
    }
  }

  /** Gives back what went stale; runs while anything waits. */
  private readonly sweep = () => {
    this.timer = undefined
    const now = performance.now()
    for (const n of this.names.values()) {
      if (n.ready.length === 0) continue
      const fresh = n.ready.filter((e) => now - e.at < STALE_MS)
      if (fresh.length === n.ready.length) continue
      for (const e of n.ready) if (now - e.at >= STALE_MS) this.giveBack(e.value)
      this.waiting -= n.ready.length - fresh.length
      n.ready = fresh
      if (n.depth > 1) n.depth--
    }
    if (this.waiting > 0) {
      this.timer = setTimeout(this.sweep, STALE_MS)
      this.timer.unref?.()
    }
  }

  private forgetQuiet(now: number) {
    this.lastForget = now
    for (const [name, n] of this.names) if (n.ready.length === 0 && n.coming === 0 && n.waiters.length === 0 && now - n.last > BUSY_MS) this.names.delete(name)
  }

  /** Shutdown: everything waiting is given back, and whatever comes back later too. */
  close() {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    for (const n of this.names.values()) {
      for (const e of n.ready) this.giveBack(e.value)
      n.ready = []
      for (const w of n.waiters.splice(0)) w.resolve(undefined)
    }
    this.waiting = 0
  }

  /** Requests served from what was taken ahead (tests, metrics). */
  used = 0

  /** Takes ahead asked for and not back yet, every name's (tests). */
  get coming(): number {
    let sum = 0
    for (const n of this.names.values()) sum += n.coming
    return sum
  }

  /** Things waiting to be used (tests). */
  get size(): number {
    return this.waiting
  }
}

/**
 * A credit hold is made ahead only while the key's balance, past it, has room for this many more
 * of it: near the end of a balance every request is decided on its own, and a hold parked on one
 * instance can never be what refuses another instance's request. (Both ledgers that take ahead.)
 */
export const HOLD_HEADROOM = 64
/** A hold made ahead covers a worst case this much above the request's that asked for it. */
export const HOLD_MARGIN = 1.25

/** Names remembered at most before the quiet ones (nothing waiting) are forgotten. */
const MAX_NAMES = 10_000
