// Deployment health and key-pool rounds shared by two instances on one Redis (two connections,
// one key prefix, as two gateways of a cluster): a rest one instance starts stops the other
// within a second; failure counts add up across instances; pool positions alternate. Health is
// checked both ways an instance learns of the others' writes: reading every 250 ms, and reading
// when the change bus says another wrote (its own reads every 5 s could not pass the checks).
import { afterEach, describe, expect, test } from 'bun:test'
import { Subscribers, type Bus } from '../../src/cluster/bus.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/config/providers.ts'
import { createLogger } from '../../src/http/log.ts'
import { RedisHealth } from '../../src/routing/redis-health.ts'
import { RedisPoolPosition } from '../../src/routing/redis-pool-position.ts'
import { freePort, freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('error', () => {})
const K = 'openai-a/gpt-4o-mini'
let open: { close(): void }[] = []

afterEach(() => {
  for (const o of open) o.close()
  open = []
})

function redisAt(url: string, prefix: string): SharedRedis {
  const r = new SharedRedis({ url, onError: 'deny', timeoutMs: 2_000, prefix }, log)
  open.push(r)
  return r
}

/** A change bus between the instances of one test, as Redis pub/sub would carry it; `gap()` as after a reconnect. */
function testBus(): Bus & { gap(): void } {
  const subs = new Subscribers()
  return {
    kind: 'test',
    publish: async (topic, payload) => queueMicrotask(() => subs.deliver(topic, payload)),
    subscribe: (topic, handler) => subs.add(topic, handler),
    gap: () => subs.gap(),
    close() {},
  }
}

/** Two instances' health on one prefix (with `bus`: learning of each other's writes on it); their connections. */
function pairOn(settings: Partial<RoutingSettings>, bus?: Bus): { hs: [RedisHealth, RedisHealth]; redis: [SharedRedis, SharedRedis] } {
  const prefix = freshPrefix()
  const s = { ...DEFAULT_ROUTING, ...settings }
  const redis = [0, 1].map(() => redisAt(TEST_REDIS_URL!, prefix)) as [SharedRedis, SharedRedis]
  const hs = redis.map((r) => new RedisHealth(r, s, log, { bus })) as [RedisHealth, RedisHealth]
  open.push(...hs)
  return { hs, redis }
}

/** How long until `cond` holds (polled every 10 ms), failing after `limit` ms. */
async function within(limit: number, cond: () => boolean): Promise<number> {
  const start = performance.now()
  while (!cond()) {
    if (performance.now() - start > limit) throw new Error(`not within ${limit} ms`)
    await Bun.sleep(10)
  }
  return performance.now() - start
}

for (const mode of ['read every 250 ms', 'read when the bus says']) {
  describe.skipIf(!!skip)(`deployment health on a shared Redis, ${mode}`, () => {
    const pair = (settings: Partial<RoutingSettings> = {}) => pairOn(settings, mode === 'read every 250 ms' ? undefined : testBus()).hs

    test('after one instance sees failures_to_cool failures, the other stops sending within a second', async () => {
      const [a, b] = pair({ failuresToCool: 3, cooldownMs: 30_000 })
      expect(b.maySend(K)).toBe(true)
      for (let i = 0; i < 3; i++) a.failed(K)
      // the instance that saw them stops at once, synchronously
      expect(a.maySend(K)).toBe(false)
      const took = await within(1_000, () => !b.maySend(K))
      expect(took).toBeLessThan(1_000)
      expect(b.state(K).kind).toBe('cooling')
      const bUntil = (b.state(K) as { until: number }).until
      expect(Math.abs(bUntil - (Date.now() + 30_000))).toBeLessThan(1_500)
      expect(b.snapshot([K])[0]!.consecutiveFailures).toBe(3)
    })

    test('failures in a row add up across instances; a success on either starts the count again', async () => {
      const [a, b] = pair({ failuresToCool: 3, cooldownMs: 30_000 })
      a.failed(K)
      await within(1_000, () => b.snapshot([K])[0]!.consecutiveFailures === 1)
      b.failed(K)
      await within(1_000, () => a.snapshot([K])[0]!.consecutiveFailures === 2)
      b.succeeded(K)
      await within(1_000, () => a.snapshot([K])[0]!.consecutiveFailures === 0)
      a.failed(K)
      b.failed(K)
      await Bun.sleep(300)
      expect(a.maySend(K)).toBe(true)
      expect(b.maySend(K)).toBe(true)
      // the third in a row, on the instance that had seen only one of them
      a.failed(K)
      await within(1_000, () => a.state(K).kind === 'cooling' && b.state(K).kind === 'cooling')
    })

    test('a 429 with Retry-After on one instance rests the deployment on both for that long', async () => {
      const [a, b] = pair({ failuresToCool: 3, cooldownMs: 30_000 })
      a.failed(K, { retryAfterMs: 5_000 })
      expect(a.maySend(K)).toBe(false)
      await within(1_000, () => !b.maySend(K))
      const until = (b.state(K) as { until: number }).until
      expect(Math.abs(until - (Date.now() + 5_000))).toBeLessThan(1_200)
    })

    test('after the rest each instance lets one probe through; a failed probe rests it again everywhere', async () => {
      const [a, b] = pair({ failuresToCool: 2, cooldownMs: 700 })
      a.failed(K)
      a.failed(K)
      await within(1_000, () => !b.maySend(K))
      await within(2_000, () => a.state(K).kind === 'half-open' && b.state(K).kind === 'half-open')
      expect(b.maySend(K)).toBe(true)
      expect(b.maySend(K)).toBe(false)
      b.failed(K)
      expect(b.state(K).kind).toBe('cooling')
      await within(1_000, () => a.state(K).kind === 'cooling')
      // the next rest ends; a's probe succeeds: a is ok, b's count is cleared and b probes on its own
      await within(2_000, () => a.state(K).kind === 'half-open')
      expect(a.maySend(K)).toBe(true)
      a.succeeded(K, 50)
      expect(a.state(K).kind).toBe('ok')
      await within(1_000, () => b.snapshot([K])[0]!.consecutiveFailures === 0)
      await within(1_000, () => b.state(K).kind === 'half-open')
      expect(b.maySend(K)).toBe(true)
      b.succeeded(K)
      expect(b.maySend(K)).toBe(true)
    })
  })
}

describe.skipIf(!!skip)('deployment health on a shared Redis and a change bus', () => {
  /** Counts the health reads `r` sends (its script calls). */
  function reads(r: SharedRedis): () => number {
    let n = 0
    const evalOf = r.eval.bind(r)
    r.eval = (...a) => (n++, evalOf(...a))
    return () => n
  }

  test('a quiet cluster does not read; a write elsewhere is read at once, and again after a gap in the bus', async () => {
    const bus = testBus()
    const { hs: [a, b], redis } = pairOn({ failuresToCool: 3, cooldownMs: 30_000 }, bus)
    await Bun.sleep(50)
    const bReads = reads(redis[1])
    // read every 250 ms, this would be four reads
    await Bun.sleep(1_000)
    expect(bReads()).toBe(0)
    for (let i = 0; i < 3; i++) a.failed(K)
    expect(await within(1_000, () => !b.maySend(K))).toBeLessThan(250)
    // three words, read at once and once more 250 ms on (a write may have landed during the first)
    await Bun.sleep(600)
    const after = bReads()
    expect(after).toBeGreaterThanOrEqual(1)
    expect(after).toBeLessThanOrEqual(2)
    // what was written without a word on the bus (its message lost) is read after the gap
    await redis[0].send('HSET', [redis[0].settings.prefix + 'health:failures', 'openai-b/gpt-4o', '2'])
    await Bun.sleep(300)
    expect(b.snapshot(['openai-b/gpt-4o'])[0]!.consecutiveFailures).toBe(0)
    bus.gap()
    await within(1_000, () => b.snapshot(['openai-b/gpt-4o'])[0]!.consecutiveFailures === 2)
    expect(bReads()).toBeGreaterThan(after)
  })

  test('many writes in a burst are read at most every 250 ms, and the last of them is read', async () => {
    const { hs: [a, b], redis } = pairOn({ failuresToCool: 1_000, cooldownMs: 30_000 }, testBus())
    await Bun.sleep(300)
    const bReads = reads(redis[1])
    const t0 = performance.now()
    for (let i = 0; i < 40; i++) {
      a.failed(K)
      await Bun.sleep(10)
    }
    await within(1_500, () => b.snapshot([K])[0]!.consecutiveFailures === 40)
    const ms = performance.now() - t0
    expect(bReads()).toBeLessThanOrEqual(Math.ceil(ms / 250) + 1)
    expect(bReads()).toBeGreaterThanOrEqual(2)
  })
})

describe.skipIf(!!skip)('key-pool rounds on a shared Redis', () => {
  test('the shared pool position alternates across two instances', async () => {
    const prefix = freshPrefix()
    const a = new RedisPoolPosition(redisAt(TEST_REDIS_URL!, prefix))
    const b = new RedisPoolPosition(redisAt(TEST_REDIS_URL!, prefix))
    // each instance learns the round from its first answer
    a.next('openai-a', 2)
    await Bun.sleep(30)
    b.next('openai-a', 2)
    await Bun.sleep(30)
    const seen: number[] = []
    for (let i = 0; i < 10; i++) {
      seen.push((i % 2 === 0 ? a : b).next('openai-a', 2))
      await Bun.sleep(30)
    }
    expect(seen).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1].map((x) => (x + seen[0]!) % 2))
    // one instance alone, calls faster than Redis answers: still alternating
    const burst = Array.from({ length: 6 }, () => a.next('openai-b', 2))
    expect(burst).toEqual([0, 1, 0, 1, 0, 1])
    // a pool of three shared by both, in turns
    const three: number[] = []
    for (let i = 0; i < 6; i++) {
      three.push((i % 2 === 0 ? a : b).next('claude', 3))
      await Bun.sleep(30)
    }
    expect(new Set(three.slice(2)).size).toBe(3)
  })
})

describe('with Redis unreachable', () => {
  test('the hot path goes on synchronously on the instance view; pool positions still go round', async () => {
    const redis = redisAt(`redis://127.0.0.1:${await freePort()}`, freshPrefix())
    const h = new RedisHealth(redis, { ...DEFAULT_ROUTING, failuresToCool: 2 }, log)
    open.push(h)
    expect(h.maySend(K)).toBe(true)
    h.failed(K)
    h.failed(K)
    expect(h.maySend(K)).toBe(false)
    h.succeeded('b/x', 10)
    await h.refresh()
    await Bun.sleep(50)
    expect(h.maySend(K)).toBe(false)
    expect(h.maySend('b/x')).toBe(true)
    const p = new RedisPoolPosition(redis)
    const seen = [p.next('x', 2)]
    await Bun.sleep(20)
    seen.push(p.next('x', 2))
    await Bun.sleep(20)
    seen.push(p.next('x', 2))
    expect(seen).toEqual([0, 1, 0])
  })
})

describe.skipIf(!!skip)('a rest left in Redis past the longest the gateway sets', () => {
  // Written by an instance from before a Retry-After's rest was bounded (a hint of 1e9 seconds),
  // the rest outlived every restart: the instances read it back from Redis and kept the
  // deployment out of the rotation for good, in a cluster where a single gateway's restart ended it.
  test('is read as an hour at most, and Redis is told, so that no instance keeps it longer', async () => {
    const prefix = freshPrefix()
    const r = redisAt(TEST_REDIS_URL!, prefix)
    await r.send('ZADD', [`${prefix}health:cooling`, String(Date.now() + 1e12), K])
    const h = new RedisHealth(r, { ...DEFAULT_ROUTING }, log)
    open.push(h)
    await within(1_000, () => h.state(K).kind === 'cooling')
    const s = h.state(K)
    expect((s as { until: number }).until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000)
    expect(Number(await r.send('ZSCORE', [`${prefix}health:cooling`, K]))).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000)
  })

  test('a failure answered with the long rest Redis holds adopts an hour at most, and a later read does not push it on', async () => {
    const prefix = freshPrefix()
    const r = redisAt(TEST_REDIS_URL!, prefix)
    const h = new RedisHealth(r, { ...DEFAULT_ROUTING, failuresToCool: 0 }, log)
    open.push(h)
    await h.refresh()
    await r.send('ZADD', [`${prefix}health:cooling`, String(Date.now() + 1e12), K])
    h.failed(K)
    await within(1_000, () => h.state(K).kind === 'cooling')
    const first = (h.state(K) as { until: number }).until
    expect(first).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000)
    await Bun.sleep(20)
    await h.refresh()
    await Bun.sleep(20)
    await h.refresh()
    expect((h.state(K) as { until: number }).until - first).toBeLessThan(1_000)
  })
})
