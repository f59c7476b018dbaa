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
import type { Logger } from '../http/log.ts'
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

  constructor(private readonly redis: SharedRedis, private readonly log: Logger) {
    this.prefix = redis.settings.prefix + 'rl:'
    redis.onRecover(() => this.takeBack())
  }

  async take(limits: Limit[]): Promise<Outcome> {
    if (limits.length === 0) return { allowed: true, binding: { allowed: true, limit: 0, remaining: 0, resetAt: Date.now(), scope: 'key' } }
    const raw = await this.run(limits, limits.length)
    return raw ? outcome(limits, raw, 1) : this.local.take(limits)
  }

  async takeBoth(first: Limit[], then: Limit[]): Promise<[Outcome, Outcome | undefined]> {
    const raw = await this.run([...first, ...then], first.length)
    if (!raw) {
      const a = this.local.take(first)
      return [a, a.allowed ? this.local.take(then) : undefined]
    }
    const a = outcome(first, raw, 1)
    return [a, a.allowed ? outcome(then, raw, 2 + 2 * first.length) : undefined]
  }

  /** The script's answer; undefined when Redis is away and `on_error` is `allow` (decide locally). */
  private async run(limits: Limit[], split: number): Promise<number[] | undefined> {
    const args: string[] = [this.tag + (this.seq++).toString(36), String(limits.length), String(split)]
    const keys: string[] = []
    for (const l of limits) {
      keys.push(this.prefix + l.bucket)
      args.push(String(l.limit), String(l.windowMs))
    }
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

  /** Redis answers again: the takes it may have run unanswered leave their windows. */
  private takeBack() {
    const all = this.untaken
    this.untaken = []
    for (const u of all) for (const key of u.keys) this.redis.send('ZREM', [key, u.member]).catch(() => {})
  }
}

/** Takes to take back kept while Redis is away, at most. */
const MAX_UNTAKEN = 100_000

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
      scope: l.scope,
    }
    const refusing = !allowed && !d.allowed
    if (!binding || (refusing && binding.allowed) || (refusing === !binding.allowed && d.remaining < binding.remaining)) binding = d
  }
  return { allowed, binding: binding! }
}
