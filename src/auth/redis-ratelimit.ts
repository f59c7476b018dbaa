// Rate limits shared by every instance: the same exact sliding log as the memory store, kept
// as one Redis sorted set per bucket (member: a unique id per request, score: its time). One
// Lua script decides a whole take atomically (every limit allows it, or none is counted) and
// reads the clock from Redis `TIME`, so instances with drifting clocks still share one
// window. N instances together admit exactly the limit. A request's address limit and its
// key's limits go in one script call (takeBoth): one round trip a request, not two.
//
// Redis unreachable: with `redis.on_error: deny` the take throws RedisUnavailable (the
// pipeline answers 503); with `allow` it is decided by this instance's own memory limiter,
// and a log line says so once a minute while it lasts.
import type { Logger } from '../http/log.ts'
import { asUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import { RateLimiter, type Decision, type Limit, type Outcome, type RateLimitBackend } from './ratelimit.ts'

// ARGV: a member unique to the request, how many of KEYS form the first group, then each
// limit's count and window. The first group is taken all-or-nothing; only when it allows the
// request, the rest is, all-or-nothing too (an address's limit, then a key's: one round trip
// where there were two, and the same answers). Returns { now, then per group: allowed, then
// per limit: remaining, reset }; a group not reached is left out.
const TAKE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = { now }
local function group(from, to)
  local allowed = 1
  local counts = {}
  for i = from, to do
    local window = tonumber(ARGV[2 * i + 2])
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
    counts[i] = redis.call('ZCARD', KEYS[i])
    if counts[i] >= tonumber(ARGV[2 * i + 1]) then allowed = 0 end
  end
  out[#out + 1] = allowed
  for i = from, to do
    local limit = tonumber(ARGV[2 * i + 1])
    local window = tonumber(ARGV[2 * i + 2])
    local n = counts[i]
    if allowed == 1 then
      redis.call('ZADD', KEYS[i], now, ARGV[1])
      redis.call('PEXPIRE', KEYS[i], window)
      n = n + 1
    end
    local first = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    local reset = now + window
    if #first > 0 then reset = tonumber(first[2]) + window end
    out[#out + 1] = limit - n
    out[#out + 1] = reset
  end
  return allowed
end
local split = tonumber(ARGV[2])
if group(1, split) == 1 and split < #KEYS then group(split + 1, #KEYS) end
return out
`)


export class RedisRateLimiter implements RateLimitBackend {
  /** Per-instance limits, used only while Redis is away and `on_error` is `allow`. */
  readonly local = new RateLimiter()

  private readonly prefix: string
  /** Each request's member in the windows: this instance's random tag and a counter (unique, and short). */
  private readonly tag = crypto.randomUUID().slice(0, 13) + ':'
  private seq = 0

  constructor(private readonly redis: SharedRedis, private readonly log: Logger) {
    this.prefix = redis.settings.prefix + 'rl:'
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
    const args: string[] = [this.tag + (this.seq++).toString(36), String(split)]
    const keys: string[] = []
    for (const l of limits) {
      keys.push(this.prefix + l.bucket)
      args.push(String(l.limit), String(l.windowMs))
    }
    try {
      return (await this.redis.eval(TAKE, keys, args)) as number[]
    } catch (e) {
      const down = asUnavailable(e, this.log)
      if (this.redis.settings.onError !== 'allow') throw down
      this.redis.degraded()
      return undefined
    }
  }
}

/** A group's answer (from `raw[at]`) as an Outcome: the refusing limit, or the one with fewest remaining. */
function outcome(limits: Limit[], raw: number[], at: number): Outcome {
  const allowed = raw[at] === 1
  let binding: Outcome['binding'] | undefined
  limits.forEach((l, i) => {
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
  })
  return { allowed, binding: binding! }
}
