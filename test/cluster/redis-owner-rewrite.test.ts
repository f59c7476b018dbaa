// A live gateway whose holds were swept as a dead one's (it was silent too long: a long stall, a
// cut from Redis) writes them back at its next beat, so the credit its running requests hold is
// counted again everywhere; holds that ended meanwhile are not written back.
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)
const log = createLogger('silent')
const opened: { close(): void }[] = []
afterAll(() => opened.forEach((c) => c.close()))

describe.skipIf(!!skip)('Redis credit holds of a live gateway swept as a dead one', () => {
  test('are written again at its next beat, the ended ones left out', async () => {
    const prefix = freshPrefix()
    const redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix }, log)
    const raw = new RedisClient(TEST_REDIS_URL!)
    opened.push(redis, raw)
    const ledger = new RedisLedger(redis, log)
    await ledger.own()
    const key = { id: 'swept-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    const [a, b] = (await Promise.all([ledger.reserve(key, 0.5), ledger.reserve(key, 0.25)])) as { reservationId: string }[]
    const owner = a!.reservationId.slice(-32, -20)
    // what a sweep does: the holds deleted, the owner marked
    await raw.send('DEL', [`${prefix}rsv:{${key.id}}`, `${prefix}rsvx:{${key.id}}`])
    await raw.send('SADD', [`${prefix}owners:swept`, owner])
    expect((await ledger.figures(key.id)).reserved).toBe(0)
    ledger.settle(b!.reservationId, key.id, 0.25)
    await Bun.sleep(1_300)
    expect((await ledger.figures(key.id)).reserved).toBe(0.5)
    // and admissions count it, from the kept sum: 1 − 0.25 spent − 0.5 held leaves room for one more
    expect((await ledger.reserve(key, 0.25)).admitted).toBe(true)
    expect((await ledger.reserve(key, 0.125)).admitted).toBe(false)
    await ledger.stop()
  })
})
