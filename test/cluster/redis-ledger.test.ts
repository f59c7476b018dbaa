// The Redis ledger's admissions asked in one turn of the loop go in one call per key: the same
// decisions, in the order asked, as the memory ledger's one at a time; and the settlements of
// a turn end exactly the reservations they name, in the key's next admission when one comes
// soon enough, else in a call of their own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { MemoryLedger } from '../../src/billing/ledger.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const log = createLogger('error')
let redis: SharedRedis

/** A client of its own, its every script call counted. */
function countedRedis() {
  const calls = { n: 0 }
  const counted = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix: freshPrefix() }, log)
  const eval_ = counted.eval.bind(counted)
  counted.eval = (...args: Parameters<SharedRedis['eval']>) => (calls.n++, eval_(...args))
  return { counted, calls }
}

describe.skipIf(!!skip)('Redis credits: a turn of admissions in one call', () => {
  beforeAll(() => {
    redis = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix: freshPrefix() }, log)
  })
  afterAll(() => redis.close())

  test('admitted while credits − spent − held > 0, in the order asked, as one at a time', async () => {
    const ledger = new RedisLedger(redis, log)
    const memory = new MemoryLedger()
    const key = { id: 'funded-' + crypto.randomUUID().slice(0, 8), credits: 0.01, spent: 0.001 }
    const together = await Promise.all(Array.from({ length: 10 }, () => ledger.reserve(key, 0.003)))
    const one = Array.from({ length: 10 }, () => memory.reserve(key, 0.003))
    expect(together.map((h) => h.admitted)).toEqual(one.map((h) => h.admitted))
    expect(together.filter((h) => h.admitted).length).toBe(3)
    const refused = together.find((h) => !h.admitted) as { spent: number; reserved: number }
    expect(refused.spent).toBeCloseTo(0.001, 12)
    expect(refused.reserved).toBeCloseTo(0.009, 12)
    expect((await ledger.figures(key.id)).reserved).toBeCloseTo(0.009, 12)

    // the turn's settlements end exactly those holds, and their costs count
    for (const h of together) if (h.admitted) ledger.settle(h.reservationId, key.id, 0.002)
    for (let i = 0; i < 100 && ledger.open > 0; i++) await Bun.sleep(5)
    const f = await ledger.figures(key.id)
    expect(f.reserved).toBe(0)
    expect(f.spent).toBeCloseTo(0.007, 12)
    // two more fit now (0.003 left), not three
    const next = await Promise.all(Array.from({ length: 3 }, () => ledger.reserve(key, 0.002)))
    expect(next.map((h) => h.admitted)).toEqual([true, true, false])
  })

  test('a hold of a request in progress lapses later once renewed; one not renewed lapses when it did', async () => {
    // holds that lapse in 300 ms, as a stream still running would see them lapse after 15 minutes
    const ledger = new RedisLedger(redis, log, 300)
    const key = { id: 'renew-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    const [a, b] = (await Promise.all([ledger.reserve(key, 0.3), ledger.reserve(key, 0.2)])) as { reservationId: string }[]
    expect((await ledger.figures(key.id)).reserved).toBeCloseTo(0.5, 12)
    await Bun.sleep(200)
    ledger.renew([a!.reservationId, 'rsr:other-key:' + '0'.repeat(32)])
    await Bun.sleep(200)
    // past the first lapse: the renewed one counts, the other does not
    expect((await ledger.figures(key.id)).reserved).toBeCloseTo(0.3, 12)
    expect(b).toBeDefined()
  })

  test("a settlement goes with its key's next admission: one call a request, the same figures", async () => {
    const key = { id: 'along-' + crypto.randomUUID().slice(0, 8), credits: 0.01, spent: 0 }
    const { counted, calls } = countedRedis()
    const along = new RedisLedger(counted, log)
    let h = await along.reserve(key, 0.004)
    expect(calls.n).toBe(1)
    for (let i = 0; i < 5; i++) {
      expect(h.admitted).toBe(true)
      along.settle((h as { reservationId: string }).reservationId, key.id, 0.001)
      h = await along.reserve(key, 0.004)
    }
    // six admissions and five settlements: six calls, the held worst case never left over
    expect(calls.n).toBe(6)
    const f = await along.figures(key.id)
    expect(f.reserved).toBeCloseTo(0.004, 12)
    expect(f.spent).toBeCloseTo(0.005, 12)
    // with no admission to go with, a settlement still goes, a moment later, in a call of its own
    along.settle((h as { reservationId: string }).reservationId, key.id, 0.001)
    expect(along.open).toBe(1)
    for (let i = 0; i < 100 && along.open > 0; i++) await Bun.sleep(2)
    expect(along.open).toBe(0)
    expect(calls.n).toBe(8)
    const g = await along.figures(key.id)
    expect(g.reserved).toBe(0)
    expect(g.spent).toBeCloseTo(0.006, 12)
    counted.close()
  })

  test('a batch worker’s stored cost goes at once, in a call of its own, with what else of the key waits', async () => {
    const key = { id: 'stored-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    const { counted, calls } = countedRedis()
    const ledger = new RedisLedger(counted, log)
    const h = (await ledger.reserve(key, 0.004)) as { reservationId: string }
    expect(calls.n).toBe(1)
    // a request's settlement waits for an admission to go with
    ledger.settle(h.reservationId, key.id, 0.001)
    expect(calls.n).toBe(1)
    // the stored cost does not wait (Billing.fromWorker): until Redis has it, Redis is short of
    // the database, and a kill then would leave it so; the waiting settlement goes with it
    ledger.settle(undefined, key.id, 0.002)
    ledger.sendNow([key.id])
    expect(calls.n).toBe(2)
    for (let i = 0; i < 100 && ledger.open > 0; i++) await Bun.sleep(2)
    const f = await ledger.figures(key.id)
    expect(f.reserved).toBe(0)
    expect(f.spent).toBeCloseTo(0.003, 12)
    expect(calls.n).toBe(3)
    // a key with no credit limit: its cost waits its second, a write of records or not
    ledger.settle(undefined, key.id, 0.001, true)
    ledger.sendNow([key.id])
    expect(calls.n).toBe(3)
    counted.close()
  })

  test("costs waiting with more holds than one call ends go with the admission that seeds the key again, and count once", async () => {
    const prefix = freshPrefix()
    const own = new SharedRedis({ url: TEST_REDIS_URL!, onError: 'deny', timeoutMs: 1000, prefix }, log)
    const ledger = new RedisLedger(own, log)
    const key = { id: 'many-' + crypto.randomUUID().slice(0, 8), credits: 100, spent: 0 }
    const holds = (await Promise.all(Array.from({ length: 600 }, () => ledger.reserve(key, 0.01)))) as { admitted: boolean; reservationId: string }[]
    expect(holds.every((h) => h.admitted)).toBe(true)
    // Redis loses the key's spent (a restart without persistence, an eviction)
    const raw = new RedisClient(TEST_REDIS_URL!)
    await raw.del(`${prefix}cr:{${key.id}}`)
    raw.close()
    // 600 requests end at once, and the next admission comes before they were sent: it seeds
    // the spent from this instance's figure, which counts their costs already
    for (const h of holds) ledger.settle(h.reservationId, key.id, 0.001)
    const next = await ledger.reserve({ ...key, spent: 0.6 }, 0.01)
    expect(next.admitted).toBe(true)
    for (let i = 0; i < 200 && ledger.open > 0; i++) await Bun.sleep(5)
    expect(ledger.open).toBe(0)
    const f = await ledger.figures(key.id)
    expect(f.spent).toBeCloseTo(0.6, 12)
    expect(f.reserved).toBeCloseTo(0.01, 12)
    own.close()
  })

  test('a settlement waiting at shutdown is sent before stop() returns', async () => {
    const ledger = new RedisLedger(redis, log)
    const key = { id: 'stop-' + crypto.randomUUID().slice(0, 8), credits: 1, spent: 0 }
    const h = (await ledger.reserve(key, 0.5)) as { reservationId: string }
    ledger.settle(h.reservationId, key.id, 0.25)
    await ledger.stop()
    expect(ledger.open).toBe(0)
    const f = await ledger.figures(key.id)
    expect(f.reserved).toBe(0)
    expect(f.spent).toBeCloseTo(0.25, 12)
  })
})
