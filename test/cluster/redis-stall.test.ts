// A Redis that stalls (SIGSTOP: not closed, just silent) still runs what was sent to it once it
// resumes. A request refused here for want of an answer must then leave nothing behind: no
// hold on its key's credit (which would count for 15 minutes) and no entry in its rate-limit
// windows (a key's minute would count requests never served).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { RedisRateLimiter } from '../../src/auth/redis-ratelimit.ts'
import type { Limit } from '../../src/auth/ratelimit.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, ownRedis, redisSkipReason, type OwnRedis } from '../helpers/redis.ts'

const skip = redisSkipReason() ?? (Bun.which('redis-server') ? undefined : 'redis-server is not installed: the Redis stall tests are skipped')
if (skip) console.warn(skip)

const log = createLogger('silent')
let own: OwnRedis
const opened: { close(): void }[] = []

/** A client with a short deadline on a prefix of its own, and a raw one to look with. */
function clients() {
  const redis = new SharedRedis({ url: own.url, onError: 'deny', timeoutMs: 300, prefix: freshPrefix() }, log)
  const raw = new RedisClient(own.url)
  opened.push(redis, raw)
  return { redis, raw }
}

/** Runs `f` with Redis stopped, and lets it go on after. */
async function stalled<T>(f: () => Promise<T>): Promise<T> {
  process.kill(own.pid!, 'SIGSTOP')
  try {
    return await f()
  } finally {
    process.kill(own.pid!, 'SIGCONT')
  }
}

/** Asks `read` until it gives `want` (Redis back, what it owed sent), at most 3 s. */
async function until<T>(read: () => Promise<T>, want: (v: T) => boolean): Promise<T> {
  let v = await read()
  for (let i = 0; i < 100 && !want(v); i++) {
    await Bun.sleep(30)
    v = await read()
  }
  return v
}

describe.skipIf(!!skip)('what a stalled Redis runs late is taken back', () => {
  beforeAll(async () => {
    own = await ownRedis()
  })
  afterAll(async () => {
    for (const c of opened) c.close()
    await own.stop()
  })

  test('an admission that got no answer leaves no hold once Redis is back', async () => {
    const { redis, raw } = clients()
    const ledger = new RedisLedger(redis, log)
    const key = { id: 'stalled-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    expect((await ledger.reserve(key, 0.1)).admitted).toBe(true) // the key seeded, one hold
    const asked = await stalled(async () => {
      const asked = await Promise.allSettled(Array.from({ length: 5 }, () => ledger.reserve(key, 0.1)))
      await Bun.sleep(400) // their releases find no answer either
      return asked
    })
    expect(asked.map((a) => a.status)).toEqual(Array(5).fill('rejected'))
    // once Redis answers again, only the first hold is left
    const reserved = await until(async () => (await ledger.figures(key.id)).reserved, (r) => Math.abs(r - 0.1) < 1e-12)
    expect(reserved).toBeCloseTo(0.1, 12)
    const [sum, n] = (await raw.send('HMGET', [`${redis.settings.prefix}rsv:{${key.id}}`, 'sum', 'n'])) as [string, string]
    expect(Number(n)).toBe(1)
    expect(Number(sum)).toBeCloseTo(0.1, 12)
  })

  test('a take that got no answer leaves its windows once Redis is back', async () => {
    const { redis, raw } = clients()
    const limiter = new RedisRateLimiter(redis, log)
    const limits: Limit[] = [{ bucket: 'k:stalled', limit: 3, windowMs: 60_000, scope: 'key' }]
    expect((await limiter.take(limits)).allowed).toBe(true)
    const asked = await stalled(() => Promise.allSettled(Array.from({ length: 5 }, () => limiter.take(limits))))
    expect(asked.map((a) => a.status)).toEqual(Array(5).fill('rejected'))
    // Redis ran them when it resumed (two fit); they go again, and only the served one is left
    const window = `${redis.settings.prefix}rl:k:stalled`
    expect(await until(async () => Number(await raw.send('ZCARD', [window])), (n) => n === 1)).toBe(1)
    const next = [await limiter.take(limits), await limiter.take(limits), await limiter.take(limits)]
    expect(next.map((o) => o.allowed)).toEqual([true, true, false])
  })
})
