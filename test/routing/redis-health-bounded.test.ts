// What instances on one Redis share of deployment health is bounded by the config: a client
// names any `mock-…` or unlisted model id it likes, and each id is a deployment of its own.
// Shared, every such id that failed left a field in Redis, read by every instance at each
// refresh and kept in its memory for good; a configured deployment's failures are still shared.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const skip = redisSkipReason()
if (skip) console.warn(skip)

describe.skipIf(!!skip)('deployment health shared on Redis', () => {
  const prefix = freshPrefix()
  let up: FakeUpstream
  let gw: Gateway
  let redis: Bun.RedisClient
  beforeAll(async () => {
    up = await startFakeUpstream()
    up.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    gw = await startGateway({
      env: { REDIS_URL: TEST_REDIS_URL, SWITCHYARD_REDIS_PREFIX: prefix },
      yaml: `
providers:
  - { id: pa, kind: openai, base_url: ${up.url}/v1, api_key: sk-a, max_retries: 0 }
models:
  - { id: gpt-4o-mini, family: openai, deployments: [{ provider: pa }] }
routing: { failures_to_cool: 100 }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`,
    })
    redis = new Bun.RedisClient(TEST_REDIS_URL!)
  })
  afterAll(async () => {
    await gw?.stop()
    await up?.stop()
    await redis?.send('DEL', [`${prefix}health:failures`, `${prefix}health:cooling`])
    redis?.close()
  })

  const send = (model: string, content = 'hi') =>
    fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    })

  test("model ids a client makes up, failing, leave nothing in Redis; a configured deployment's failures are shared", async () => {
    for (let i = 0; i < 40; i++) {
      const res = await send(`mock-${crypto.randomUUID()}`, 'mock: error 500')
      expect(res.status).toBe(502)
      await res.text()
    }
    const res = await send('gpt-4o-mini')
    expect(res.status).toBe(502)
    await res.text()
    const failures = async () => (await redis.send('HGETALL', [`${prefix}health:failures`])) as Record<string, string> | string[]
    for (const end = Date.now() + 5_000; JSON.stringify(await failures()).indexOf('pa/gpt-4o-mini') < 0 && Date.now() < end; ) await Bun.sleep(20)
    const fields = await failures()
    const names = Array.isArray(fields) ? fields.filter((_, i) => i % 2 === 0) : Object.keys(fields)
    expect(names).toEqual(['pa/gpt-4o-mini'])
  })
})
