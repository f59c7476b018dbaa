// A busy key far from its limits and balance gets its next request's slot and hold taken in
// Redis while the current request is served, so that the next request does not wait for a
// round trip. These are real takes and holds: what Redis counts is always what was served plus
// what waits here to be used, nothing is admitted past a limit or a balance, near either end
// every request asks Redis itself, and what is not used goes back.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Limit } from '../../src/auth/ratelimit.ts'
import { RedisRateLimiter } from '../../src/auth/redis-ratelimit.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { STALE_MS } from '../../src/cluster/ahead.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('silent')
const opened: SharedRedis[] = []

/** A client on a prefix of its own that takes ahead, with the parts it sends counted by kind. */
function client(takeAhead = true) {
  const prefix = freshPrefix()
  const redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 2000, prefix, takeAhead }, log)
  opened.push(redis)
  const parts = { t: 0, r: 0 }
  const part = redis.part.bind(redis)
  redis.part = (s, p) => {
    if (p.kind === 't') parts.t++
    else parts.r += p.weight
    return part(s, p)
  }
  return { redis, prefix, parts, limiter: new RedisRateLimiter(redis, log), ledger: new RedisLedger(redis, log) }
}

const ipLimits = (limit: number): Limit[] => [{ bucket: 'ip:10.9.8.7', limit, windowMs: 60_000, scope: 'ip' }]
const keyLimits = (id: string, limit: number): Limit[] => [
  { bucket: 'k:' + id, limit, windowMs: 60_000, scope: 'key' },
  { bucket: 'kb:' + id, limit: 100_000, windowMs: 1_000, scope: 'key' },
]

/**
 * Taking ahead turns on for two requests within BUSY_MS and gives back what waits past STALE_MS
 * (tens of ms): a loaded machine (CI's two cores running the whole suite) can stretch one Redis
 * round trip past either, and a run then sees a quiet key. Such a run is made again on fresh
 * names; a fault of the code fails every one.
 */
const TIMING = { retry: 2 }

async function until(what: () => boolean, ms = 2_000) {
  const end = Date.now() + ms
  while (!what() && Date.now() < end) await Bun.sleep(1)
  expect(what()).toBe(true)
}

async function zcard(redis: SharedRedis, key: string): Promise<number> {
  return Number(await redis.send('ZCARD', [key]))
}

describe.skipIf(!!skip)('taken ahead', () => {
  afterAll(() => {
    for (const r of opened) r.close()
  })

  test('a busy combination of limits: the next request finds its slot taken, and Redis counts exactly what was served and what waits', async () => {
    const { redis, prefix, parts, limiter } = client()
    const id = 'busy-' + crypto.randomUUID().slice(0, 8)
    const take = () => limiter.takeBoth(ipLimits(1_000_000), keyLimits(id, 1_000_000))
    await take() // quiet so far: nothing taken ahead
    expect(parts.t).toBe(1)
    await take() // busy now: served by Redis, and the next one's slot asked for
    await until(() => limiter.ahead!.size === 1)
    expect(parts.t).toBe(3)
    // served from what waited: its own take never goes to Redis, only the one after it
    const [ip, key] = await take()
    expect(ip.allowed && key!.allowed).toBe(true)
    expect(limiter.ahead!.used).toBe(1)
    expect(parts.t).toBe(4)
    await until(() => limiter.ahead!.size === 1)
    // three served and one waiting: four in every window
    for (const b of ['ip:10.9.8.7', 'k:' + id, 'kb:' + id]) expect(await zcard(redis, prefix + 'rl:' + b)).toBe(4)
    // not used within its time: it leaves the windows
    await Bun.sleep(STALE_MS * 3)
    expect(limiter.ahead!.size).toBe(0)
    for (const b of ['ip:10.9.8.7', 'k:' + id, 'kb:' + id]) expect(await zcard(redis, prefix + 'rl:' + b)).toBe(3)
  }, TIMING)

  test('near a limit every request asks Redis: exactly the limit is served however busy, and nothing stays taken', async () => {
    const { redis, prefix, parts, limiter } = client()
    const id = 'edge-' + crypto.randomUUID().slice(0, 8)
    let allowed = 0
    const take = async () => {
      const [ip, key] = await limiter.takeBoth(ipLimits(1_000_000), keyLimits(id, 150))
      if (ip.allowed && key!.allowed) allowed++
    }
    // the first half of the limit is taken ahead, request by request
    for (let i = 0; i < 100; i++) await take()
    await Bun.sleep(5)
    expect(limiter.ahead!.used).toBeGreaterThan(10)
    // past it, each request is one take of its own: none ahead
    const [before, used] = [parts.t, limiter.ahead!.used]
    for (let i = 0; i < 100; i++) await take()
    expect(parts.t - before).toBe(100)
    expect(limiter.ahead!.used).toBe(used)
    expect(allowed).toBe(150)
    await Bun.sleep(STALE_MS * 3)
    expect(limiter.ahead!.size).toBe(0)
    expect(await zcard(redis, prefix + 'rl:k:' + id)).toBe(150)
  }, TIMING)

  test('a busy funded key: the next admission finds its hold made, and the balance counts exactly what was held and spent', async () => {
    const { parts, ledger } = client()
    const key = { id: 'funded-' + crypto.randomUUID().slice(0, 8), credits: 100, spent: 0 }
    const first = await ledger.reserve(key, 0.01)
    const second = await ledger.reserve(key, 0.01)
    expect(first.admitted && second.admitted).toBe(true)
    await until(() => ledger.ahead!.size === 1)
    expect(parts.r).toBe(3)
    // a worst case the hold made ahead covers: served from it, one more made ahead in its place
    const third = await ledger.reserve(key, 0.008)
    expect(third.admitted).toBe(true)
    expect(ledger.ahead!.used).toBe(1)
    await until(() => ledger.ahead!.size === 1)
    expect(parts.r).toBe(4)
    // a larger one is not covered: it asks Redis
    const fourth = await ledger.reserve(key, 0.5)
    expect(fourth.admitted).toBe(true)
    expect(parts.r).toBe(5)
    const held = (await ledger.figures(key.id)).reserved
    // the four requests' holds (the third holds what was made for it: 0.0125) and the one waiting
    expect(held).toBeCloseTo(0.01 + 0.01 + 0.0125 + 0.5 + 0.0125, 9)
    for (const h of [first, second, third, fourth]) ledger.settle((h as { reservationId: string }).reservationId, key.id, 0.001)
    await until(() => ledger.open === 0)
    await Bun.sleep(STALE_MS * 3)
    await until(() => ledger.open === 0)
    expect(ledger.ahead!.size).toBe(0)
    expect(await ledger.figures(key.id)).toEqual({ spent: 0.004, reserved: 0 })
  }, TIMING)

  test('near the end of a balance every admission asks Redis: it admits what it would without taking ahead', async () => {
    const one = client()
    const other = client(false)
    const key = { id: 'thin-' + crypto.randomUUID().slice(0, 8), credits: 0.5, spent: 0 }
    const admitted = async (ledger: RedisLedger) => {
      let n = 0
      for (let i = 0; i < 80; i++) if ((await ledger.reserve(key, 0.01)).admitted) n++
      return n
    }
    const [a, b] = [await admitted(one.ledger), await admitted(other.ledger)]
    expect(a).toBe(b)
    expect(a).toBe(50)
    // one admission each, none made ahead
    expect(one.parts.r).toBe(80)
    expect(one.ledger.ahead!.used).toBe(0)
    expect(one.ledger.ahead!.size).toBe(0)
    expect((await one.ledger.figures(key.id)).reserved).toBeCloseTo(0.5, 9)
  }, TIMING)

  test('a stop ends the holds made ahead', async () => {
    const { ledger } = client()
    const key = { id: 'stop-' + crypto.randomUUID().slice(0, 8), credits: 100, spent: 0 }
    const held = [await ledger.reserve(key, 0.01), await ledger.reserve(key, 0.01)]
    await until(() => ledger.ahead!.size === 1)
    for (const h of held) ledger.settle((h as { reservationId: string }).reservationId, key.id, 0.002)
    await ledger.stop()
    expect(await ledger.figures(key.id)).toEqual({ spent: 0.004, reserved: 0 })
  }, TIMING)

  test('a busy funded key at a steady rate: its holds and settlements ride on its limits\' calls, one call for many requests', async () => {
    const { redis, limiter, ledger } = client()
    // every call to Redis, whatever goes in it (a turn's parts go in one eval too)
    let calls = 0
    const evalOne = redis.eval.bind(redis)
    redis.eval = (...a: Parameters<typeof redis.eval>) => (calls++, evalOne(...a))
    const key = { id: 'steady-' + crypto.randomUUID().slice(0, 8), credits: 1_000, spent: 0 }
    const n = 600
    let served = 0
    for (let i = 0; i < n; i++) {
      const [ip, k] = await limiter.takeBoth(ipLimits(1_000_000), keyLimits(key.id, 1_000_000))
      const hold = await ledger.reserve(key, 0.01)
      if (ip.allowed && k!.allowed && hold.admitted) served++
      ledger.settle((hold as { reservationId: string }).reservationId, key.id, 0.002)
      await Bun.sleep(1)
    }
    expect(served).toBe(n)
    // about one call for every dozen requests at one a ms, the first few dozen's ramp included
    // (a call a request, when each refill and settlement went on its own); a slower machine spaces
    // the requests more and keeps fewer ready, so the bound is loose
    expect(calls / n).toBeLessThan(0.5)
    await ledger.stop()
    await until(() => ledger.open === 0)
    const f = await ledger.figures(key.id)
    expect(f.spent).toBeCloseTo(n * 0.002, 9)
    expect(f.reserved).toBe(0)
  }, TIMING)

  test('an unlimited key\'s cost waits up to a second, or goes with its first admission, or with a stop', async () => {
    const { redis, ledger } = client()
    const key = { id: 'unlimited-' + crypto.randomUUID().slice(0, 8), credits: 100, spent: 0 }
    // funded once: Redis keeps its spent from then on
    const first = (await ledger.reserve(key, 0.01)) as { reservationId: string }
    ledger.settle(first.reservationId, key.id, 0.001)
    await until(() => ledger.open === 0)
    // unlimited now: its costs wait
    ledger.settle(undefined, key.id, 0.5, true)
    await Bun.sleep(100)
    expect((await ledger.figures(key.id)).spent).toBeCloseTo(0.001, 9)
    // funded again: its first admission takes them along, and decides with them counted
    expect((await ledger.reserve({ ...key, credits: 0.5 }, 0.01)).admitted).toBe(false)
    expect((await ledger.figures(key.id)).spent).toBeCloseTo(0.501, 9)
    // a stop sends what waits
    ledger.settle(undefined, key.id, 0.125, true)
    await ledger.stop()
    expect((await ledger.figures(key.id)).spent).toBeCloseTo(0.626, 9)
    // with no admission and no stop, within the second (another instance, its own wait)
    const later = new RedisLedger(redis, log)
    const at = performance.now()
    later.settle(undefined, key.id, 0.25, true)
    await until(() => later.open === 0, 3_000)
    expect(performance.now() - at).toBeGreaterThan(500)
    expect((await later.figures(key.id)).spent).toBeCloseTo(0.876, 9)
    await later.stop()
  }, TIMING)

  test('off: every request asks Redis, busy or not', async () => {
    const { parts, limiter, ledger } = client(false)
    const key = { id: 'off-' + crypto.randomUUID().slice(0, 8), credits: 100, spent: 0 }
    for (let i = 0; i < 5; i++) {
      await limiter.takeBoth(ipLimits(1_000_000), keyLimits(key.id, 1_000_000))
      await ledger.reserve(key, 0.01)
    }
    await Bun.sleep(10)
    expect(parts).toEqual({ t: 5, r: 5 })
    expect(limiter.ahead).toBeUndefined()
  }, TIMING)
})
