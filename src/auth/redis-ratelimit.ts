// Rate limits shared by every instance: the same exact sliding log as the memory store, kept
// as one Redis sorted set per bucket (member: a unique id per request, score: its time). One
// Lua script decides a whole take atomically (every limit allows it, or none is counted) and
// reads the clock from Redis `TIME`, so instances with drifting clocks still share one
// window. N instances together admit exactly the limit.
//
// Redis unreachable: with `redis.on_error: deny` the take throws RedisUnavailable (the
// pipeline answers 503); with `allow` it is decided by this instance's own memory limiter,
// and a log line says so once a minute while it lasts.
import type { Logger } from '../http/log.ts'
import { asUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import { RateLimiter, type Decision, type Limit, type Outcome, type RateLimitBackend } from './ratelimit.ts'

const TAKE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local allowed = 1
local counts = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  counts[i] = redis.call('ZCARD', key)
  if counts[i] >= tonumber(ARGV[2 * i]) then allowed = 0 end
end
local out = { allowed, now }
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local n = counts[i]
  if allowed == 1 then
    redis.call('ZADD', key, now, ARGV[1])
    redis.call('PEXPIRE', key, window)
    n = n + 1
  end
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local reset = now + window
  if #first > 0 then reset = tonumber(first[2]) + window end
  out[#out + 1] = limit - n
  out[#out + 1] = reset
end
return out
`)


export class RedisRateLimiter implements RateLimitBackend {
  /** Per-instance limits, used only while Redis is away and `on_error` is `allow`. */
  readonly local = new RateLimiter()

  private readonly prefix: string

  constructor(private readonly redis: SharedRedis, private readonly log: Logger) {
    this.prefix = redis.settings.prefix + 'rl:'
  }

  async take(limits: Limit[]): Promise<Outcome> {
    if (limits.length === 0) return { allowed: true, binding: { allowed: true, limit: 0, remaining: 0, resetAt: Date.now(), scope: 'key' } }
    const args: string[] = [crypto.randomUUID()]
    for (const l of limits) args.push(String(l.limit), String(l.windowMs))
    let raw: number[]
    try {
      raw = (await this.redis.eval(TAKE, limits.map((l) => this.prefix + l.bucket), args)) as number[]
    } catch (e) {
      const down = asUnavailable(e, this.log)
      if (this.redis.settings.onError !== 'allow') throw down
      this.redis.degraded()
      return this.local.take(limits)
    }
    return outcome(limits, raw)
  }
}

/** The script's answer as an Outcome: the refusing limit, or the one with fewest remaining. */
function outcome(limits: Limit[], raw: number[]): Outcome {
  const allowed = raw[0] === 1
  let binding: Outcome['binding'] | undefined
  limits.forEach((l, i) => {
    const remaining = Number(raw[2 + 2 * i])
    const d: Decision & { scope: Limit['scope'] } = {
      allowed: allowed || remaining > 0,
      limit: l.limit,
      remaining: Math.max(0, remaining),
      resetAt: Number(raw[3 + 2 * i]),
      scope: l.scope,
    }
    const refusing = !allowed && !d.allowed
    if (!binding || (refusing && binding.allowed) || (refusing === !binding.allowed && d.remaining < binding.remaining)) binding = d
  })
  return { allowed, binding: binding! }
}
