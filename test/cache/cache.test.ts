// The exact response cache end to end, through the official SDKs against fake upstreams: a
// request opted in twice reaches the upstream once and its second answer is a hit recorded at
// no cost; a stream is replayed as the same events (pass-through and translated); another
// account misses unless the scope is global; tools and temperature > 0 are cached only when the
// request asks; the store stays under its bound, the answer used longest ago going first; and
// DELETE /admin/v1/cache empties it. On the shared stores (SWITCHYARD_TEST_SHARED=1) the same
// tests run on the Redis store.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { rmSync } from 'node:fs'
import { onSharedStores, startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const TEXT = fixture('openai/chat/nonstream-text.json')
const STREAM = fixture('openai/chat/stream-text-include-usage.sse')
const CLAUDE_TEXT = fixture('anthropic/messages/nonstream-text.json')
const CLAUDE_STREAM = fixture('anthropic/messages/stream-text.sse')
const RESPONSES_TEXT = fixture('openai/responses/nonstream-text.json')
const RESPONSES_STREAM = fixture('openai/responses/stream-text.sse')
const ADMIN = 'admin-token-cache-tests'
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] }
const cached = (ttl = 60) => ({ headers: { 'x-switchyard-cache': String(ttl) } })

let openai: FakeUpstream
let claude: FakeUpstream
beforeAll(async () => {
  ;[openai, claude] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
})
afterAll(async () => {
  await Promise.all([openai.stop(), claude.stop()])
})

let gw: Gateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
  openai.requests.length = 0
  claude.requests.length = 0
})

async function gateway(cache = '') {
  openai.script((r) => (r.json().stream ? { sse: STREAM } : { json: TEXT }))
  claude.script((r) => (r.json().stream ? { sse: CLAUDE_STREAM } : { json: CLAUDE_TEXT }))
  gw = await startGateway({
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN },
    yaml: `
providers:
  - { id: openai, kind: openai, base_url: ${openai.url}/v1, api_key: sk-o, max_retries: 0 }
  - { id: anthropic, kind: anthropic, base_url: ${claude.url}, api_key: sk-c, max_retries: 0 }
compat: { cross_family: translate }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
${cache}
`,
  })
  return { gw, client: sdk(gw.key) }
}

const sdk = (key: string) => new OpenAI({ baseURL: `${gw!.url}/api/alpha/v1`, apiKey: key, maxRetries: 0 })
const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${gw!.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...init.headers } })

async function keyOf(account: string): Promise<string> {
  const res = await admin('/admin/v1/keys', { method: 'POST', body: JSON.stringify({ name: `key of ${account}`, account }) })
  expect(res.status).toBe(201)
  return ((await res.json()) as { key: string }).key
}

/** The latest record of a reply id (a hit repeats its answer's id), as its key sees it. */
async function record(id: string, key = gw!.key) {
  const res = await fetch(`${gw!.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { generation: Record<string, any> }).generation
}

async function stats(): Promise<{ entries: number; bytes: number; max_bytes: number; store: string }> {
  return (await (await admin('/admin/v1/cache')).json()) as any
}

/** Stored once the record is made (the next turn after the reply): wait for it. */
async function until(ok: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('timed out')
    await Bun.sleep(10)
  }
}
const storedAtLeast = (n: number) => until(async () => (await stats()).entries >= n)

describe('the exact response cache', () => {
  test('two identical opted-in requests reach the upstream once; the second is a hit recorded cached at cost 0', async () => {
    const { client } = await gateway()
    const first = await client.chat.completions.create(ask, cached()).withResponse()
    expect(first.response.headers.get('x-switchyard-cache')).toBe('miss')
    const r1 = await record(first.data.id)
    expect(r1.cost).toBeGreaterThan(0)
    expect(r1.cached).toBeUndefined()
    await storedAtLeast(1)

    const second = await client.chat.completions.create(ask, cached()).withResponse()
    expect(second.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(second.data).toEqual(first.data)
    expect(openai.requests.length).toBe(1)
    const r2 = await record(second.data.id)
    expect(r2.gateway_id).not.toBe(r1.gateway_id)
    expect(r2.cached).toBe(true)
    expect(r2.cost).toBe(0)
    expect(r2.unpriced).toBe(false)
    // usage is counted as usual
    expect(r2.usage).toEqual(r1.usage)

    // a request that asks nothing is not answered from the cache, nor told about it
    const plain = await client.chat.completions.create(ask).withResponse()
    expect(plain.response.headers.get('x-switchyard-cache')).toBeNull()
    expect(openai.requests.length).toBe(2)
  })

  test('cache-control: max-age opts in too; an answer older than the max-age asked is not served', async () => {
    const { client } = await gateway()
    await client.chat.completions.create(ask, { headers: { 'cache-control': 'max-age=60' } })
    await storedAtLeast(1)
    const hit = await client.chat.completions.create(ask, { headers: { 'cache-control': 'max-age=60' } }).withResponse()
    expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit')
    await Bun.sleep(1_100)
    const stale = await client.chat.completions.create(ask, cached(1)).withResponse()
    expect(stale.response.headers.get('x-switchyard-cache')).toBe('miss')
    expect(openai.requests.length).toBe(2)
  })

  test('a stream hit replays the same events (pass-through: the same bytes)', async () => {
    const { gw } = await gateway()
    const raw = async () => {
      const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-switchyard-cache': '60' },
        body: JSON.stringify({ ...ask, stream: true, stream_options: { include_usage: true } }),
      })
      return { cache: res.headers.get('x-switchyard-cache'), text: await res.text() }
    }
    const first = await raw()
    expect(first.cache).toBe('miss')
    await storedAtLeast(1)
    const second = await raw()
    expect(second.cache).toBe('hit')
    expect(second.text).toBe(first.text)
    expect(openai.requests.length).toBe(1)

    // and through the SDK: the same chunks
    const events = async () => {
      const chunks: unknown[] = []
      for await (const c of await sdk(gw.key).chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } }, cached())) chunks.push(c)
      return chunks
    }
    expect(await events()).toEqual(await events())
    expect(openai.requests.length).toBe(1)
  })

  test('a long stream hit is handed on in reads, and replays the same bytes, a character outside the BMP across a read included', async () => {
    const { gw } = await gateway()
    // events of emoji (two UTF-16 units each) past 64 KiB, once with one character more ahead of
    // them: one of the two puts a character's halves on either side of a read's end
    const long = (pad: string) => {
      const chunk = (content: string) => `data: ${JSON.stringify({ id: 'chatcmpl-long', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
      return chunk(pad) + Array.from({ length: 400 }, () => chunk('😀'.repeat(100))).join('') + `data: ${JSON.stringify({ id: 'chatcmpl-long', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 400, total_tokens: 401 } })}\n\ndata: [DONE]\n\n`
    }
    for (const pad of ['a', 'ab']) {
      const sse = long(pad)
      openai.script(() => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }))
      const raw = async () => {
        const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-switchyard-cache': '60' },
          body: JSON.stringify({ ...ask, messages: [{ role: 'user', content: pad }], stream: true, stream_options: { include_usage: true } }),
        })
        return { cache: res.headers.get('x-switchyard-cache'), text: await res.text() }
      }
      const first = await raw()
      expect(first.cache).toBe('miss')
      // (compared as booleans: a failure would print 100 KB)
      expect(first.text === sse).toBe(true)
      await storedAtLeast(pad.length)
      const second = await raw()
      expect(second.cache).toBe('hit')
      expect(second.text === sse).toBe(true)
    }
  })

  test('a translated stream (chat to a Claude upstream) is replayed from the upstream events: the same text and usage', async () => {
    const { client } = await gateway()
    const run = async () => {
      const { data, response } = await client.chat.completions.create({ ...ask, model: 'claude-haiku-4-5', stream: true, stream_options: { include_usage: true } }, cached()).withResponse()
      let text = ''
      let usage: unknown
      for await (const c of data) {
        text += c.choices[0]?.delta?.content ?? ''
        if (c.usage) usage = c.usage
      }
      return { cache: response.headers.get('x-switchyard-cache'), text, usage }
    }
    const first = await run()
    await storedAtLeast(1)
    const second = await run()
    expect(first.cache).toBe('miss')
    expect(second.cache).toBe('hit')
    expect(second.text).toBe(first.text)
    expect(second.text.length).toBeGreaterThan(0)
    expect(second.usage).toEqual(first.usage)
    expect(claude.requests.length).toBe(1)

    // the messages surface on the same upstream asks another upstream request: its own entry
    const anthropic = new Anthropic({ baseURL: `${gw!.url}/api/beta`, apiKey: gw!.key, maxRetries: 0 })
    const m1 = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, cached())
    await storedAtLeast(2)
    const m2 = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, cached()).withResponse()
    expect(m2.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(m2.data).toEqual(m1)
    expect(claude.requests.length).toBe(2)

    // beta features change the answer and go upstream as a header: each set its own entry, in any order
    const beta = async (betas: string) =>
      (await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { headers: { ...cached().headers, 'anthropic-beta': betas } }).withResponse()).response.headers.get('x-switchyard-cache')
    expect(await beta('context-1m-2025-08-07')).toBe('miss')
    expect(claude.requests.at(-1)!.headers['anthropic-beta']).toBe('context-1m-2025-08-07')
    await storedAtLeast(3)
    expect(await beta('context-1m-2025-08-07')).toBe('hit')
    expect(await beta('context-1m-2025-08-07,output-128k-2025-02-19')).toBe('miss')
    await storedAtLeast(4)
    expect(await beta('output-128k-2025-02-19, context-1m-2025-08-07')).toBe('hit')
    expect(claude.requests.length).toBe(4)
  })

  test('the responses surface: a hit answers the same response, JSON and streamed', async () => {
    const { client } = await gateway()
    openai.script((r) => (r.json().stream ? { sse: RESPONSES_STREAM } : { json: RESPONSES_TEXT }))
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }, cached())
    await storedAtLeast(1)
    const second = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }, cached()).withResponse()
    expect(second.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(second.data.output_text).toBe(first.output_text)
    expect(second.data.id).toBe(first.id)
    const events = async () => {
      const types: string[] = []
      for await (const e of await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true }, cached())) types.push(e.type)
      return types
    }
    const streamed = await events()
    await storedAtLeast(2)
    expect(await events()).toEqual(streamed)
    expect(streamed).toContain('response.completed')
    expect(openai.requests.length).toBe(2)
    expect((await record(first.id)).cached).toBe(true)
  })

  // the cache keys on the upstream request, which holds the conversation's items: a turn is
  // served from it only where the history is the same, and a hit is a turn like another
  test('a turn in a conversation: a hit only on the same items, the hit turn added to its own conversation; another account (global scope) is told its own', async () => {
    const { client } = await gateway('cache: { scope: global }')
    openai.script(() => ({ json: RESPONSES_TEXT }))
    const items = async (id: string) => (await client.conversations.items.list(id, { order: 'asc' })).data.map((it: any) => `${it.role}: ${it.content[0].text}`)
    const a = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'my name is Ada' }] })
    const b = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'my name is Ada' }] })
    const other = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'my name is Bob' }] })
    await client.responses.create({ model: 'gpt-4o-mini', conversation: a.id, input: 'hi' }, cached())
    await storedAtLeast(1)
    const hit = await client.responses.create({ model: 'gpt-4o-mini', conversation: b.id, input: 'hi' }, cached()).withResponse()
    expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(hit.data.conversation).toEqual({ id: b.id })
    expect(await items(b.id)).toEqual(['user: my name is Ada', 'user: hi', 'assistant: The capital of France is Paris.'])
    const miss = await client.responses.create({ model: 'gpt-4o-mini', conversation: other.id, input: 'hi' }, cached()).withResponse()
    expect(miss.response.headers.get('x-switchyard-cache')).toBe('miss')
    // a's next turn has a's longer history: not b's answer to the first
    const next = await client.responses.create({ model: 'gpt-4o-mini', conversation: a.id, input: 'hi' }, cached()).withResponse()
    expect(next.response.headers.get('x-switchyard-cache')).toBe('miss')
    const acme = sdk(await keyOf('acme'))
    const theirs = await acme.conversations.create({ items: [{ type: 'message', role: 'user', content: 'my name is Ada' }] })
    const shared = await acme.responses.create({ model: 'gpt-4o-mini', conversation: theirs.id, input: 'hi' }, cached()).withResponse()
    expect(shared.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(shared.data.conversation).toEqual({ id: theirs.id })
    expect(JSON.stringify(shared.data)).not.toContain(a.id)
    expect(openai.requests.length).toBe(3)
  })

  test('another account misses; another key of the same account hits; scope global shares across accounts', async () => {
    const { client } = await gateway()
    await client.chat.completions.create(ask, cached())
    await storedAtLeast(1)
    const sameAccount = await sdk(await keyOf('default')).chat.completions.create(ask, cached()).withResponse()
    expect(sameAccount.response.headers.get('x-switchyard-cache')).toBe('hit')
    const other = await sdk(await keyOf('acme')).chat.completions.create(ask, cached()).withResponse()
    expect(other.response.headers.get('x-switchyard-cache')).toBe('miss')
    expect(openai.requests.length).toBe(2)
    await gw!.stop()
    gw = undefined

    const g = await gateway('cache: { scope: global }')
    await g.client.chat.completions.create(ask, cached())
    await storedAtLeast(1)
    const acme = await sdk(await keyOf('acme')).chat.completions.create(ask, cached()).withResponse()
    expect(acme.response.headers.get('x-switchyard-cache')).toBe('hit')
  })

  test("a hit never hands one caller the identifiers another gave (the Responses API echoes them): those who gave others miss", async () => {
    const { client } = await gateway()
    const echoed = ['user', 'safety_identifier', 'prompt_cache_key', 'metadata'] as const
    openai.script((r) => {
      const body = r.json()
      return { json: { ...JSON.parse(RESPONSES_TEXT), ...Object.fromEntries(echoed.map((k) => [k, body[k] ?? null])) } }
    })
    const alice = { model: 'gpt-4o-mini', input: 'hi', user: 'alice@example.com', safety_identifier: 'alice-1', prompt_cache_key: 'alice-k', metadata: { user_id: 'alice' } }
    await client.responses.create(alice, cached())
    await storedAtLeast(1)
    const bob = sdk(await keyOf('default'))
    const own = await bob.responses.create({ ...alice, user: 'bob@example.com', safety_identifier: 'bob-1', prompt_cache_key: 'bob-k', metadata: { user_id: 'bob' } }, cached()).withResponse()
    expect(own.response.headers.get('x-switchyard-cache')).toBe('miss')
    expect(own.data).toMatchObject({ user: 'bob@example.com', safety_identifier: 'bob-1', prompt_cache_key: 'bob-k', metadata: { user_id: 'bob' } })
    for (const [k, v] of [['safety_identifier', 'bob-2'], ['metadata', { user_id: 'bob' }]] as const) {
      const one = await bob.responses.create({ ...alice, [k]: v }, cached()).withResponse()
      expect(one.response.headers.get('x-switchyard-cache')).toBe('miss')
    }
    // the same request with the same identifiers is the same answer
    const same = await bob.responses.create(alice, cached()).withResponse()
    expect(same.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(openai.requests.length).toBe(4)
  })

  test('config opts a model in; tools and temperature > 0 are cached only when the request asks; no-store opts out', async () => {
    const { client } = await gateway('cache: { models: { gpt-4o-mini: 60 } }')
    const header = async (req: Parameters<typeof client.chat.completions.create>[0], opts?: Parameters<typeof client.chat.completions.create>[1]) =>
      (await client.chat.completions.create(req, opts).withResponse()).response.headers.get('x-switchyard-cache')

    expect(await header(ask)).toBe('miss')
    await storedAtLeast(1)
    expect(await header(ask)).toBe('hit')
    expect(await header({ ...ask, temperature: 0 })).toBe('miss')

    const warm = { ...ask, temperature: 0.7 }
    expect(await header(warm)).toBeNull()
    expect(await header(warm)).toBeNull()
    const tools = { ...ask, tools: [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }
    expect(await header(tools)).toBeNull()
    expect(await header(tools)).toBeNull()
    const sent = openai.requests.length

    expect(await header(warm, cached())).toBe('miss')
    await storedAtLeast(3)
    expect(await header(warm, cached())).toBe('hit')
    expect(await header(tools, cached())).toBe('miss')
    await storedAtLeast(4)
    expect(await header(tools, cached())).toBe('hit')
    expect(openai.requests.length).toBe(sent + 2)

    // the client's own no-store (or a TTL of 0) keeps a configured request out
    expect(await header(ask, { headers: { 'cache-control': 'no-store' } })).toBeNull()
    expect(await header(ask, cached(0))).toBeNull()
    expect(openai.requests.length).toBe(sent + 4)
  })

  // a client that wrote `5m` or `-1` asked for caching (or to stay out of it): served silently
  // uncached, or cached on the config's TTL though it said no-store, it would never know
  test('x-switchyard-cache takes seconds in digits, or no-cache/no-store; anything else is a 400 naming it, before any call', async () => {
    const { gw } = await gateway('cache: { models: { gpt-4o-mini: 60 } }')
    const send = (value: string) =>
      fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-switchyard-cache': value },
        body: JSON.stringify(ask),
      })
    for (const bad of ['5m', '-1', '0x10', '1.5', '1e3', 'yes']) {
      const res = await send(bad)
      expect(res.status).toBe(400)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(((await res.json()) as { error: string }).error).toContain('x-switchyard-cache')
    }
    expect(openai.requests.length).toBe(0)
    const first = await send('60')
    expect(first.headers.get('x-switchyard-cache')).toBe('miss')
    await first.text()
    await storedAtLeast(1)
    // the header's own no-store keeps out a request the config caches
    for (const out of ['no-store', 'No-Cache']) {
      const res = await send(out)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-switchyard-cache')).toBeNull()
      await res.text()
    }
    expect(openai.requests.length).toBe(3)
  })

  test('a key opted in by config is cached; an upstream error is never kept', async () => {
    // the key's id is the store's: a first start makes it, the config names it on the next
    const dataDir = tempDir()
    const first = await startGateway({ dataDir, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
    const keys = (await (await fetch(`${first.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: { id: string }[] }
    await first.stop()
    openai.script({ status: 400, json: { error: { message: 'bad request', type: 'invalid_request_error' } } }, { json: TEXT })
    const yaml = `
providers: [{ id: openai, kind: openai, base_url: ${openai.url}/v1, api_key: sk-o, max_retries: 0 }]
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
cache: { keys: { ${keys.data[0]!.id}: 60 } }
`
    const again = await startGateway({ dataDir, yaml, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
    gw = { ...again, key: first.key, stop: async () => (await again.stop(), rmSync(dataDir, { recursive: true, force: true })) }
    const c = sdk(first.key)
    const header = async () => (await c.chat.completions.create(ask).withResponse()).response.headers.get('x-switchyard-cache')
    const err = await c.chat.completions.create(ask).catch((e) => e)
    expect(err.status).toBe(400)
    await Bun.sleep(50)
    expect((await stats()).entries).toBe(0)
    expect(await header()).toBe('miss')
    await storedAtLeast(1)
    expect(await header()).toBe('hit')
    expect(openai.requests.length).toBe(2)
    // a key the config does not name is not cached
    const other = sdk(await keyOf('default'))
    expect((await other.chat.completions.create(ask).withResponse()).response.headers.get('x-switchyard-cache')).toBeNull()
  })

  test('the store stays under max_bytes, dropping the answer used longest ago; DELETE /admin/v1/cache empties it', async () => {
    // answers of about 1 KiB each in a 4 KiB store
    const answer = (n: number) =>
      JSON.stringify({
        id: `chatcmpl-${n}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', system_fingerprint: 'x'.repeat(800 + 10 * n),
        choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
      })
    const { client } = await gateway('cache: { max_bytes: 4096 }')
    openai.script((r) => ({ json: answer(Number(r.json().messages[0].content)) }))
    const say = async (n: number) => (await client.chat.completions.create({ ...ask, messages: [{ role: 'user', content: String(n) }] }, cached()).withResponse()).response.headers.get('x-switchyard-cache')
    // each of a size of its own, so that a store shows in the bytes held; any three fit, no four
    const sizes = [1, 2, 3, 4, 5, 6, 7].map((n) => Buffer.byteLength(answer(n)) + 'application/json'.length)
    expect(Math.max(...sizes) * 3).toBeLessThanOrEqual(4096)
    expect(Math.min(...sizes) * 4).toBeGreaterThan(4096)

    // what a store bounded by LRU holds: most recently used last
    const lru: number[] = []
    const held = () => lru.reduce((sum, n) => sum + sizes[n - 1]!, 0)
    /** Sends n, a miss: once its answer is stored, the store holds what LRU keeps, and never more than its bound on the way. */
    const fresh = async (n: number) => {
      const sent = openai.requests.length
      expect(await say(n)).toBe('miss')
      expect(openai.requests.length).toBe(sent + 1)
      lru.push(n)
      while (held() > 4096) lru.shift()
      await until(async () => {
        const s = await stats()
        expect(s.bytes).toBeLessThanOrEqual(s.max_bytes)
        return s.bytes === held() && s.entries === lru.length
      })
    }
    const hit = async (n: number) => {
      expect(await say(n)).toBe('hit')
      lru.push(...lru.splice(lru.indexOf(n), 1))
    }
    // on the shared stores, the cluster's store (Redis); alone, the database
    expect((await stats()).store).toBe(onSharedStores && process.env.SWITCHYARD_TEST_REDIS_URL ? 'redis' : 'db')
    for (const n of [1, 2, 3]) await fresh(n)
    expect(lru).toEqual([1, 2, 3])
    // three fit, a fourth does not: the one used longest ago goes, not the oldest stored
    await hit(1)
    await fresh(4)
    expect(lru).toEqual([3, 1, 4])
    await hit(1)
    await hit(3)
    for (const n of [2, 5, 6, 7]) await fresh(n)
    expect(lru).toEqual([5, 6, 7])
    await hit(7)
    await hit(5)
    await fresh(3)
    expect(lru).toEqual([7, 5, 3])

    const del = await admin('/admin/v1/cache', { method: 'DELETE' })
    expect(del.status).toBe(200)
    expect(((await del.json()) as { deleted: number }).deleted).toBe(3)
    expect(await stats()).toMatchObject({ entries: 0, bytes: 0 })
    expect(await say(6)).toBe('miss')

    // the admin token guards it
    const anon = await fetch(`${gw!.url}/admin/v1/cache`, { method: 'DELETE', headers: { authorization: `Bearer ${gw!.key}` } })
    expect(anon.status).toBe(401)
  })
})

describe('the database store', () => {
  // an answer is put once its record is made, after the reply went out: the client that asks
  // again at once, while the write is still going (a few round trips on PostgreSQL), is answered
  // as it would be a moment later
  test('an answer put and not yet written is served to the next lookup', async () => {
    const { DbCacheStore } = await import('../../src/cache/db-store.ts')
    const { openSqlite } = await import('../../src/db/client.ts')
    const dir = tempDir('switchyard-cache-store-')
    const storage = openSqlite(dir)
    try {
      const store = new DbCacheStore(storage.sql, 1 << 20)
      const answer = { status: 200, contentType: 'application/json', body: TEXT }
      const written = store.put('k', answer, 60_000)
      expect(await store.get('k', 60_000)).toEqual(answer)
      await written
      expect(await store.get('k', 60_000)).toEqual(answer)
      expect((await store.stats()).entries).toBe(1)
    } finally {
      storage.close?.()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the database store, cleared', () => {
  // a clear empties the cache: an answer put just before it (its write still queued behind
  // others) must not be written after the clear and come back
  test('an answer put just before a clear is gone after it', async () => {
    const { DbCacheStore } = await import('../../src/cache/db-store.ts')
    const { openSqlite } = await import('../../src/db/client.ts')
    const dir = tempDir('switchyard-cache-clear-')
    const storage = openSqlite(dir)
    try {
      const store = new DbCacheStore(storage.sql, 1 << 20)
      const answer = { status: 200, contentType: 'application/json', body: TEXT }
      const written = store.put('k', answer, 60_000).catch(() => {})
      await store.clear()
      await written
      expect(await store.get('k', 60_000)).toBeUndefined()
      expect((await store.stats()).entries).toBe(0)
    } finally {
      storage.close?.()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
