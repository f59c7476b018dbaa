// What a request waits on Redis for. Each script call here is held back 150 ms, a slow link:
// a generation request's limits and its funded key's admission must be waited for together
// (one 150 ms wait, not two after each other), and a request past its limit still never
// reaches the upstream.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { RESERVATION_TTL_MS } from '../../src/billing/ledger.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

const HELD_MS = 150
let gw: Gateway | undefined
let up: FakeUpstream

describe.skipIf(!!skip)('Redis round trips a generation waits for', () => {
  beforeAll(async () => {
    up = await startFakeUpstream()
    up.script(() => ({ json: { id: 'chatcmpl-rt', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } }))
  })
  afterAll(async () => {
    await up.stop()
  })
  afterEach(async () => {
    await gw?.stop()
    gw = undefined
  })

  /** A gateway whose every Redis script call answers 150 ms late; the calls' start times. */
  async function slowRedis(env: Record<string, string> = {}) {
    gw = await startGateway({ env: { REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: freshPrefix(), OPENAI_API_KEY: 'sk-upstream-secret', OPENAI_BASE_URL: up.url, ...env } })
    const redis = gw.services.cluster!.redis!
    const eval_ = redis.eval.bind(redis)
    // each call: when it was sent, and what it carried (limits' takes, admissions, or else)
    const sent: { at: number; what: string }[] = []
    redis.eval = async (...args: Parameters<typeof redis.eval>) => {
      const [, keys, argv] = args
      const parts = [keys.some((k) => k.includes(':rl:')) && 'limits', keys.some((k) => k.includes(':cr:')) && argv.includes(String(RESERVATION_TTL_MS)) && 'admission'].filter(Boolean)
      sent.push({ at: performance.now(), what: parts.join('+') || 'other' })
      await Bun.sleep(HELD_MS)
      return eval_(...args)
    }
    return { gw, sent }
  }

  const chat = (g: Gateway, key: string, body: Record<string, unknown> = {}) =>
    fetch(`${g.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, ...body }),
    })

  test('a funded request waits one call for its limits and its hold together, not two in turn', async () => {
    const { gw, sent } = await slowRedis()
    const { key } = await gw.services.keys.create({ name: 'funded', credits: 10 })
    expect((await chat(gw, key)).status).toBe(200) // warm
    await Bun.sleep(HELD_MS + 50) // its settlement, a call of its own, is out of the way
    const times: number[] = []
    for (let i = 0; i < 3; i++) {
      const t = performance.now()
      const n = sent.length
      const res = await chat(gw, key)
      expect(res.status).toBe(200)
      times.push(performance.now() - t)
      // one script call carries both
      expect(sent.slice(n).filter((c) => c.what !== 'other').map((c) => c.what)).toEqual(['limits+admission'])
    }
    // one wait of 150 ms and the rest; two in turn would be 300 ms and more
    expect(Math.min(...times)).toBeGreaterThanOrEqual(HELD_MS - 5)
    expect(Math.min(...times)).toBeLessThan(2 * HELD_MS - 20)
  }, 20_000)

  test('a funded request past its limit, or with a bad body past it, is a 429 that never reaches the upstream', async () => {
    const { gw } = await slowRedis({ SWITCHYARD_KEY_RPM: '2' })
    const { key } = await gw.services.keys.create({ name: 'two', credits: 10 })
    const before = up.requests.length
    const answers = await Promise.all([chat(gw, key), chat(gw, key), chat(gw, key), chat(gw, key, { max_tokens: -1 })])
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, 429, 429])
    expect(up.requests.length - before).toBe(2)
  }, 20_000)
})
