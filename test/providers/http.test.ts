// Upstream calls: retries with backoff, Retry-After, timeouts, abort propagation, status
// mapping — against the fake upstream over real sockets.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { collect } from '../../src/ir/collect.ts'
import { OpenAIAdapter } from '../../src/providers/openai/adapter.ts'
import { AnthropicAdapter } from '../../src/providers/anthropic/adapter.ts'
import { backoffMs, RETRY, retryAfterMs } from '../../src/providers/http.ts'
import { statusRule, upstreamErrorFrom } from '../../src/providers/errors.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { retryable } from '../../src/routing/choose.ts'
import { DEFAULT_ROUTING } from '../../src/config/providers.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { claude, ctx, model, providerConfig, request, TEST_KEY } from './support.ts'
import { rememberSecrets, withoutSecrets } from '../../src/lib/secrets.ts'

let up: FakeUpstream
beforeAll(async () => {
  up = await startFakeUpstream()
})
afterAll(() => up.stop())

const busy = { status: 503, json: { error: { message: 'The server is overloaded', type: 'server_error' } } }
const ok = { json: fixture('openai/chat/nonstream-tool-calls-sdk.json') }
const openai = (over = {}) => new OpenAIAdapter(providerConfig('openai', up.url, over))

function count<T>(fn: () => Promise<T>) {
  const before = up.requests.length
  return fn().then(
    (v) => ({ value: v, error: undefined as any, calls: up.requests.length - before }),
    (e) => ({ value: undefined, error: e, calls: up.requests.length - before }),
  )
}

describe('retries', () => {
  test('503 twice then 200: succeeds on the third attempt', async () => {
    up.script(busy, busy, ok)
    const r = await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))
    expect(r.error).toBeUndefined()
    expect(r.calls).toBe(3)
    expect(r.value!.id).toBe('chatcmpl-C47Kq8W5o5oyHrSsFxAXNqpkaq9Jf')
  })

  test('503 three times with maxRetries 2: the 503 reaches the caller after three attempts', async () => {
    up.script(busy)
    const r = await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))
    expect(r.calls).toBe(3)
    expect(r.error).toBeInstanceOf(UpstreamError)
    expect(r.error.status).toBe(503)
    expect(r.error.message).toBe('The server is overloaded')
  })

  test('429 with Retry-After: waited for, and passed on once retries are exhausted', async () => {
    up.script({ status: 429, headers: { 'retry-after': '0.2' }, json: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } })
    const t0 = performance.now()
    const r = await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))
    expect(r.calls).toBe(3)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390)
    expect(r.error.status).toBe(429)
    expect(r.error.retryAfter).toBe('0.2')
    expect(r.error.type).toBe('rate_limit_exceeded')
  })

  test('a Retry-After longer than the gateway waits goes to the client at once', async () => {
    up.script({ status: 429, headers: { 'retry-after': '60' }, json: { error: { message: 'slow down' } } })
    const r = await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))
    expect(r.calls).toBe(1)
    expect(r.error.retryAfter).toBe('60')
  })

  test('4xx and credential failures are never retried', async () => {
    up.script({ status: 401, json: fixture('openai/chat/error-401-invalid-api-key.json') })
    const r = await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))
    expect(r.calls).toBe(1)
    expect(r.error.status).toBe(502)
    up.script({ status: 400, json: fixture('openai/chat/error-400-unsupported-value.json') })
    expect((await count(() => openai({ maxRetries: 2 }).generate(request(), ctx()))).calls).toBe(1)
  })

  test('stream: a 503 before any output is retried; the stream then flows', async () => {
    up.script(busy, { sse: fixture('openai/chat/stream-tool-call-single.sse') })
    const r = await count(async () => collect(await openai({ maxRetries: 1 }).stream(request({ stream: true }), ctx())))
    expect(r.calls).toBe(2)
    expect(r.value!.finish.reason).toBe('tool_calls')
  })

  test('connect errors are retried, then reported as 502 without the key', async () => {
    const dead = Bun.serve({ port: 0, fetch: () => new Response('') })
    const url = `http://127.0.0.1:${dead.port}`
    await dead.stop(true)
    const adapter = new OpenAIAdapter(providerConfig('openai', url, { maxRetries: 1 }))
    const err = await adapter.generate(request(), ctx()).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(502)
    expect(err.message).toMatch(/could not reach upstream openai/)
    expect(err.message).not.toContain(TEST_KEY)
  })

  test("the gateway's own machine out of descriptors (EMFILE) is a 503 to retry, tried once, and no fault of the deployment's", async () => {
    let sends = 0
    // what Bun's fetch throws at the open-files limit
    const transport = async (): Promise<Response> => {
      sends++
      throw Object.assign(new TypeError('EMFILE: Was there a typo in the url or port?'), { code: 'EMFILE' })
    }
    const adapter = new OpenAIAdapter(providerConfig('openai', up.url, { maxRetries: 2 }), { transport })
    const err = await adapter.generate(request(), ctx()).catch((e) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(503)
    expect(err.retryAfter).toBe('1')
    expect(err.message).toContain('out of resources (EMFILE)')
    expect(sends).toBe(1)
    // not a connect failure of the upstream's: no other deployment, no rest for this one
    expect(retryable(err, DEFAULT_ROUTING.retryOn)).toBe(false)
  })

  test('backoff grows exponentially, capped, with jitter', () => {
    expect(backoffMs(0, () => 1)).toBe(RETRY.baseMs)
    expect(backoffMs(0, () => 0)).toBe(RETRY.baseMs / 2)
    expect(backoffMs(3, () => 1)).toBe(RETRY.baseMs * 8)
    expect(backoffMs(20, () => 1)).toBe(RETRY.capMs)
    expect(retryAfterMs('2')).toBe(2000)
    expect(retryAfterMs(new Date(Date.now() + 3000).toUTCString())).toBeGreaterThan(1000)
    expect(retryAfterMs('soon')).toBeUndefined()
  })
})

describe('timeouts and aborts', () => {
  test('no answer within timeoutMs → 504, the upstream connection closed', async () => {
    up.script({ waitMs: 2_000, json: '{}' })
    const t0 = performance.now()
    const err = await openai({ timeoutMs: 150, maxRetries: 0 }).generate(request(), ctx()).catch((e) => e)
    expect(performance.now() - t0).toBeLessThan(1_500)
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err.status).toBe(504)
    await up.requests.at(-1)!.closed
  })

  test('the timeout stops applying once the stream has started', async () => {
    up.script({ sse: fixture('openai/chat/stream-tool-call-single.sse'), delayMs: 40 })
    const r = await collect(await openai({ timeoutMs: 150, maxRetries: 0 }).stream(request({ stream: true }), ctx()))
    expect(r.finish.reason).toBe('tool_calls')
  })

  test('caller aborts mid-stream → the upstream sees its connection closed', async () => {
    up.script({ sse: fixture('anthropic/messages/stream-text.sse'), hold: true })
    const ac = new AbortController()
    const adapter = new AnthropicAdapter(providerConfig('anthropic', up.url))
    const events = await adapter.stream(request({ stream: true }), ctx(claude(), ac.signal))
    const sent = up.requests.at(-1)!
    let n = 0
    const reading = (async () => {
      for await (const e of events) if (e.type === 'text-delta' && ++n === 2) ac.abort()
    })()
    await Promise.race([sent.closed, Bun.sleep(3_000).then(() => { throw new Error('upstream never saw the close') })])
    expect(sent.disconnected).toBe(true)
    await reading.catch(() => {})
    expect(n).toBeGreaterThanOrEqual(2)
  })

  test('caller aborts before the upstream answered → rejects with the abort, upstream connection closed, no retry', async () => {
    up.script({ waitMs: 3_000, json: '{}' })
    const ac = new AbortController()
    const before = up.requests.length
    const pending = openai({ maxRetries: 2 }).generate(request(), ctx(model(), ac.signal)).catch((e) => e)
    while (up.requests.length === before) await Bun.sleep(5)
    ac.abort()
    const err = await pending
    expect(err).not.toBeInstanceOf(UpstreamError)
    expect((err as Error).name).toBe('AbortError')
    await up.requests.at(-1)!.closed
    await Bun.sleep(50)
    expect(up.requests.length - before).toBe(1)
  })
})

describe('status table', () => {
  test('one table: statuses and retryability', () => {
    const rows = [400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504, 529, 418, 599].map((s) => [s, statusRule(s).status, statusRule(s).retryable])
    expect(rows).toEqual([
      [400, 400, false], [401, 502, false], [403, 502, false], [404, 400, false], [409, 400, false], [413, 413, false], [422, 400, false],
      [429, 429, true], [500, 502, true], [502, 502, true], [503, 503, true], [504, 504, true], [529, 503, true], [418, 400, false], [599, 502, true],
    ])
  })

  test('nor does part of a key, masked or cut short, nor the shape of one', () => {
    for (const quoted of [`${TEST_KEY.slice(0, 20)}`, 'sk-proj-abc1**********************xyz9', 'sk-ant-api03-Zx9_part']) {
      const e = upstreamErrorFrom({ provider: 'openai', upstreamStatus: 400, bodyText: JSON.stringify({ error: { message: `Incorrect API key provided: ${quoted}. You can find your API key at https://platform.openai.com/account/api-keys.` } }), apiKey: TEST_KEY })
      expect(e.message).toContain('Incorrect API key provided: [redacted]. You can find')
    }
    // words that merely hold the letters, or name something, are left alone
    const named = 'a risk-free task-list for tool sk-search-tool and sk-learn-regressor'
    const plain = upstreamErrorFrom({ provider: 'openai', upstreamStatus: 400, bodyText: JSON.stringify({ error: { message: named } }), apiKey: TEST_KEY })
    expect(plain.message).toContain(named)
    expect(withoutSecrets('key-sk-proj-Abc123def456ghi789jkl, web-sk-lookup')).toBe('key-[redacted], web-sk-lookup')
    // a relayed event's raw JSON: the key right after an escaped line break
    expect(withoutSecrets('{"error":{"message":"Incorrect API key provided:\\nsk-proj-REALKEY12***XYZ"}}')).toBe('{"error":{"message":"Incorrect API key provided:\\n[redacted]"}}')
  })

  test('a megabyte of one word is looked through in one pass (no regex starts over at each of its characters)', () => {
    const mb = (unit: string, end = '') => unit.repeat(Math.ceil(1_000_000 / unit.length)) + end
    for (const unit of ['sk-', 'SK_', 'a', 'a-', '*', '****a', 'sk-.', '\\u0022a', '%22a', 'a_']) {
      const t0 = performance.now()
      withoutSecrets(mb(unit, ' ****'))
      // a scan that starts over is minutes here; one pass is milliseconds, on a loaded machine tens
      expect({ unit, slow: performance.now() - t0 > 1000 }).toEqual({ unit, slow: false })
    }
    // asterisks that mask nothing, or little, are markdown, not a key
    const azure = '8f3a9c2e1d4b5a6f7e8d9c0b1a2f3e4d'
    rememberSecrets([TEST_KEY, azure])
    expect(withoutSecrets('**bold**, ***both*** and **** alone; ****6789')).toBe('**bold**, ***both*** and **** alone; [redacted]')
    // a masked word that shows no held key's start or end is someone's text, not our secret
    expect(withoutSecrets('Hello****world, card ending ****1234, ab12****cd34')).toBe('Hello****world, card ending ****1234, ab12****cd34')
    expect(withoutSecrets(`key ${azure.slice(0, 6)}**********, an id cus_sk_live4eC39HqLyjWDarjtT1zdp7dc`)).toBe('key [redacted], an id cus_sk_live4eC39HqLyjWDarjtT1zdp7dc')
    // the dots that end a sentence are not the key's
    expect(withoutSecrets('Incorrect API key provided: sk-abc1...wxyz. Try sk-learn...')).toBe('Incorrect API key provided: [redacted]. Try sk-learn...')
  })

  test('our key never survives into a message', () => {
    const e = upstreamErrorFrom({ provider: 'openai', upstreamStatus: 400, bodyText: JSON.stringify({ error: { message: `bad key ${TEST_KEY} here` } }), apiKey: TEST_KEY })
    expect(e.message).toBe('bad key [redacted] here')
    const plain = upstreamErrorFrom({ provider: 'openai', upstreamStatus: 502, bodyText: 'Bad gateway' })
    expect(plain.message).toBe('Bad gateway')
  })

  test("a proxy's HTML page is named by its title, never handed on with its markup (it may name the operator's hosts)", () => {
    const page = '<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1><p>upstream 10.0.3.17:8443 refused</p><hr>nginx/1.25</body></html>'
    const e = upstreamErrorFrom({ provider: 'openai', upstreamStatus: 502, bodyText: page })
    expect(e.message).toBe('upstream openai answered HTTP 502 with an HTML page titled "502 Bad Gateway"')
    expect(upstreamErrorFrom({ provider: 'openai', upstreamStatus: 503, bodyText: '<!DOCTYPE html><body>down at 10.0.3.17</body>' }).message).toBe('upstream openai answered HTTP 503 with an HTML page')
  })
})
