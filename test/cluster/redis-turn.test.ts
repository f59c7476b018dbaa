// A turn's rate-limit takes and credit admissions go to Redis as one script call: each is
// still answered as a call of its own would answer it, one Redis cannot read fails alone, and
// a turn past the call's bound goes in a few calls, decided in the order asked.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RateLimiter, type Limit } from '../../src/auth/ratelimit.ts'
import { RedisRateLimiter } from '../../src/auth/redis-ratelimit.ts'
import { MemoryLedger } from '../../src/billing/ledger.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { TURN } from '../../src/cluster/scripts.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('silent')
const opened: SharedRedis[] = []

/** A client on a prefix of its own, each script call it makes counted (its KEYS, and its ARGV in `argvs`). */
function counted() {
  const redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 2000, prefix: freshPrefix() }, log)
  opened.push(redis)
  const calls: string[][] = []
  const argvs: string[][] = []
  const eval_ = redis.eval.bind(redis)
  redis.eval = (...args: Parameters<SharedRedis['eval']>) => (calls.push(args[1]), argvs.push(args[2]), eval_(...args))
  return { redis, calls, argvs, limiter: new RedisRateLimiter(redis, log), ledger: new RedisLedger(redis, log) }
}

/** The kinds of a call's parts, in order (each part: kind, its KEYS count, its ARGV count, its ARGV). */
function kindsOf(argv: string[]): string[] {
  const kinds: string[] = []
  for (let a = 0; a < argv.length; a += 3 + Number(argv[a + 2])) kinds.push(argv[a]!)
  return kinds
}

const keyLimits = (id: string, limit: number): Limit[] => [
  { bucket: 'k:' + id, limit, windowMs: 60_000, scope: 'key' },
  { bucket: 'kb:' + id, limit: 1000, windowMs: 1_000, scope: 'key' },
]
const ipLimits = (limit: number): Limit[] => [{ bucket: 'ip:10.1.2.3', limit, windowMs: 60_000, scope: 'ip' }]

describe.skipIf(!!skip)("one script call a turn for the limits and the credits", () => {
  afterAll(() => {
    for (const r of opened) r.close()
  })

  test('takes and admissions of one turn: one call, each answered as alone, in the order asked', async () => {
    const { calls, limiter, ledger } = counted()
    const memLimits = new RateLimiter()
    const memLedger = new MemoryLedger()
    const funded = { id: 'turn-' + crypto.randomUUID().slice(0, 8), credits: 0.01, spent: 0.002 }
    // ten requests of one key: each its limits and its admission, asked in the same turn
    const takes = Array.from({ length: 10 }, () => limiter.takeBoth(ipLimits(100), keyLimits(funded.id, 6)))
    const holds = Array.from({ length: 10 }, () => ledger.reserve(funded, 0.002))
    const [taken, held] = await Promise.all([Promise.all(takes), Promise.all(holds)])
    expect(calls.length).toBe(1)
    // both kinds in that one call
    expect(calls[0]!.some((k) => k.includes(':rl:k:'))).toBe(true)
    expect(calls[0]!.some((k) => k.includes(':cr:{'))).toBe(true)
    const alone = Array.from({ length: 10 }, () => {
      const a = memLimits.take(ipLimits(100))
      return a.allowed ? memLimits.take(keyLimits(funded.id, 6)).allowed : false
    })
    expect(taken.map(([, k]) => k!.allowed)).toEqual(alone)
    expect(taken.filter(([, k]) => k!.allowed).length).toBe(6)
    const memHolds = Array.from({ length: 10 }, () => memLedger.reserve(funded, 0.002))
    expect(held.map((h) => h.admitted)).toEqual(memHolds.map((h) => h.admitted))
    expect(held.filter((h) => h.admitted).length).toBe(4) // 0.008 left, 0.002 each, "> 0" before each
    expect((await ledger.figures(funded.id)).reserved).toBeCloseTo(0.008, 12)
  })

  test('a part Redis cannot read fails alone: a broken window, a broken credits hash, and their neighbours served', async () => {
    const { redis, calls, limiter, ledger } = counted()
    const p = redis.settings.prefix
    await redis.send('SET', [`${p}rl:k:broken`, 'not a sorted set'])
    await redis.send('SET', [`${p}cr:{broken}`, 'not a hash'])
    const before = calls.length
    const settled = await Promise.allSettled([
      limiter.takeBoth(ipLimits(100), keyLimits('fine', 10)),
      limiter.takeBoth(ipLimits(100), [{ bucket: 'k:broken', limit: 10, windowMs: 60_000, scope: 'key' }]),
      ledger.reserve({ id: 'broken', credits: 1, spent: 0 }, 0.1),
      ledger.reserve({ id: 'fine', credits: 1, spent: 0 }, 0.1),
      limiter.take(ipLimits(100)),
    ])
    expect(calls.length - before).toBe(1)
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled'])
    expect(String((settled[1] as PromiseRejectedResult).reason)).toContain('WRONGTYPE')
    expect(String((settled[2] as PromiseRejectedResult).reason)).toContain('WRONGTYPE')
    expect((settled[3] as PromiseFulfilledResult<{ admitted: boolean }>).value.admitted).toBe(true)
    // the address's window counted the three takes that reached it, in order
    expect((settled[4] as PromiseFulfilledResult<{ binding: { remaining: number } }>).value.binding.remaining).toBe(97)
    expect((await ledger.figures('fine')).reserved).toBeCloseTo(0.1, 12)
  })

  test('a turn past the bound goes in a few calls, still decided in the order asked', async () => {
    const { calls, limiter, ledger } = counted()
    const funded = { id: 'many-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    const takes = Array.from({ length: 300 }, () => limiter.takeBoth(ipLimits(1000), keyLimits('many', 280)))
    const holds = Array.from({ length: 300 }, () => ledger.reserve(funded, 0.004))
    const [taken, held] = await Promise.all([Promise.all(takes), Promise.all(holds)])
    expect(calls.length).toBeGreaterThan(1)
    expect(calls.length).toBeLessThanOrEqual(4)
    const allowed = taken.map(([, k]) => k!.allowed)
    expect(allowed).toEqual(Array.from({ length: 300 }, (_, i) => i < 280))
    // 1 USD at 0.004 each: the 250 first are held, no more
    const admitted = held.map((h) => h.admitted)
    expect(admitted).toEqual(Array.from({ length: 300 }, (_, i) => i < 250))
  })

  test("one key's takes of a turn go as one take and its repeats: a few arguments each, the same answers", async () => {
    const { calls, argvs, limiter } = counted()
    const id = 'rep-' + crypto.randomUUID().slice(0, 8)
    const other = 'oth-' + crypto.randomUUID().slice(0, 8)
    // a key's requests, another key's between them, and one of the first key's with a limit of its own
    const asked: [Limit[], Limit[]][] = [
      [ipLimits(100), keyLimits(id, 6)],
      [ipLimits(100), keyLimits(id, 6)],
      [ipLimits(100), keyLimits(id, 6)],
      [ipLimits(100), keyLimits(other, 6)],
      [ipLimits(100), keyLimits(id, 6)],
      [ipLimits(100), keyLimits(id, 6)],
      [ipLimits(100), keyLimits(id, 7)],
      ...Array.from({ length: 6 }, (): [Limit[], Limit[]] => [ipLimits(100), keyLimits(id, 7)]),
    ]
    const taken = await Promise.all(asked.map(([a, b]) => limiter.takeBoth(a, b)))
    expect(calls.length).toBe(1)
    // a repeat follows the last take sent whole when its windows and limits are the same
    expect(kindsOf(argvs[0]!)).toEqual(['t', 'T', 'T', 't', 't', 'T', 't', 'T', 'T', 'T', 'T', 'T', 'T'])
    expect(calls[0]!.length).toBe(4 * 3)
    // the same takes one a turn, on windows of their own: each a call of its own, every take whole
    const single = counted()
    const alone: Awaited<ReturnType<RedisRateLimiter['takeBoth']>>[] = []
    for (const [a, b] of asked) alone.push(await single.limiter.takeBoth(a, b))
    expect(single.argvs.every((argv) => kindsOf(argv).join() === 't')).toBe(true)
    const figures = (r: typeof alone) => r.map(([ip, key]) => [ip.allowed, ip.binding.remaining, key?.allowed, key?.binding.remaining])
    expect(figures(taken)).toEqual(figures(alone))
    // the first key's window holds 5 when its limit of 7 comes: two more, then none
    expect(taken.map(([, key]) => key!.allowed)).toEqual([...Array(8).fill(true), ...Array(5).fill(false)])
  })

  test('repeats of a take whose window Redis cannot read each fail alone, and a take after them is served', async () => {
    const { redis, argvs, limiter } = counted()
    await redis.send('SET', [`${redis.settings.prefix}rl:k:bad`, 'not a sorted set'])
    const bad: Limit[] = [{ bucket: 'k:bad', limit: 10, windowMs: 60_000, scope: 'key' }]
    const settled = await Promise.allSettled([
      limiter.takeBoth(ipLimits(100), bad),
      limiter.takeBoth(ipLimits(100), bad),
      limiter.takeBoth(ipLimits(100), bad),
      limiter.takeBoth(ipLimits(100), keyLimits('good', 10)),
    ])
    expect(kindsOf(argvs.at(-1)!)).toEqual(['t', 'T', 'T', 't'])
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled'])
    for (const s of settled.slice(0, 3)) expect(String((s as PromiseRejectedResult).reason)).toContain('WRONGTYPE')
  })

  test('a repeat with no take before it in the call is refused alone', async () => {
    const { redis } = counted()
    const answers = (await redis.eval(TURN, [`${redis.settings.prefix}rl:ip:x`], ['T', '0', '1', 'm1', 't', '1', '5', 'm2', '1', '1', '10', '60000'])) as unknown[]
    expect(String(answers[0])).toContain('repeat with no take before it')
    expect((answers[1] as number[])[1]).toBe(1)
  })
})
