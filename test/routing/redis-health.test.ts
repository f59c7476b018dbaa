// Deployment health and key-pool rounds shared by two instances on one Redis (two connections,
// one key prefix, as two gateways of a cluster): a rest one instance starts stops the other
// within a second; failure counts add up across instances; pool positions alternate.
import { afterEach, describe, expect, test } from 'bun:test'
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

/** Two instances' health on one prefix. */
function pair(settings: Partial<RoutingSettings> = {}): [RedisHealth, RedisHealth] {
  const prefix = freshPrefix()
  const s = { ...DEFAULT_ROUTING, ...settings }
  const hs = [0, 1].map(() => new RedisHealth(redisAt(TEST_REDIS_URL!, prefix), s, log))
  open.push(...hs)
  return hs as [RedisHealth, RedisHealth]
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

describe.skipIf(!!skip)('deployment health on a shared Redis', () => {
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
