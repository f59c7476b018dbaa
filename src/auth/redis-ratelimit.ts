// Rate limits shared by every instance: the same exact sliding log as the memory store, kept
// as one Redis sorted set per bucket (member: a unique id per request, score: its time). One
// Lua script decides a whole take atomically (every limit allows it, or none is counted) and
// reads the clock from Redis `TIME`, so instances with drifting clocks still share one
// window. N instances together admit exactly the limit. A request's address limit and its
// key's limits go in one take (takeBoth), and the takes of one turn of the loop in one script
// call with the turn's credit admissions (cluster/scripts.ts's TURN): one command a turn.
//
// Redis unreachable: with `redis.on_error: deny` the take throws RedisUnavailable (the
// pipeline answers 503); with `allow` it is decided by this instance's own memory limiter,
// and a log line says so once a minute while it lasts.
//
// With `redis.take_ahead` (the default), a busy combination of limits far from all of them has
// the next request's slot taken while the current one is served (cluster/ahead.ts).
import type { Logger } from '../http/log.ts'
import { Ahead, turns } from '../cluster/ahead.ts'
import { asUnavailable, type Part, type SharedRedis } from '../cluster/redis.ts'
import { TURN } from '../cluster/scripts.ts'
import { RateLimiter, type Decision, type Limit, type Outcome, type RateLimitBackend } from './ratelimit.ts'

export class RedisRateLimiter implements RateLimitBackend {
  /** Per-instance limits, used only while Redis is away and `on_error` is `allow`. */
  readonly local = new RateLimiter()

  private readonly prefix: string
  /** Each request's member in the windows: this instance's random tag and a counter (unique, and short). */
  private readonly tag = crypto.randomUUID().slice(0, 13) + ':'
  private seq = 0

  /**
   * Takes that got no answer in time, to take back when Redis answers again: a Redis that
   * stalled (not one that restarted) runs them when it resumes, and each would count in its
   * windows (a key's minute among them) for a request refused here. Bounded: past MAX_UNTAKEN
   * they stay counted.
   */
  private untaken: { keys: string[]; member: string }[] = []

  /** Slots taken ahead, by combination of limits (see cluster/ahead.ts); none without `take_ahead`. */
  readonly ahead?: Ahead<TakenAhead>

  constructor(private readonly redis: SharedRedis, private readonly log: Logger) {
    this.prefix = redis.settings.prefix + 'rl:'
    redis.onRecover(() => this.takeBack())
    if (redis.settings.takeAhead) this.ahead = new Ahead((t) => this.giveBack(t.keys, t.member))
  }

  async take(limits: Limit[]): Promise<Outcome> {
    if (limits.length === 0) return { allowed: true, binding: { allowed: true, limit: 0, remaining: 0, resetAt: Date.now(), scope: 'key' } }
    const raw = await this.run(limits, limits.length)
    return raw ? outcome(limits, raw, 1) : this.local.take(limits)
  }

  async takeBoth(first: Limit[], then: Limit[]): Promise<[Outcome, Outcome | undefined]> {
    // with the loop crowded, each call carries many requests already: nothing taken ahead
    const name = this.ahead && !turns.ask() ? nameOf(first, then) : undefined
    let busy = false
    if (name) {
      const now = performance.now()
      busy = this.ahead!.busy(name, now)
      let got = this.ahead!.take(name, now, always)
      if (!got) {
        const coming = this.ahead!.next(name, always)
        if (coming) got = await coming
      }
      if (got) {
        this.takeAhead(name, first, then)
        return got.outcomes
      }
    }
    const all = [...first, ...then]
    const raw = await this.run(all, first.length)
    if (!raw) {
      const a = this.local.take(first)
      return [a, a.allowed ? this.local.take(then) : undefined]
    }
    const outcomes = both(first, then, raw)
    if (busy && roomy(all, raw, first.length)) this.takeAhead(name!, first, then)
    return outcomes
  }

  /** The next requests' slots of these limits, taken now: kept only while every limit has room. */
  private takeAhead(name: string, first: Limit[], then: Limit[]) {
    for (let n = this.ahead!.wanted(name, this.redis.going); n > 0; n--) this.takeOneAhead(name, first, then)
  }

  private takeOneAhead(name: string, first: Limit[], then: Limit[]) {
    const ahead = this.ahead!
    const all = [...first, ...then]
    const { keys, args } = this.request(all, first.length)
    const member = args[0]!
    this.redis.part(TURN, {
      kind: 't',
      keys,
      args,
      weight: 1,
      resolve: (answer) => {
        const raw = answer as number[]
        const outcomes = both(first, then, raw)
        const kept = outcomes[1]?.allowed === true && roomy(all, raw, first.length)
        // a group that allowed it counted it: given back when it is not kept
        if (!kept && outcomes[0].allowed) this.giveBack(keys, member)
        ahead.settle(name, kept ? { keys, member, outcomes } : undefined, performance.now())
      },
      reject: () => {
        if (this.redis.downSince !== null && this.untaken.length < MAX_UNTAKEN) this.untaken.push({ keys, member })
        ahead.settle(name, undefined, performance.now())
      },
    })
  }

  /** A slot taken and not used leaves its windows. */
  private giveBack(keys: string[], member: string) {
    for (const key of keys) this.redis.send('ZREM', [key, member]).catch(() => {})
  }

  /** A take's KEYS and ARGV (the first ARGV its member in the windows). */
  private request(limits: Limit[], split: number): { keys: string[]; args: string[] } {
    const args: string[] = [this.tag + (this.seq++).toString(36), String(limits.length), String(split)]
    const keys: string[] = []
    for (const l of limits) {
      keys.push(this.prefix + l.bucket)
      args.push(String(l.limit), String(l.windowMs))
    }
    return { keys, args }
  }

  /** The script's answer; undefined when Redis is away and `on_error` is `allow` (decide locally). */
  private async run(limits: Limit[], split: number): Promise<number[] | undefined> {
    const { keys, args } = this.request(limits, split)
    // its resolvers, with no executor closure a take
    const answer = Promise.withResolvers<number[]>()
    this.redis.part(TURN, { kind: 't', keys, args, weight: 1, resolve: answer.resolve as Part['resolve'], reject: answer.reject })
    try {
      return await answer.promise
    } catch (e) {
      const down = asUnavailable(e, this.log)
      if (this.redis.downSince !== null && this.untaken.length < MAX_UNTAKEN) this.untaken.push({ keys, member: args[0]! })
      if (this.redis.settings.onError !== 'allow') throw down
      this.redis.degraded()
      return undefined
    }
  }

  /** Shutdown: slots taken ahead leave their windows. */
  stop() {
    this.ahead?.close()
  }

  /** Redis answers again: the takes it may have run unanswered leave their windows. */
  private takeBack() {
    const all = this.untaken
    this.untaken = []
    for (const u of all) for (const key of u.keys) this.redis.send('ZREM', [key, u.member]).catch(() => {})
  }
}

/** Takes to take back kept while Redis is away, at most. */
const MAX_UNTAKEN = 100_000

/** A slot taken ahead: where it counts, and the answers its request will get. */
interface TakenAhead {
  keys: string[]
  member: string
  outcomes: [Outcome, Outcome | undefined]
}

/**
 * A slot is taken ahead only while each limit, after it, has this many left and half of
 * itself: a limit near its end is decided request by request, and a slot parked here can never
 * be what refuses another instance's request (it would take this much room being used up
 * within STALE_MS).
 */
const AHEAD_MIN_REMAINING = 64

const always = () => true

/** The combination a slot taken ahead serves: the same buckets with the same limits. */
function nameOf(first: Limit[], then: Limit[]): string {
  let name = ''
  for (const l of first) name += l.bucket + '#' + l.limit + '#' + l.windowMs + '|'
  name += '/'
  for (const l of then) name += '|' + l.bucket + '#' + l.limit + '#' + l.windowMs
  return name
}

function both(first: Limit[], then: Limit[], raw: number[]): [Outcome, Outcome | undefined] {
  const a = outcome(first, raw, 1)
  return [a, a.allowed ? outcome(then, raw, 2 + 2 * first.length) : undefined]
}

/** Whether every limit of an allowed take has room left to take the next one ahead. */
function roomy(all: Limit[], raw: number[], split: number): boolean {
  if (raw[1] !== 1 || raw[2 + 2 * split] !== 1) return false
  for (let i = 0; i < all.length; i++) {
    const at = i < split ? 2 + 2 * i : 3 + 2 * i
    const left = Number(raw[at])
    if (!(left >= AHEAD_MIN_REMAINING && left >= all[i]!.limit / 2)) return false
  }
  return true
}

/** A group's answer (from `raw[at]`) as an Outcome: the refusing limit, or the one with fewest remaining. */
function outcome(limits: Limit[], raw: number[], at: number): Outcome {
  const allowed = raw[at] === 1
  let binding: Outcome['binding'] | undefined
  for (let i = 0; i < limits.length; i++) {
    const l = limits[i]!
    const remaining = Number(raw[at + 1 + 2 * i])
    const d: Decision & { scope: Limit['scope'] } = {
      allowed: allowed || remaining > 0,
      limit: l.limit,
      remaining: Math.max(0, remaining),
      resetAt: Number(raw[at + 2 + 2 * i]),
      // Redis's clock, which the reset is on (the script's first answer)
      now: Number(raw[0]),
      scope: l.scope,
    }
    const refusing = !allowed && !d.allowed
    if (!binding || (refusing && binding.allowed) || (refusing === !binding.allowed && d.remaining < binding.remaining)) binding = d
  }
  return { allowed, binding: binding! }
}
