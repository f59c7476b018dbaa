// Three gateways on one database and one Redis (in-process, one data dir: SWITCHYARD_TEST_SHARED=1)
// share what routing learns: once one instance has seen a deployment fail `failures_to_cool`
// times in a row, the other two send it nothing within a second; and a provider's key pool is
// gone round by all three together, not by each on its own. Skipped without the shared stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { dropDatabaseFor } from '../helpers/database.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { TEST_REDIS_URL } from '../helpers/redis.ts'
import { cleanup, onSharedStores, startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const skip = !onSharedStores || !TEST_REDIS_URL
if (skip) console.log('test/scaleout/routing-shared.test.ts: skipped, needs SWITCHYARD_TEST_SHARED=1 and SWITCHYARD_TEST_REDIS_URL')

const TEXT = fixture('openai/chat/nonstream-text.json')
let failing: FakeUpstream
let serving: FakeUpstream
let pooled: FakeUpstream
let dir: string
const gws: Gateway[] = []

const chat = (g: Gateway, model: string) =>
  fetch(`${g.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gws[0]!.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })

describe.skipIf(skip)('three instances on Redis', () => {
  beforeAll(async () => {
    ;[failing, serving, pooled] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()])
    failing.script({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })
    serving.script({ json: TEXT })
    pooled.script({ json: TEXT })
    // gpt-4o-mini tries `failing` first for as long as it is not resting; gpt-4o has one
    // deployment on a provider with a pool of two keys
    const yaml = `
providers:
  - { id: failing, kind: openai, base_url: ${failing.url}/v1, api_key: sk-f, max_retries: 0 }
  - { id: serving, kind: openai, base_url: ${serving.url}/v1, api_key: sk-s, max_retries: 0 }
  - { id: pooled, kind: openai, base_url: ${pooled.url}/v1, api_keys: [sk-pool-1, sk-pool-2], max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments: [{ provider: failing, priority: 1 }, { provider: serving, priority: 2 }]
  - id: gpt-4o
    family: openai
    deployments: [{ provider: pooled }]
routing: { cooldown_s: 600, failures_to_cool: 3 }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`
    dir = tempDir('switchyard-routing-shared-')
    // the first makes the database; the others join it (and its Redis prefix: one per data dir)
    gws.push(await startGateway({ yaml, dataDir: dir }))
    gws.push(...(await Promise.all([startGateway({ yaml, dataDir: dir }), startGateway({ yaml, dataDir: dir })])))
  }, 30_000)

  afterAll(async () => {
    await Promise.all(gws.map((g) => g.stop()))
    await dropDatabaseFor(dir)
    cleanup(dir)
    await Promise.all([failing, serving, pooled].map((u) => u?.stop()))
  })

  test('a deployment instance 1 saw fail 3 times in a row gets nothing from instances 2 and 3 a second later', async () => {
    const [one, two, three] = gws as [Gateway, Gateway, Gateway]
    // instance 1 alone, one request at a time: each fails over from `failing` to `serving`
    // until `failing` has failed three times in a row and rests
    while (failing.requests.length < 3) {
      const res = await chat(one, 'gpt-4o-mini')
      expect(res.status).toBe(200)
      expect(res.headers.get('x-switchyard-provider')).toBe('serving')
    }
    const failed = failing.requests.length
    expect(failed).toBe(3)
    await Bun.sleep(1_000)
    const replies = await Promise.all([two, three].flatMap((g) => Array.from({ length: 20 }, () => chat(g, 'gpt-4o-mini'))))
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(200))
    expect(replies.every((r) => r.headers.get('x-switchyard-provider') === 'serving')).toBe(true)
    expect(failing.requests.length).toBe(failed)
    // instance 1 sends it nothing either
    expect((await chat(one, 'gpt-4o-mini')).status).toBe(200)
    expect(failing.requests.length).toBe(failed)
  })

  test("a key pool's round is the cluster's: requests taking turns over the three instances alternate its keys", async () => {
    const keyOf = (i: number) => pooled.requests[i]!.headers.authorization
    // each instance learns the round from Redis's answers to its own turns: one round each first
    for (const g of gws) expect((await chat(g, 'gpt-4o')).status).toBe(200)
    const from = pooled.requests.length
    for (let i = 0; i < 30; i++) {
      expect((await chat(gws[i % 3]!, 'gpt-4o')).status).toBe(200)
      // the instance's turn is counted in Redis before it takes the next one (its count goes a
      // moment after the reply: 10 ms was short of it once, beside another test run)
      await Bun.sleep(50)
    }
    const keys = Array.from({ length: 30 }, (_, i) => keyOf(from + i))
    expect(new Set(keys)).toEqual(new Set(['Bearer sk-pool-1', 'Bearer sk-pool-2']))
    // alternating: each call used the other key than the one before it, whichever instance made them
    for (let i = 1; i < keys.length; i++) expect(keys[i]).not.toBe(keys[i - 1])
  })
})
