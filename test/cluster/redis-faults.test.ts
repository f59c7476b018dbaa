// Several instances, Redis stopped mid-run. By default a request that needs it answers 503 with a JSON
// error within a second; with `redis.on_error: allow` it is served on this instance's own
// limits and a log line says so. Service returns within 5 s of Redis coming back. Each test
// runs a redis-server of its own on a random port, killed and restarted on the same port.
import { afterEach, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { createLogger } from '../../src/http/log.ts'
import { RedisLedger } from '../../src/billing/redis-ledger.ts'
import { SharedRedis } from '../../src/cluster/redis.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { ownRedis, redisSkipReason, type OwnRedis } from '../helpers/redis.ts'
import { startGateway, tempDir, type Gateway } from '../helpers/server.ts'

// the server binary comes with the test Redis (CI installs both)
const skip = redisSkipReason() ?? (Bun.which('redis-server') ? undefined : 'redis-server is not installed: the Redis fault tests are skipped')
if (skip) console.warn(skip)

let g: Gateway | undefined
let redis: OwnRedis | undefined
afterEach(async () => {
  await g?.stop()
  await redis?.stop()
  g = undefined
  redis = undefined
})

const chat = (key: string) =>
  fetch(`${g!.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text ok' }] }),
  })

/** Polls until a request is served; the ms it took. */
async function untilServed(key: string, withinMs: number): Promise<number> {
  const t0 = performance.now()
  while (performance.now() - t0 < withinMs) {
    if ((await chat(key)).status === 200) return performance.now() - t0
    await Bun.sleep(50)
  }
  throw new Error(`not served again within ${withinMs} ms`)
}

describe.skipIf(!!skip)('Redis down', () => {
  test('default (deny): 503 with a JSON error within 1 s, for every request that needs it; back within 5 s of Redis returning', async () => {
    redis = await ownRedis()
    g = await startGateway({ env: { REDIS_URL: redis.url }, logLevel: (process.env.DEBUG_LOG as 'warn') ?? 'silent' })
    const funded = (await g.services.keys.create({ name: 'funded', credits: 100 })).key
    expect((await chat(g.key)).status).toBe(200)
    await redis.stop()
    for (const key of [g.key, funded, g.key]) {
      const t0 = performance.now()
      const r = await chat(key)
      const ms = performance.now() - t0
      expect(r.status).toBe(503)
      expect(ms).toBeLessThan(1_000)
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect(r.headers.get('content-type')).toContain('application/json')
      const body = (await r.json()) as { error: string }
      expect(body.error).toMatch(/shared store \(Redis\).*did not answer.*retry shortly/)
      expect(body.error).not.toContain(redis.url)
    }
    // routes that need no shared state still answer; /health names the store that is away
    const health = await fetch(`${g.url}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok', redis: 'down' })
    await redis.start()
    expect(await untilServed(g.key, 5_000)).toBeLessThan(5_000)
    expect((await chat(funded)).status).toBe(200)
    expect(await (await fetch(`${g.url}/health`)).json()).toEqual({ status: 'ok', redis: 'up' })
  }, 20_000)

  /**
   * A funded key served 3 requests, then 4 on this instance's figures while Redis is away
   * (killed; `kept`: restarted from a snapshot of that moment), then one more once it is back:
   * its spent in Redis once every cost is sent and no hold is left (holds made ahead are ended
   * when idle).
   */
  async function spentAfterAnOutage(kept: boolean): Promise<{ spent: number; cost: number }> {
    // gpt-4o at list prices on a fake upstream: each request costs the same
    const cost = (10 * 2.5 + 5 * 10) / 1e6
    const up = await startFakeUpstream()
    up.script({ json: { id: 'chatcmpl-o', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } })
    try {
      redis = await ownRedis({ dir: kept ? tempDir() : undefined })
      g = await startGateway({
        yaml: `redis:\n  url: ${redis.url}\n  on_error: allow\n`,
        env: { REDIS_URL: '', OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: up.url },
        logLevel: 'silent',
      })
      const { key, record } = await g.services.keys.create({ name: 'owed', credits: cost * 1000 })
      const gpt = async () => {
        const r = await fetch(`${g!.url}/api/alpha/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(r.status).toBe(200)
        await r.arrayBuffer()
      }
      const settled = async () => {
        await g!.services.recorder.settled()
        let figures = (await g!.services.billing.figures(record.id))!
        for (let i = 0; i < 300 && (figures.reserved !== 0 || g!.services.billing.open > 0); i++) {
          await Bun.sleep(10)
          figures = (await g!.services.billing.figures(record.id))!
        }
        expect(figures.reserved).toBe(0)
        return figures.spent!
      }
      for (let i = 0; i < 3; i++) await gpt()
      expect(await settled()).toBeCloseTo(3 * cost, 12)
      if (kept) {
        const admin = new RedisClient(redis.url)
        await admin.send('SAVE', [])
        admin.close()
      }
      await redis.stop()
      for (let i = 0; i < 4; i++) await gpt()
      await g.services.recorder.settled()
      await redis.start()
      if (kept) {
        // it came back with the key's spent as it was: the three costs
        const admin = new RedisClient(redis.url)
        const [name] = (await admin.send('KEYS', [`*cr:{${record.id}}`])) as string[]
        expect(Number(await admin.send('HGET', [name!, 'spent']))).toBeCloseTo(3 * cost, 12)
        admin.close()
      }
      await Bun.sleep(250) // past the wait before it is tried again
      await gpt()
      return { spent: await settled(), cost }
    } finally {
      await up.stop()
    }
  }

  test('costs owed while Redis was away count once in the spent it seeds again after a restart that lost it', async () => {
    // the first command the new Redis answers is likely the admission, which seeds the key's
    // spent from this instance's figure, the four owed costs in it: they are not added again
    const { spent, cost } = await spentAfterAnOutage(false)
    expect(spent).toBeCloseTo(8 * cost, 12)
  }, 20_000)

  test('costs owed while Redis was away are added to the spent it kept', async () => {
    const { spent, cost } = await spentAfterAnOutage(true)
    expect(spent).toBeCloseTo(8 * cost, 12)
  }, 20_000)

  test('a cost owed after another instance seeded the key again is added to that seed, not dropped', async () => {
    redis = await ownRedis({ dir: tempDir() })
    const log = createLogger('silent')
    const settings = { url: redis.url, onError: 'allow', timeoutMs: 300, prefix: 'owed:', takeAhead: false } as ConstructorParameters<typeof SharedRedis>[0]
    const [ra, rb] = [new SharedRedis(settings, log), new SharedRedis(settings, log)]
    const [a, b] = [new RedisLedger(ra, log), new RedisLedger(rb, log)]
    const key = { id: 'k' + crypto.randomUUID().slice(0, 6), credits: 100, spent: 0 }
    const sent = async (l: RedisLedger) => {
      for (let i = 0; i < 400 && l.open > 0; i++) await Bun.sleep(5)
    }
    try {
      // A admits the key (its seed) and charges 1
      const ha = await a.reserve(key, 1)
      a.settle(ha.admitted ? ha.reservationId : undefined, key.id, 1)
      await sent(a)
      // Redis loses the key; B admits it first (a new seed, from its figure: 1) and charges 1
      const admin = new RedisClient(redis.url)
      await admin.send('FLUSHALL', [])
      const hb = await b.reserve({ ...key, spent: 1 }, 1)
      b.settle(hb.admitted ? hb.reservationId : undefined, key.id, 1)
      await sent(b)
      expect((await b.figures(key.id)).spent).toBeCloseTo(2, 9)
      // A hears from Redis after that seed (its health check, idle), then Redis goes away, kept
      // on disk, and A charges 5 on its own figures
      // (a quiet connection's check runs within two periods of its last command)
      for (let i = 0; i < 40 && ra.heardAt <= Number(await admin.send('HGET', [`owed:cr:{${key.id}}`, 'seeded_at'])); i++) await Bun.sleep(100)
      await admin.send('SAVE', [])
      admin.close()
      await redis.stop()
      a.settle(undefined, key.id, 5)
      await sent(a)
      await redis.start()
      // A pays what it owes once Redis is back: the seed B made before A's last word has none of it
      let spent = 0
      for (let i = 0; i < 60 && spent < 6.5; i++) {
        await Bun.sleep(100)
        spent = (await b.figures(key.id).catch(() => ({ spent: 0 }))).spent ?? 0
      }
      expect(spent).toBeCloseTo(7, 9)
    } finally {
      ra.close()
      rb.close()
    }
  }, 30_000)

  test('a hung Redis (not closed, just silent) is also answered within 1 s', async () => {
    redis = await ownRedis()
    g = await startGateway({ env: { REDIS_URL: redis.url } })
    expect((await chat(g.key)).status).toBe(200)
    const pid = redis.pid!
    process.kill(pid, 'SIGSTOP')
    try {
      const t0 = performance.now()
      const r = await chat(g.key)
      expect(r.status).toBe(503)
      expect(performance.now() - t0).toBeLessThan(1_000)
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    expect(await untilServed(g.key, 5_000)).toBeLessThan(5_000)
  }, 20_000)

  test('Redis answering an error (a bucket of the wrong type) is a 503 too, never a 500', async () => {
    redis = await ownRedis()
    g = await startGateway({ env: { REDIS_URL: redis.url, SWITCHYARD_REDIS_PREFIX: 'p:' } })
    const { key, record } = await g.services.keys.create({ name: 'wrongtype' })
    expect((await chat(key)).status).toBe(200)
    const admin = new RedisClient(redis.url)
    // the key's minute window replaced by a string: the script's ZREMRANGEBYSCORE fails
    await admin.send('SET', [`p:rl:k:${record.id}`, 'not a sorted set'])
    try {
      const r = await chat(key)
      expect(r.status).toBe(503)
      expect(((await r.json()) as { error: string }).error).toContain('WRONGTYPE')
    } finally {
      await admin.send('DEL', [`p:rl:k:${record.id}`])
      admin.close()
    }
    expect((await chat(key)).status).toBe(200)
  }, 20_000)

  test('the bus resubscribes after Redis returns and drops the key cache (a change made meanwhile is not missed)', async () => {
    redis = await ownRedis()
    g = await startGateway({ env: { REDIS_URL: redis.url } })
    await g.services.keys.stop() // no data-dir poll: only the bus can tell it
    const { key, record } = await g.services.keys.create({ name: 'changed-while-away' })
    expect((await chat(key)).status).toBe(200) // cached
    await redis.stop()
    // another instance disables the key while Redis is away: its message is lost
    await g.services.storage.sql.run("UPDATE api_keys SET status = 'inactive' WHERE id = ?", [record.id])
    await redis.start()
    const t0 = performance.now()
    let status = 0
    while (performance.now() - t0 < 5_000) {
      status = (await chat(key)).status
      if (status === 401) break
      await Bun.sleep(50)
    }
    expect(status).toBe(401)
  }, 20_000)

  test('on_error: allow keeps serving on per-instance limits and logs that it does', async () => {
    redis = await ownRedis()
    const lines: string[] = []
    g = await startGateway({
      yaml: `redis:\n  url: ${redis.url}\n  on_error: allow\n`,
      env: { REDIS_URL: '' }, // the file's URL, whatever the test run's environment says
      log: createLogger('warn', (l) => void lines.push(l)),
    })
    const { key } = await g.services.keys.create({ name: 'rpm3', rpm: 3, credits: 100 })
    expect((await chat(key)).status).toBe(200)
    await redis.stop()
    // the shared window is out of reach: this instance's own counts from zero
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now()
      statuses.push((await chat(key)).status)
      expect(performance.now() - t0).toBeLessThan(1_000)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    const said = lines.map((l) => JSON.parse(l) as { msg: string }).map((l) => l.msg)
    expect(said).toContain('redis: unreachable; rate limits and credits are per instance until it returns (redis.on_error: allow)')
    // once a minute, not once a request
    expect(said.filter((m) => m.startsWith('redis: unreachable; rate limits')).length).toBe(1)
    await redis.start()
    const t0 = performance.now()
    while (!lines.some((l) => l.includes('redis: reachable again')) && performance.now() - t0 < 5_000) {
      await chat(g.key)
      await Bun.sleep(50)
    }
    expect(performance.now() - t0).toBeLessThan(5_000)
    // the shared window is back: the restarted Redis kept nothing (no persistence), so the key
    // has its 3 again, where this instance's own window (3 taken) would refuse at once
    const after: number[] = []
    for (let i = 0; i < 4; i++) after.push((await chat(key)).status)
    expect(after).toEqual([200, 200, 200, 429])
  }, 20_000)
})
