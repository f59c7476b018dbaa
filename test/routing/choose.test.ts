// The order a model's deployments are tried in, the last resort when all rest, and which
// upstream failures move a request on.
import { describe, expect, test } from 'bun:test'
import { DEFAULT_ROUTING, type Deployment } from '../../src/config/providers.ts'
import { UpstreamError } from '../../src/ir/errors.ts'
import { upstreamErrorFrom } from '../../src/providers/errors.ts'
import { exceededWindow, lastResort, order, retryable } from '../../src/routing/choose.ts'
import { deploymentKey, MemoryHealth } from '../../src/routing/health.ts'
import { candidates, type Candidate } from '../../src/pipeline/failover.ts'
import type { Plan } from '../../src/pipeline/surface.ts'

const dep = (provider: string, weight = 1, priority = 1): Deployment => ({ provider, upstreamId: 'm', weight, priority })
const ids = (ds: Deployment[]) => ds.map((d) => d.provider)

/** A seeded generator, so that the proportions below are the same every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function clocked(start = 1_000_000) {
  const clock = { t: start }
  return { clock, health: new MemoryHealth({ ...DEFAULT_ROUTING, cooldownMs: 30_000, failuresToCool: 3 }, { now: () => clock.t }) }
}

describe('order', () => {
  test('weights 3:1 over 400 orders: the heavier first 65–85 % of the time (also with Math.random)', () => {
    const ds = [dep('a', 3), dep('b', 1)]
    const { health } = clocked()
    for (const random of [seeded(7), seeded(42), Math.random]) {
      let heavier = 0
      for (let i = 0; i < 400; i++) {
        const o = order(ds, health, random)
        expect(o).toHaveLength(2)
        if (o[0]!.provider === 'a') heavier++
      }
      expect(heavier / 400).toBeGreaterThanOrEqual(0.65)
      expect(heavier / 400).toBeLessThanOrEqual(0.85)
    }
  })

  test('the draw follows the random number: below 3/4 the heavier, above it the lighter', () => {
    const { health } = clocked()
    expect(ids(order([dep('a', 3), dep('b', 1)], health, () => 0.74))).toEqual(['a', 'b'])
    expect(ids(order([dep('a', 3), dep('b', 1)], health, () => 0.76))).toEqual(['b', 'a'])
    expect(ids(order([dep('b', 1), dep('a', 3)], health, () => 0.2))).toEqual(['b', 'a'])
    expect(ids(order([dep('b', 1), dep('a', 3)], health, () => 0.3))).toEqual(['a', 'b'])
  })

  test('priorities strictly ordered: every priority-1 deployment before any priority-2 one, whatever the weights', () => {
    const ds = [dep('p2-heavy', 100, 2), dep('p1-a', 1, 1), dep('p3', 50, 3), dep('p1-b', 1, 1), dep('p2-light', 1, 2)]
    const { health } = clocked()
    const random = seeded(3)
    const firsts = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const o = order(ds, health, random)
      expect(o.map((d) => d.priority)).toEqual([1, 1, 2, 2, 3])
      firsts.add(o[0]!.provider)
    }
    // both priority-1 deployments lead sometimes (equal weights)
    expect([...firsts].sort()).toEqual(['p1-a', 'p1-b'])
  })

  test('weight 0 comes last in its priority, in the order given', () => {
    const { health } = clocked()
    expect(ids(order([dep('z1', 0), dep('a', 1), dep('z2', 0), dep('b', 1, 2)], health, () => 0.5))).toEqual(['a', 'z1', 'z2', 'b'])
  })

  test('cooled deployments are left out; a half-open one is in, until its probe is out', () => {
    const { clock, health } = clocked()
    const ds = [dep('a'), dep('b')]
    for (let i = 0; i < 3; i++) health.failed(deploymentKey(ds[0]!))
    expect(ids(order(ds, health))).toEqual(['b'])
    clock.t += 30_000
    expect(ids(order(ds, health)).sort()).toEqual(['a', 'b'])
    expect(health.maySend(deploymentKey(ds[0]!))).toBe(true)
    expect(ids(order(ds, health))).toEqual(['b'])
  })

  test('a model whose deployments all rest gives an empty list; the last resort is the one whose rest ends first', () => {
    const { clock, health } = clocked()
    const a = dep('a')
    const b = dep('b')
    for (let i = 0; i < 3; i++) health.failed(deploymentKey(a))
    clock.t += 10_000
    for (let i = 0; i < 3; i++) health.failed(deploymentKey(b))
    expect(order([a, b], health)).toEqual([])
    expect(lastResort([b, a], health)).toBe(a)
    health.failed(deploymentKey(b), { retryAfterMs: 1_000 }) // a rest already longer is not shortened
    expect(lastResort([b, a], health)).toBe(a)
    expect(lastResort([], health)).toBeUndefined()
  })
})

describe('retryable', () => {
  const R = DEFAULT_ROUTING.retryOn
  const answered = (status: number, retryAfter?: string) => upstreamErrorFrom({ provider: 'p', upstreamStatus: status, bodyText: '{}', retryAfter })
  const timeout = new UpstreamError({ status: 504, message: 't', type: 'timeout' })
  const refused = new UpstreamError({ status: 502, message: 'c', type: 'connection_error' }, { retryable: true })

  test('the default retry_on: 429, 5xx, 529, timeouts and refused connections move on; 4xx and credentials do not', () => {
    for (const s of [429, 500, 502, 503, 504, 529]) expect(retryable(answered(s), R)).toBe(true)
    for (const s of [400, 401, 403, 404, 413, 422]) expect(retryable(answered(s), R)).toBe(false)
    expect(retryable(timeout, R)).toBe(true)
    expect(retryable(refused, R)).toBe(true)
  })

  test('numbers match the upstream status, not the client status it maps to', () => {
    // 529 is the client's 503 and 408 the client's 504
    expect(retryable(answered(529), [529])).toBe(true)
    expect(retryable(answered(408), [504])).toBe(true)
    expect(retryable(answered(429), [500, 503])).toBe(false)
    // a 401 is a 502 for the client, but only retry_on 401 retries it
    expect(retryable(answered(401), [500, 502])).toBe(false)
    expect(retryable(answered(401), [401])).toBe(true)
    expect(retryable(answered(400), [400])).toBe(true)
  })

  test('an error that carries the upstream status is matched on it exactly', () => {
    const e = Object.assign(answered(500), { upstreamStatus: 500 })
    expect(retryable(e, [502])).toBe(false)
    expect(retryable(e, [500])).toBe(true)
  })

  test('timeout and connect only when listed; anything that is not an upstream error never', () => {
    expect(retryable(timeout, [500, 502, 503, 504, 'connect'])).toBe(false)
    expect(retryable(refused, [500, 502, 'timeout'])).toBe(false)
    expect(retryable(new Error('boom'), R)).toBe(false)
    expect(retryable(new DOMException('aborted', 'AbortError'), R)).toBe(false)
    expect(retryable(answered(500), [])).toBe(false)
  })
})

describe('candidates of a model with one deployment and no fallbacks', () => {
  // the usual configuration takes a short way; it must decide as the general walk does
  const collect = async (it: Iterable<Candidate> | AsyncIterable<Candidate>) => {
    const out: Candidate[] = []
    for await (const c of it) out.push(c)
    return out
  }
  const planOf = (d: Deployment) => ({ model: { id: 'm', upstreamId: 'm', deployments: [d], fallbacks: [] } }) as unknown as Plan
  const none = undefined as never

  test('one call whatever its health: ok, cooling (its own last resort) and half-open, whose probe it claims', async () => {
    const d = dep('a')
    const key = deploymentKey(d)
    const { clock, health } = clocked()
    expect((await collect(candidates(health, none, none, {}, planOf(d), none))).map((c) => c.deployment)).toEqual([d])
    for (let i = 0; i < 3; i++) health.failed(key)
    expect(health.state(key).kind).toBe('cooling')
    expect(await collect(candidates(health, none, none, {}, planOf(d), none))).toHaveLength(1)
    clock.t += 30_001
    expect(health.state(key).kind).toBe('half-open')
    expect(await collect(candidates(health, none, none, {}, planOf(d), none))).toHaveLength(1)
    expect(health.state(key).kind).toBe('probing')
    // the general walk gives the same single call for the probing deployment (its last resort)
    const general = { ...planOf(d), model: { ...planOf(d).model, deployments: [d, { ...d, provider: 'b', weight: 0 }] } } as unknown as Plan
    for (let i = 0; i < 3; i++) health.failed(deploymentKey({ ...d, provider: 'b' }))
    expect((await collect(candidates(health, none, none, {}, general, none))).map((c) => c.deployment.provider)).toEqual(['a'])
  })
})

describe('a prompt past the context window, as each upstream says it', () => {
  const said = (status: number, body: unknown) => upstreamErrorFrom({ provider: 'p', upstreamStatus: status, bodyText: JSON.stringify(body) })
  test('the window the message names, or the model’s own where it names none', () => {
    // OpenAI chat: the code, and the window in the message
    expect(exceededWindow(said(400, { error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 8202 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }), 128_000)).toBe(8192)
    // OpenAI Responses: the code alone
    expect(exceededWindow(said(400, { error: { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', type: 'invalid_request_error', code: 'context_length_exceeded' } }), 400_000)).toBe(400_000)
    // Anthropic, the prompt alone and with the output asked for
    expect(exceededWindow(said(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 219898 tokens > 200000 maximum' } }), 1_000_000)).toBe(200_000)
    expect(exceededWindow(said(400, { type: 'error', error: { type: 'invalid_request_error', message: 'input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again' } }), 1_000_000)).toBe(200_000)
    // vLLM, in its two spellings
    expect(exceededWindow(said(400, { object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", type: 'BadRequestError' }), 128_000)).toBe(4096)
    expect(exceededWindow(said(400, { object: 'error', message: "You passed 202753 input tokens and requested 0 output tokens. However, the model's context length is only 202752 tokens", type: 'BadRequestError' }), 128_000)).toBe(202_752)
  })
  test('any other failure is not one, nor the same words with another status', () => {
    expect(exceededWindow(said(400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: 20000 > 8192, which is the maximum allowed number of output tokens for claude-3-5-haiku-20241022' } }), 200_000)).toBeUndefined()
    expect(exceededWindow(said(429, { error: { message: 'prompt is too long for this minute', type: 'rate_limit_error' } }), 200_000)).toBeUndefined()
    expect(exceededWindow(said(500, { error: { message: 'maximum context length is 4096', type: 'server_error' } }), 200_000)).toBeUndefined()
    expect(exceededWindow(new Error('prompt is too long'), 200_000)).toBeUndefined()
  })
})
