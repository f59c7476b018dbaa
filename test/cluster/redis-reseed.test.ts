// Redis lost a key's spent (a restart without persistence, a flush, an eviction): the next
// admission seeds it from this instance's figure, and the database's figure, read a moment
// later, raises it where others had stored more. A cost this instance charged after the seed
// reaches Redis on its own; the database, read late on a busy machine, has it stored too, and
// the raise must not count it a second time (it did: a key was charged 5 requests for 4).
import { describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startGateway } from '../helpers/server.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

// gpt-4o at list prices on a fake upstream: each request costs the same
const COST = (10 * 2.5 + 5 * 10) / 1e6
const REPLY = { id: 'chatcmpl-o', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }

/** The ledger's read of the database's figure for a key (the seam the gateway gives it). */
type StoredRead = { storedSpent: (keyId: string) => Promise<number | null> }

describe.skipIf(!!skip)('a spent Redis lost, seeded again', () => {
  test('the database read after a cost of the seeding request was stored raises the seed by others\' costs only, not that one', async () => {
    const up = await startFakeUpstream()
    up.script({ json: REPLY })
    const prefix = freshPrefix()
    const g = await startGateway({ yaml: `redis:\n  url: ${TEST_REDIS_URL}\n  take_ahead: false\n`, env: { REDIS_URL: '', SWITCHYARD_REDIS_PREFIX: prefix, OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: up.url } })
    try {
      const { key, record } = await g.services.keys.create({ name: 'reseeded', credits: COST * 1000 })
      const gpt = async () => {
        const r = await fetch(`${g.url}/api/alpha/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(r.status).toBe(200)
        await r.arrayBuffer()
      }
      const spent = async () => {
        await g.services.recorder.settled()
        let f = (await g.services.billing.figures(record.id))!
        for (let i = 0; i < 300 && (f.reserved !== 0 || g.services.billing.open > 0); i++) {
          await Bun.sleep(10)
          f = (await g.services.billing.figures(record.id))!
        }
        expect(f.reserved).toBe(0)
        return f.spent!
      }
      for (let i = 0; i < 3; i++) await gpt()
      expect(await spent()).toBeCloseTo(3 * COST, 12)

      // Redis loses the key
      const admin = new RedisClient(TEST_REDIS_URL!)
      try {
        for (const name of (await admin.send('KEYS', [`${prefix}*`])) as string[]) await admin.send('DEL', [name])
      } finally {
        admin.close()
      }
      // the database's figure comes back late, as on a busy machine: by then the request its
      // seed admitted has ended and been recorded
      const ledger = (g.services.billing as unknown as { ledger: StoredRead }).ledger
      const read = ledger.storedSpent.bind(ledger)
      let reads = 0
      ledger.storedSpent = async (id) => {
        reads++
        await Bun.sleep(400)
        return read(id)
      }
      await gpt()
      for (let i = 0; i < 100 && reads === 0; i++) await Bun.sleep(10)
      expect(reads).toBe(1)
      await Bun.sleep(600) // the late read, and a raise if any
      expect(await spent()).toBeCloseTo(4 * COST, 12)
      // what the database holds agrees
      expect((await g.services.keys.get(record.id))!.spent).toBeCloseTo(4 * COST, 12)
    } finally {
      await g.stop()
      await up.stop()
    }
  })
})
