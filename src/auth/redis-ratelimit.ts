// Rate limits shared by every instance: the same exact sliding log as the memory store, kept
// as one Redis sorted set per bucket (member: a unique id per request, score: its time). One
// Lua script decides a whole take atomically (every limit allows it, or none is counted) and
// reads the clock from Redis `TIME`, so instances with drifting clocks still share one
// window. N instances together admit exactly the limit. A request's address limit and its
// key's limits go in one take (takeBoth), and the takes of one turn of the loop in one script
// call: at most one round trip a request, not two.
//
// Redis unreachable: with `redis.on_error: deny` the take throws RedisUnavailable (the
// pipeline answers 503); with `allow` it is decided by this instance's own memory limiter,
// and a log line says so once a minute while it lasts.
import type { Logger } from '../http/log.ts'
import { asUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import { RateLimiter, type Decision, type Limit, type Outcome, type RateLimitBackend } from './ratelimit.ts'

// Every take asked for in one turn of the loop goes in one script call, decided in the order
// asked, exactly as separate calls would decide them (under load, one round trip for dozens
// of requests). Per take, ARGV holds: a member unique to the request, how many KEYS are its
// own, how many of those form its first group, then each limit's count and window. The first
// group is taken all-or-nothing; only when it allows the request, the rest is, all-or-nothing
// too (an address's limit, then a key's: the same answers as two takes). Returns per take
// { now, then per group: allowed, then per limit: remaining, reset } (a group not reached is
// left out), or the error Redis gave for one of its buckets (a take's error fails it alone).
// A bucket several takes share (one key's requests) is read once and written once a call:
// its count and oldest time are carried in the script between takes (one TIME for all).
const TAKE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seen, count, oldest, window, added, broken = {}, {}, {}, {}, {}, {}
local function load(key, w)
  if seen[key] then return broken[key] end
  seen[key] = true
  local r = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now - w)
  if type(r) == 'table' and r.err then
    broken[key] = r.err
    return r.err
  end
  window[key] = w
  count[key] = redis.call('ZCARD', key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #first > 0 then oldest[key] = tonumber(first[2]) end
  added[key] = {}
  return nil
end
local answers = {}
local k, a = 0, 0
while a < #ARGV do
  local member, n, split = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local out = { now }
  local failed = nil
  local function group(from, to)
    local allowed = 1
    for i = from, to do
      local key = KEYS[k + i]
      failed = load(key, tonumber(ARGV[a + 3 + 2 * i]))
      if failed then return 0 end
      if count[key] >= tonumber(ARGV[a + 2 + 2 * i]) then allowed = 0 end
    end
    out[#out + 1] = allowed
    for i = from, to do
      local key = KEYS[k + i]
      local w = tonumber(ARGV[a + 3 + 2 * i])
      if allowed == 1 then
        count[key] = count[key] + 1
        local add = added[key]
        add[#add + 1] = now
        add[#add + 1] = member
        if not oldest[key] then oldest[key] = now end
      end
      out[#out + 1] = tonumber(ARGV[a + 2 + 2 * i]) - count[key]
      out[#out + 1] = (oldest[key] or now) + w
    end
    return allowed
  end
  if group(1, split) == 1 and split < n then group(split + 1, n) end
  answers[#answers + 1] = failed or out
  k = k + n
  a = a + 3 + 2 * n
end
for key, add in pairs(added) do
  if #add > 0 then
    redis.call('ZADD', key, unpack(add))
    redis.call('PEXPIRE', key, window[key])
  end
end
return answers
`)

/** One take waiting for this turn's call. */
interface Pending {
  keys: string[]
  /** Its part of ARGV. */
  args: string[]
  resolve(raw: number[]): void
  reject(e: unknown): void
}

/** Takes in one script call at most: a longer script would hold up every other client of Redis. */
const MAX_BATCH = 256

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
    const args: string[] = [this.tag + (this.seq++).toString(36), String(limits.length), String(split)]
    const keys: string[] = []
    for (const l of limits) {
      keys.push(this.prefix + l.bucket)
      args.push(String(l.limit), String(l.windowMs))
    }
    // its resolvers, with no executor closure a take
    const answer = Promise.withResolvers<number[]>()
    this.pending.push({ keys, args, resolve: answer.resolve, reject: answer.reject })
    if (this.pending.length === 1) this.redis.soon(this.send)
    try {
      return await answer.promise
    } catch (e) {
      const down = asUnavailable(e, this.log)
      if (this.redis.settings.onError !== 'allow') throw down
      this.redis.degraded()
      return undefined
    }
  }

  private pending: Pending[] = []

  /** This turn's takes, in one call (or a few, past MAX_BATCH). */
  private readonly send = () => {
    const all = this.pending
    this.pending = []
    for (let i = 0; i < all.length; i += MAX_BATCH) this.call(all.slice(i, i + MAX_BATCH))
  }

  private call(batch: Pending[]) {
    const keys: string[] = []
    const args: string[] = []
    for (const p of batch) {
      for (const k of p.keys) keys.push(k)
      for (const a of p.args) args.push(a)
    }
    this.redis.eval(TAKE, keys, args).then(
      (raw) => {
        const answers = raw as (number[] | string)[]
        for (let i = 0; i < batch.length; i++) {
          const r = answers[i]
          // Redis's error for this take's bucket, as a call of its own would have had it
          if (Array.isArray(r)) batch[i]!.resolve(r)
          else batch[i]!.reject(new Error(String(r)))
        }
      },
      (e) => {
        for (const p of batch) p.reject(e)
      },
    )
  }
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
      scope: l.scope,
    }
    const refusing = !allowed && !d.allowed
    if (!binding || (refusing && binding.allowed) || (refusing === !binding.allowed && d.remaining < binding.remaining)) binding = d
  }
  return { allowed, binding: binding! }
}
