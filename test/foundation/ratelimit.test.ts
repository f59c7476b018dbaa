// Rate limits over real HTTP: key and IP windows, the burst guard, exact headers.
import { afterEach, expect, setSystemTime, test } from 'bun:test'
import { MemoryStore, RateLimiter, rateLimitHeaders } from '../../src/auth/ratelimit.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
})

const models = (key: string) => fetch(gw!.url + '/api/v1/models', { headers: { authorization: `Bearer ${key}` } })

function limitHeaders(r: Response) {
  return {
    limit: Number(r.headers.get('x-ratelimit-limit')),
    remaining: Number(r.headers.get('x-ratelimit-remaining')),
    reset: Number(r.headers.get('x-ratelimit-reset')),
    retryAfter: r.headers.get('retry-after'),
  }
}

test('per-key limit: exact remaining counts, then 429 (key) with every header', async () => {
  gw = await startGateway()
  const { key } = await gw.services.keys.create({ name: 'rpm5', rpm: 5 })
  // The window opens when the first request is counted, somewhere between these two instants;
  // every reset is that moment plus a minute, in whole seconds rounded up.
  let opened: [number, number] | undefined
  for (let i = 4; i >= 0; i--) {
    const sent = Date.now()
    const r = await models(key)
    opened ??= [sent, Date.now()]
    expect(r.status).toBe(200)
    const h = limitHeaders(r)
    expect(h.limit).toBe(5)
    expect(h.remaining).toBe(i)
    expect(h.reset).toBeGreaterThanOrEqual(Math.floor(opened[0] / 1000) + 60)
    expect(h.reset).toBeLessThanOrEqual(Math.ceil(opened[1] / 1000) + 60)
    expect(h.retryAfter).toBeNull()
  }
  const r = await models(key)
  expect(r.status).toBe(429)
  expect(await r.text()).toBe('{"error":"Rate limit exceeded (key)"}')
  const h = limitHeaders(r)
  expect(h).toMatchObject({ limit: 5, remaining: 0 })
  expect(Number(h.retryAfter)).toBeGreaterThanOrEqual(59)
  expect(Number(h.retryAfter)).toBeLessThanOrEqual(60)
  // another key is not affected
  expect((await models(gw.key)).status).toBe(200)
})

test('per-IP limit counts unauthenticated requests too: 429 (ip)', async () => {
  gw = await startGateway({ env: { SWITCHYARD_IP_RPM: '4' } })
  for (let i = 0; i < 3; i++) expect((await fetch(gw.url + '/api/v1/models')).status).toBe(401)
  const last = await models(gw.key)
  expect(last.status).toBe(200)
  expect(limitHeaders(last)).toMatchObject({ limit: 4, remaining: 0 }) // the IP binds, not the key's 600
  const r = await models(gw.key)
  expect(r.status).toBe(429)
  expect(await r.text()).toBe('{"error":"Rate limit exceeded (ip)"}')
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
  expect(r.headers.get('x-ratelimit-limit')).toBe('4')
  // /health is outside /api and never limited
  expect((await fetch(gw.url + '/health')).status).toBe(200)
})

test('the per-second burst guard refuses, then lets through a second later', async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '3' } })
  const codes = await Promise.all(Array.from({ length: 5 }, () => models(gw!.key).then((r) => r.status)))
  expect(codes.filter((c) => c === 200)).toHaveLength(3)
  expect(codes.filter((c) => c === 429)).toHaveLength(2)
  await Bun.sleep(1100)
  expect((await models(gw.key)).status).toBe(200)
})

test('200 concurrent requests from 20 keys across their limit: none gets more, header counts exact', async () => {
  gw = await startGateway()
  const keys = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await gw!.services.keys.create({ name: `k${i}`, rpm: 7 })).key))
  const results = await Promise.all(
    keys.flatMap((key) => Array.from({ length: 10 }, () => models(key).then((r) => ({ key, status: r.status, h: limitHeaders(r) })))),
  )
  for (const key of keys) {
    const mine = results.filter((r) => r.key === key)
    const ok = mine.filter((r) => r.status === 200)
    expect(ok).toHaveLength(7)
    expect(ok.map((r) => r.h.remaining).sort()).toEqual([0, 1, 2, 3, 4, 5, 6])
    const refused = mine.filter((r) => r.status === 429)
    expect(refused).toHaveLength(3)
    for (const r of refused) expect(r.h).toMatchObject({ limit: 7, remaining: 0 })
  }
})

test('changing a key\'s rpm keeps the requests it made: lowering it never hands the key a fresh window', async () => {
  gw = await startGateway()
  const { key, record } = await gw.services.keys.create({ name: 'rpm5', rpm: 5 })
  for (let i = 0; i < 5; i++) expect((await models(key)).status).toBe(200)
  expect((await models(key)).status).toBe(429)
  await gw.services.keys.update(record.id, { rpm: 6 })
  expect((await models(key)).status).toBe(200)
  expect((await models(key)).status).toBe(429)
  await gw.services.keys.update(record.id, { rpm: 5 })
  const r = await models(key)
  expect(r.status).toBe(429)
  expect(limitHeaders(r)).toMatchObject({ limit: 5, remaining: 0 })
})

test('a log resized to a smaller limit keeps its newest times, so its slot frees when the oldest kept one leaves', () => {
  const s = new MemoryStore()
  const t0 = 1_000_000
  for (let i = 0; i < 4; i++) s.hit('b', 4, 1000, t0 + i * 100)
  const d = s.peek('b', 2, 1000, t0 + 350)
  expect(d).toMatchObject({ allowed: false, remaining: 0, resetAt: t0 + 1200 })
  // raised again, it counts the one kept time still in the window
  expect(s.peek('b', 8, 1000, t0 + 1200)).toMatchObject({ allowed: true, remaining: 7 })
})

test('the sliding log frees a slot exactly when the oldest request leaves the window', () => {
  const s = new MemoryStore()
  const t0 = 1_000_000
  expect(s.hit('b', 2, 1000, t0).remaining).toBe(1)
  expect(s.hit('b', 2, 1000, t0 + 500).remaining).toBe(0)
  expect(s.peek('b', 2, 1000, t0 + 999).allowed).toBe(false)
  expect(s.peek('b', 2, 1000, t0 + 999).resetAt).toBe(t0 + 1000)
  expect(s.peek('b', 2, 1000, t0 + 1000).allowed).toBe(true)
  expect(s.hit('b', 2, 1000, t0 + 1000).resetAt).toBe(t0 + 1500)
  s.prune(t0 + 5000)
  expect(s.peek('b', 2, 1000, t0 + 5000).remaining).toBe(2)
})

test('X-Forwarded-For is honoured only from a trusted proxy', async () => {
  // untrusted: every request is the socket's IP, whatever it claims
  gw = await startGateway({ env: { SWITCHYARD_IP_RPM: '2' } })
  const asClient = (ip: string) => fetch(gw!.url + '/api/v1/models', { headers: { authorization: `Bearer ${gw!.key}`, 'x-forwarded-for': ip } })
  expect((await asClient('198.51.100.1')).status).toBe(200)
  expect((await asClient('198.51.100.2')).status).toBe(200)
  expect((await asClient('198.51.100.3')).status).toBe(429)
  await gw.stop()
  // trusted loopback proxy: each forwarded client has its own window
  gw = await startGateway({ env: { SWITCHYARD_IP_RPM: '2', SWITCHYARD_TRUSTED_PROXIES: '127.0.0.1,::1,::ffff:127.0.0.1' } })
  for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
    expect((await asClient(ip)).status).toBe(200)
    expect((await asClient(ip)).status).toBe(200)
  }
  expect((await asClient('198.51.100.1')).status).toBe(429)
  await gw.stop()
  // a proxy named by its range (a cluster's pod network), whatever form the socket reports it in
  gw = await startGateway({ yaml: 'server: { trusted_proxies: ["127.0.0.0/8", "::1/128"] }\n', env: { SWITCHYARD_IP_RPM: '2' } })
  for (const ip of ['198.51.100.4', '2001:db8::4']) {
    expect((await asClient(ip)).status).toBe(200)
    expect((await asClient(ip)).status).toBe(200)
  }
  expect((await asClient('198.51.100.4')).status).toBe(429)
})

test("a step of the system clock neither stretches a window nor empties it: Retry-After stays within the window's length", () => {
  const limiter = new RateLimiter()
  const limits = [{ bucket: 'key:stepped', limit: 2, windowMs: 60_000, scope: 'key' as const }]
  expect(limiter.take(limits).allowed).toBe(true)
  expect(limiter.take(limits).allowed).toBe(true)
  try {
    // an hour back (NTP, a VM restored from a snapshot), then an hour on
    for (const step of [-3_600_000, 3_600_000]) {
      setSystemTime(new Date(Date.now() + step))
      const refused = limiter.take(limits)
      expect(refused.allowed).toBe(false)
      const headers = rateLimitHeaders(refused.binding, true)
      const retry = Number(headers['retry-after'])
      expect(retry).toBeGreaterThanOrEqual(1)
      expect(retry).toBeLessThanOrEqual(60)
      // the reset in this machine's epoch seconds as the clock reads now: within the window from it
      const inSeconds = Number(headers['x-ratelimit-reset']) - Date.now() / 1000
      expect(inSeconds).toBeGreaterThan(0)
      expect(inSeconds).toBeLessThanOrEqual(61)
      setSystemTime()
    }
  } finally {
    setSystemTime()
  }
})

test("a shared limit's decision is read on Redis's clock, which its reset is on, whatever this machine's says", () => {
  // Redis's clock an hour ahead of this process's (or this one stepped): 30 s left is 30 s
  const redisNow = Date.now() + 3_600_000
  const headers = rateLimitHeaders({ allowed: false, limit: 2, remaining: 0, resetAt: redisNow + 30_000, now: redisNow }, true)
  expect(headers['retry-after']).toBe('30')
  const inSeconds = Number(headers['x-ratelimit-reset']) - Date.now() / 1000
  expect(inSeconds).toBeGreaterThan(29)
  expect(inSeconds).toBeLessThanOrEqual(31)
})

test("clients refused together are told to come back at different moments: retry-after-ms, the SDKs' exact sleep, is the wait plus a varying share of it", async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '2' } })
  const refused = (await Promise.all(Array.from({ length: 24 }, () => models(gw!.key)))).filter((r) => r.status === 429)
  expect(refused.length).toBeGreaterThanOrEqual(20)
  const waits = refused.map((r) => ({ s: Number(r.headers.get('retry-after')), ms: Number(r.headers.get('retry-after-ms')) }))
  for (const w of waits) {
    // Retry-After in whole seconds still covers the window; the ms at most a second past it
    expect(w.s).toBe(1)
    expect(w.ms).toBeGreaterThan(0)
    expect(w.ms).toBeLessThanOrEqual(1_500)
  }
  expect(new Set(waits.map((w) => w.ms)).size).toBeGreaterThan(refused.length / 2)
})
