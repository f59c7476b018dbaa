// The Redis ledger keeps the sum of a key's live holds beside them, so that an admission reads
// one figure, not every hold: the sum must stay the holds' own through holds, settlements and
// lapses, count holds it did not write (an older gateway's), and with thousands of holds open
// an admission must not read them all.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, ownRedis, redisSkipReason, TEST_REDIS_URL, type OwnRedis } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('silent')
const HOLD_MS = 1_500
const opened: { close(): void }[] = []

function client(url: string) {
  const redis = new SharedRedis({ url, onError: 'deny', timeoutMs: 2000, prefix: freshPrefix() }, log)
  const raw = new RedisClient(url)
  opened.push(redis, raw)
  return { redis, raw }
}

/** The sum and count kept in the key's holds hash. */
async function kept(raw: RedisClient, prefix: string, keyId: string) {
  const [sum, n] = (await raw.send('HMGET', [`${prefix}rsv:{${keyId}}`, 'sum', 'n'])) as [string | null, string | null]
  return { sum: sum === null ? 0 : Number(sum), n: n === null ? 0 : Number(n) }
}

async function settled(ledger: RedisLedger) {
  for (let i = 0; i < 200 && ledger.open > 0; i++) await Bun.sleep(5)
  expect(ledger.open).toBe(0)
}

describe.skipIf(!!skip)('Redis credits: the sum of live holds kept beside them', () => {
  afterAll(() => {
    for (const c of opened) c.close()
  })

  test('stays the holds’ own sum through holds, settlements and lapses', async () => {
    const { redis, raw } = client(TEST_REDIS_URL!)
    // holds lapse after HOLD_MS: longer than the steps take on a loaded machine (0.2–0.3 s here),
    // or the first step's holds would lapse before the last step counts them
    const ledger = new RedisLedger(redis, log, HOLD_MS)
    const key = { id: 'sum-' + crypto.randomUUID().slice(0, 8), credits: 1_000, spent: 0 }
    let seed = 7
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const open: string[] = []
    for (let step = 0; step < 6; step++) {
      const holds = await Promise.all(Array.from({ length: 20 }, () => ledger.reserve(key, Math.round(rand() * 1e6) / 1e7)))
      for (const h of holds) if (h.admitted && h.reservationId) open.push(h.reservationId)
      // a random third of the open holds end, with their costs
      for (let i = open.length - 1; i >= 0; i--) if (rand() < 0.33) ledger.settle(open.splice(i, 1)[0], key.id, 0.001)
      await settled(ledger)
      // the next admission takes the waiting settlements along too: read after it
      await ledger.reserve(key, null)
      const exact = await ledger.figures(key.id)
      const k = await kept(raw, redis.settings.prefix, key.id)
      expect(k.n).toBe(open.length)
      expect(Math.abs(k.sum - exact.reserved)).toBeLessThan(1e-12)
    }
    // past the holds' time they all lapse: the sum goes with them
    await Bun.sleep(HOLD_MS + 50)
    await ledger.reserve(key, null)
    expect(await kept(raw, redis.settings.prefix, key.id)).toEqual({ sum: 0, n: 0 })
    expect((await ledger.figures(key.id)).reserved).toBe(0)
  })

  test('holds it did not write (an older gateway’s) still count', async () => {
    const { redis, raw } = client(TEST_REDIS_URL!)
    const ledger = new RedisLedger(redis, log)
    const key = { id: 'foreign-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    expect((await ledger.reserve(key, 0.1)).admitted).toBe(true)
    // a hold added without touching the sum, as a gateway before the sum did
    const p = redis.settings.prefix
    await raw.send('HSET', [`${p}rsv:{${key.id}}`, `rsr:${key.id}:${'f'.repeat(32)}`, '0.95'])
    await raw.send('ZADD', [`${p}rsvx:{${key.id}}`, String(Date.now() + 60_000), `rsr:${key.id}:${'f'.repeat(32)}`])
    const refused = await ledger.reserve(key, 0.1)
    expect(refused.admitted).toBe(false)
    expect((refused as { reserved: number }).reserved).toBeCloseTo(1.05, 12)
    expect(await kept(raw, p, key.id)).toEqual({ sum: 1.05, n: 2 })
  })

  describe('with thousands of holds open', () => {
    let own: OwnRedis
    beforeAll(async () => {
      own = await ownRedis()
    })
    afterAll(async () => {
      await own.stop()
    })

    test('an admission reads the kept sum, never every hold', async () => {
      const { redis, raw } = client(own.url)
      const ledger = new RedisLedger(redis, log)
      const key = { id: 'many-' + crypto.randomUUID().slice(0, 8), credits: 1_000, spent: 0 }
      for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 200 }, () => ledger.reserve(key, 0.01)))
      const stats = async () => {
        const info = (await raw.send('INFO', ['commandstats'])) as string
        const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0)
        return { whole: calls('hgetall') + calls('hvals'), evals: calls('evalsha') }
      }
      const before = await stats()
      const held: boolean[] = []
      for (let i = 0; i < 20; i++) held.push((await ledger.reserve(key, 0.01)).admitted)
      const after = await stats()
      expect(held.every(Boolean)).toBe(true)
      expect(after.evals - before.evals).toBe(20)
      expect(after.whole - before.whole).toBe(0)
      expect((await ledger.figures(key.id)).reserved).toBeCloseTo(20.2, 9)
      expect(await kept(raw, redis.settings.prefix, key.id)).toMatchObject({ n: 2020 })
    })
  })
})
