// The shared limiter's one-round-trip take of an address's limit and a key's: the same
// decisions as the two takes it replaces (the address first, the key only when the address
// allows), compared with the in-memory limiter on the same sequence.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RateLimiter, type Limit } from '../../src/auth/ratelimit.ts'
import { RedisRateLimiter } from '../../src/auth/redis-ratelimit.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('error')
let redis: SharedRedis
const opened: SharedRedis[] = []
/** A limiter on a prefix of its own, so that each test starts with empty windows. */
const limiter = () => {
  const r = new SharedRedis({ ...redis.settings, prefix: freshPrefix() }, log)
  opened.push(r)
  return new RedisRateLimiter(r, log)
}

const ip = (limit: number): Limit[] => [{ bucket: 'ip:10.0.0.1', limit, windowMs: 60_000, scope: 'ip' }]
const key = (limit: number, burst = 1000): Limit[] => [
  { bucket: 'k:key1', limit, windowMs: 60_000, scope: 'key' },
  { bucket: 'kb:key1', limit: burst, windowMs: 1_000, scope: 'key' },
]

/** What two takes decide, on the memory limiter: the key's only when the address allowed. */
function sequential(m: RateLimiter, a: Limit[], b: Limit[]) {
  const first = m.take(a)
  return [first, first.allowed ? m.take(b) : undefined] as const
}

const brief = (o: { allowed: boolean; binding: { remaining: number; limit: number; scope: string } } | undefined) => o && { allowed: o.allowed, remaining: o.binding.remaining, limit: o.binding.limit, scope: o.binding.scope }

describe.skipIf(!!skip)('shared rate limits: the address and the key in one round trip', () => {
  beforeAll(() => {
    redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix: freshPrefix() }, log)
  })
  afterAll(() => {
    for (const r of [redis, ...opened]) r.close()
  })

  test('the same answers as two takes, through the address limit, the key limit and the burst', async () => {
    const shared = limiter()
    const memory = new RateLimiter()
    // the key's limits bind first (4 a minute), then the address's (6 a minute) with the key still refused
    for (let i = 0; i < 9; i++) {
      const [a, b] = await shared.takeBoth(ip(6), key(4))
      const [x, y] = sequential(memory, ip(6), key(4))
      expect([brief(a), brief(b)]).toEqual([brief(x), brief(y)])
    }
  })

  test('the same answers when the takes go in one call (a bucket carried from take to take)', async () => {
    const shared = limiter()
    const memory = new RateLimiter()
    const together = await Promise.all(Array.from({ length: 12 }, () => shared.takeBoth(ip(8), key(5, 3))))
    const one = Array.from({ length: 12 }, () => sequential(memory, ip(8), key(5, 3)))
    expect(together.map(([a, b]) => [brief(a), brief(b)])).toEqual(one.map(([a, b]) => [brief(a), brief(b)]))
  })

  test('an address refused: the key is not counted; a key refused: the address is', async () => {
    const shared = limiter()
    // the key refuses its third: the address still counts it (as the separate takes did)
    for (let i = 0; i < 3; i++) await shared.takeBoth(ip(100), key(2))
    const [a] = await shared.takeBoth(ip(100), key(2))
    expect(a.binding.remaining).toBe(100 - 4)
    // the address refuses: nothing is taken from a key that would have allowed it
    const [refused, none] = await shared.takeBoth(ip(4), key(50, 50))
    expect(refused.allowed).toBe(false)
    expect(none).toBeUndefined()
    const keyAlone = await shared.take([{ bucket: 'k:key2', limit: 5, windowMs: 60_000, scope: 'key' }])
    expect(keyAlone.binding.remaining).toBe(4)
  })

  test('takes asked in one turn go together and are decided in order: exactly the limit passes, in the order asked', async () => {
    const shared = limiter()
    const answers = await Promise.all(Array.from({ length: 40 }, () => shared.takeBoth(ip(1000), key(25))))
    const allowed = answers.map(([, k]) => k!.allowed)
    expect(allowed.filter(Boolean).length).toBe(25)
    expect(allowed.slice(0, 25).every(Boolean)).toBe(true)
    expect(answers.map(([a]) => a.binding.remaining)).toEqual(Array.from({ length: 40 }, (_, i) => 1000 - 1 - i))
  })

  test("a bucket Redis cannot read fails its own request only, not the others' in the same call", async () => {
    const r = new SharedRedis({ ...redis.settings, prefix: freshPrefix() }, log)
    opened.push(r)
    const shared = new RedisRateLimiter(r, log)
    await r.send('SET', [`${r.settings.prefix}rl:k:broken`, 'not a sorted set'])
    const broken: Limit[] = [{ bucket: 'k:broken', limit: 10, windowMs: 60_000, scope: 'key' }]
    const [a, b, c] = await Promise.allSettled([shared.takeBoth(ip(10), key(10)), shared.takeBoth(ip(10), broken), shared.takeBoth(ip(10), key(10))])
    expect(a.status).toBe('fulfilled')
    expect(c.status).toBe('fulfilled')
    expect(b.status).toBe('rejected')
    expect(String((b as PromiseRejectedResult).reason)).toContain('WRONGTYPE')
  })
})
