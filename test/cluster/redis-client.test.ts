// The shared Redis client. Each command has a deadline (redis.timeout_ms), kept by one timer per
// connection rather than one per command: a silent server fails every command at its own deadline, not sooner
// and not all at once; an answer that came while this instance's own loop was stalled (GC, a
// big upload) is still taken, since the stall is not Redis's fault. Each test runs a
// redis-server of its own, to stop it (SIGSTOP) mid-run. And the batches of one turn (a
// request's limits and its admission) are sent from one callback, so they leave in one write.
import { afterEach, describe, expect, test } from 'bun:test'
import { RedisUnavailable, SharedRedis } from '../../src/cluster/redis.ts'
import { createLogger } from '../../src/http/log.ts'
import { ownRedis, redisSkipReason, type OwnRedis } from '../helpers/redis.ts'

const skip = redisSkipReason() ?? (Bun.which('redis-server') ? undefined : 'redis-server is not installed: the Redis deadline tests are skipped')
if (skip) console.warn(skip)

const TIMEOUT = 300
let server: OwnRedis | undefined
let shared: SharedRedis | undefined
afterEach(async () => {
  shared?.close()
  await server?.stop()
  shared = server = undefined
})

async function connect(): Promise<SharedRedis> {
  server = await ownRedis()
  shared = new SharedRedis({ url: server.url, onError: 'deny', timeoutMs: TIMEOUT, prefix: 'deadline:' }, createLogger('error', () => {}))
  expect(await shared.send('PING', [])).toBe('PONG')
  return shared
}

/** When `p` settles, ms after `from`, and how. */
async function settled(p: Promise<unknown>, from: number): Promise<{ ms: number; error?: unknown; value?: unknown }> {
  try {
    const value = await p
    return { ms: performance.now() - from, value }
  } catch (error) {
    return { ms: performance.now() - from, error }
  }
}

describe.skipIf(!!skip)('Redis command deadlines', () => {
  test('a silent server fails each command at its own deadline: one sent later fails later', async () => {
    const r = await connect()
    process.kill(server!.pid!, 'SIGSTOP')
    try {
      const t0 = performance.now()
      const first = settled(r.send('SET', ['deadline:a', '1']), t0)
      await Bun.sleep(150)
      const t1 = performance.now()
      const second = settled(r.send('SET', ['deadline:b', '1']), t1)
      const [a, b] = await Promise.all([first, second])
      for (const x of [a, b]) {
        expect(x.error).toBeInstanceOf(RedisUnavailable)
        expect(String((x.error as Error).message)).toContain(`no answer within ${TIMEOUT} ms`)
        // not before its deadline, and not long after it
        expect(x.ms).toBeGreaterThanOrEqual(TIMEOUT - 5)
        expect(x.ms).toBeLessThan(TIMEOUT + 250)
      }
      // the second had its own deadline: it did not fail with the first
      expect(t1 - t0 + b.ms).toBeGreaterThan(a.ms + 100)
    } finally {
      process.kill(server!.pid!, 'SIGCONT')
    }
    // and the connection serves again once the server answers
    for (let i = 0; i < 50; i++) {
      if ((await settled(r.send('PING', []), 0)).value === 'PONG') return
      await Bun.sleep(50)
    }
    throw new Error('no answer after the server came back')
  })

  test('an answer that came while this instance was stalled past the deadline is taken, not failed', async () => {
    const r = await connect()
    const p = settled(r.send('PING', []), performance.now())
    // the loop held well past the deadline (and the watchdog's tolerance): Redis answered meanwhile
    const until = performance.now() + TIMEOUT + 300
    while (performance.now() < until) {}
    const out = await p
    expect(out.error).toBeUndefined()
    expect(out.value).toBe('PONG')
  })

  test('a thousand commands at once are all answered, and later ones still get their deadline', async () => {
    const r = await connect()
    const all = await Promise.all(Array.from({ length: 1000 }, (_, i) => r.send('SET', [`deadline:k${i}`, String(i)])))
    expect(all.every((v) => v === 'OK')).toBe(true)
    // past the watchdog's first run, a silent server still fails a new command in time
    await Bun.sleep(TIMEOUT + 50)
    process.kill(server!.pid!, 'SIGSTOP')
    try {
      const t0 = performance.now()
      const late = await settled(r.send('GET', ['deadline:k1']), t0)
      expect(late.error).toBeInstanceOf(RedisUnavailable)
      expect(late.ms).toBeLessThan(TIMEOUT + 250)
    } finally {
      process.kill(server!.pid!, 'SIGCONT')
    }
  })
})

describe.skipIf(!!skip)('Redis health check', () => {
  test('a connection whose commands are answered is not pinged; a quiet one is, once a period', async () => {
    const r = await connect()
    // the check reads Redis's TIME (it dates the last word from Redis)
    const pings = async () => Number(/cmdstat_time:calls=(\d+)/.exec(String(await r.send('INFO', ['commandstats'])))?.[1] ?? 0)
    const before = await pings()
    // busy: a command answered every 200 ms, for two and a half periods of the check
    for (let i = 0; i < 12; i++) {
      await r.send('GET', ['deadline:busy'])
      await Bun.sleep(200)
    }
    expect(await pings()).toBe(before)
    // quiet for as long: the check asks the server itself
    await Bun.sleep(2_500)
    expect(await pings()).toBeGreaterThanOrEqual(before + 1)
    // five seconds of sleeps alone: more than bun's default limit of a test leaves room for
  }, 15_000)
})

describe.skipIf(!!skip)('Redis batches of one turn', () => {
  test('what is asked to send soon runs on the next turn, together and in order; one that throws stops none of the others', async () => {
    const r = await connect()
    const ran: string[] = []
    const sent: Promise<unknown>[] = []
    r.soon(() => {
      ran.push('limits')
      sent.push(r.send('SET', ['deadline:soon', 'a']))
    })
    r.soon(() => {
      throw new Error('a broken batch')
    })
    r.soon(() => {
      ran.push('credits')
      sent.push(r.send('GET', ['deadline:soon']))
    })
    // nothing yet: they wait for the next turn of the loop
    expect(ran).toEqual([])
    await new Promise((done) => setImmediate(done))
    expect(ran).toEqual(['limits', 'credits'])
    // sent in that order on the one connection: the GET sees the SET
    expect(await Promise.all(sent)).toEqual(['OK', 'a'])
  })
})
