// A deployment's health on one instance: rests after failures in a row or a 429's Retry-After,
// the one probe after a rest and its two outcomes, and the dashboard's bounded last hour.
import { describe, expect, test } from 'bun:test'
import { DEFAULT_ROUTING } from '../../src/config/providers.ts'
import { HourStats, MINUTES } from '../../src/routing/hour-stats.ts'
import { deploymentKey, MemoryHealth } from '../../src/routing/health.ts'
import { MemoryPoolPosition } from '../../src/routing/pool-position.ts'

const K = deploymentKey({ provider: 'openai-a', upstreamId: 'gpt-4o-mini' })

function clocked(failuresToCool = 3, cooldownMs = 30_000) {
  const clock = { t: 1_700_000_000_000 }
  return { clock, h: new MemoryHealth({ ...DEFAULT_ROUTING, failuresToCool, cooldownMs }, { now: () => clock.t }) }
}

describe('cooldowns', () => {
  test('the key is provider/upstream id; an unknown deployment is ok', () => {
    expect(K).toBe('openai-a/gpt-4o-mini')
    const { h } = clocked()
    expect(h.state(K)).toEqual({ kind: 'ok' })
    expect(h.maySend(K)).toBe(true)
  })

  test('cooled after failures_to_cool failures in a row, for the cooldown; a success in between starts the count again', () => {
    const { clock, h } = clocked()
    h.failed(K)
    h.failed(K)
    h.succeeded(K)
    h.failed(K)
    h.failed(K)
    expect(h.maySend(K)).toBe(true)
    h.failed(K)
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 30_000 })
    expect(h.maySend(K)).toBe(false)
    clock.t += 29_999
    expect(h.maySend(K)).toBe(false)
    // failures of requests sent before the rest do not lengthen it
    h.failed(K)
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 1 })
    expect(h.snapshot([K])[0]!.consecutiveFailures).toBe(4)
  })

  test('after the rest exactly one probe goes; a success makes it ok again', () => {
    const { clock, h } = clocked()
    for (let i = 0; i < 3; i++) h.failed(K)
    clock.t += 30_000
    expect(h.state(K)).toEqual({ kind: 'half-open' })
    expect(h.maySend(K)).toBe(true)
    // concurrent requests skip it while the probe is out
    expect(h.state(K)).toEqual({ kind: 'probing' })
    for (let i = 0; i < 5; i++) expect(h.maySend(K)).toBe(false)
    clock.t += 2_000
    h.succeeded(K, 120)
    expect(h.state(K)).toEqual({ kind: 'ok' })
    expect(h.maySend(K)).toBe(true)
    expect(h.maySend(K)).toBe(true)
    expect(h.snapshot([K])[0]!.consecutiveFailures).toBe(0)
  })

  test('a failed probe cools it again for a full cooldown, at once', () => {
    const { clock, h } = clocked()
    for (let i = 0; i < 3; i++) h.failed(K)
    clock.t += 30_000
    expect(h.maySend(K)).toBe(true)
    clock.t += 1_500
    h.failed(K)
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 30_000 })
    clock.t += 30_000
    expect(h.maySend(K)).toBe(true)
    expect(h.maySend(K)).toBe(false)
  })

  test('a probe that ends without a verdict frees the slot; one never heard from again is replaced after its lease', () => {
    const { clock, h } = clocked()
    for (let i = 0; i < 3; i++) h.failed(K)
    clock.t += 30_000
    expect(h.maySend(K)).toBe(true)
    h.abandoned(K)
    expect(h.maySend(K)).toBe(true)
    expect(h.maySend(K)).toBe(false)
    clock.t += 30_000
    expect(h.maySend(K)).toBe(true)
  })

  test('a 429 with Retry-After cools it at once for that long, then the probe', () => {
    const { clock, h } = clocked()
    h.failed(K, { retryAfterMs: 7_000 })
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 7_000 })
    // a longer Retry-After during the rest lengthens it; a shorter one does not shorten it
    clock.t += 1_000
    h.failed(K, { retryAfterMs: 60_000 })
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 60_000 })
    h.failed(K, { retryAfterMs: 1_000 })
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 60_000 })
    clock.t += 60_000
    expect(h.maySend(K)).toBe(true)
    h.succeeded(K)
    expect(h.state(K)).toEqual({ kind: 'ok' })
  })

  test('a Retry-After past an hour rests the deployment an hour (a number that means nothing, 1e9 s, took it out for good)', () => {
    const { clock, h } = clocked()
    h.failed(K, { retryAfterMs: 1e12 })
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 3_600_000 })
    clock.t += 3_600_000
    expect(h.maySend(K)).toBe(true)
  })

  test('the failure that reaches the count with a short Retry-After rests the full cooldown', () => {
    const { clock, h } = clocked()
    h.failed(K)
    h.failed(K)
    h.failed(K, { retryAfterMs: 1_000 })
    expect(h.state(K)).toEqual({ kind: 'cooling', until: clock.t + 30_000 })
  })

  test('a late success from before the rest clears the count but does not end the rest', () => {
    const { clock, h } = clocked()
    for (let i = 0; i < 3; i++) h.failed(K)
    h.succeeded(K)
    expect(h.state(K).kind).toBe('cooling')
    clock.t += 30_000
    expect(h.state(K).kind).toBe('half-open')
  })

  test('failures_to_cool 0: failures never cool; Retry-After still does', () => {
    const { h } = clocked(0)
    for (let i = 0; i < 20; i++) h.failed(K)
    expect(h.maySend(K)).toBe(true)
    h.failed(K, { retryAfterMs: 5_000 })
    expect(h.maySend(K)).toBe(false)
  })

  test('deployments are independent', () => {
    const { h } = clocked(1)
    h.failed('a/x')
    expect(h.maySend('a/x')).toBe(false)
    expect(h.maySend('a/y')).toBe(true)
    expect(h.maySend('b/x')).toBe(true)
  })
})

describe('the dashboard snapshot', () => {
  test('state, cooling until, failures, and the last hour: requests, errors, failovers, p50 of successes', () => {
    const { clock, h } = clocked()
    for (const ms of [100, 200, 300, 400, 10_000]) h.succeeded(K, ms)
    h.failed(K, { failover: true })
    h.failed(K)
    const [r] = h.snapshot([K, 'b/never'])
    expect(r).toEqual({ key: K, state: 'ok', consecutiveFailures: 2, lastHour: { requests: 7, errors: 2, failovers: 1, p50Ms: expect.any(Number) } })
    expect(Math.abs(r!.lastHour.p50Ms! - 300)).toBeLessThanOrEqual(15)
    expect(h.snapshot([K, 'b/never'])[1]).toEqual({ key: 'b/never', state: 'ok', consecutiveFailures: 0, lastHour: { requests: 0, errors: 0, failovers: 0, p50Ms: null } })
    h.failed(K)
    expect(h.snapshot()).toEqual([{ key: K, state: 'cooling', coolingUntil: clock.t + 30_000, consecutiveFailures: 3, lastHour: expect.objectContaining({ requests: 8, errors: 3 }) }])
    clock.t += 30_000
    h.maySend(K)
    expect(h.snapshot()[0]!.state).toBe('probing')
  })

  test('the counters cover the last hour only and stay bounded however long it runs', () => {
    const stats = new HourStats()
    let t = 1_700_000_000_000
    // three hours, a request every second with latencies over five orders of magnitude
    for (let i = 0; i < 3 * 3600; i++, t += 1_000) stats.add(t, { ms: (i * 7919) % 100_000, error: i % 10 === 0, failover: i % 20 === 0 })
    expect(stats.slots).toHaveLength(MINUTES)
    for (const m of stats.slots) expect(m.latency.size).toBeLessThanOrEqual(130)
    const last = stats.totals(t - 1_000)
    // the current minute and the 59 before it
    expect(last.requests).toBeGreaterThanOrEqual(3540)
    expect(last.requests).toBeLessThanOrEqual(3600)
    expect(last.errors).toBe(Math.round(last.requests / 10))
    expect(last.failovers).toBeGreaterThan(0)
    expect(last.p50Ms).toBeGreaterThan(40_000)
    expect(last.p50Ms).toBeLessThan(60_000)
    // an hour of silence empties it
    expect(stats.totals(t + 3_600_000)).toEqual({ requests: 0, errors: 0, failovers: 0, p50Ms: null })
  })

  test('p50 is within its histogram bucket (10 %) of the true median', () => {
    const stats = new HourStats()
    const t = 1_700_000_000_000
    for (const ms of [5, 6, 7, 800, 900, 1_000, 1_100, 1_200, 5_000]) stats.add(t, { ms })
    const p50 = stats.totals(t).p50Ms!
    expect(p50).toBeGreaterThanOrEqual(900)
    expect(p50).toBeLessThanOrEqual(1_100)
  })
})

test('the memory pool position goes round each provider on its own', () => {
  const p = new MemoryPoolPosition()
  expect([p.next('a', 2), p.next('a', 2), p.next('a', 2), p.next('b', 3), p.next('b', 3), p.next('b', 3), p.next('b', 3)]).toEqual([0, 1, 0, 0, 1, 2, 0])
  expect(p.next('c', 1)).toBe(0)
})

describe('bounded', () => {
  test('a deployment for every model id clients name does not grow the state for ever; a resting one is kept over healthy ones', () => {
    const { h } = clocked(1)
    h.failed(K)
    expect(h.state(K).kind).toBe('cooling')
    for (let i = 0; i < 10_000; i++) h.succeeded(deploymentKey({ provider: 'mock', upstreamId: `mock-random-${i}` }), 1)
    const kept = h.snapshot()
    expect(kept.length).toBeLessThanOrEqual(4096)
    expect(h.state(K).kind).toBe('cooling')
    // the newest are there, with their hour
    expect(kept.find((r) => r.key === 'mock/mock-random-9999')?.lastHour.requests).toBe(1)
  })
})
