// Stored responses as OpenAI's API has them (retrieve, input items, delete, cancel), threads
// keyed by the gateway's own row (an upstream that repeats a response id overwrites nobody's
// thread), a bound on a thread's stored size, and a stored response that a client has received
// surviving a kill -9.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { NO_LIMITS } from '../batches/helpers.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, startGateway, type Gateway } from '../helpers/server.ts'

const client = (g: Gateway, key = g.key) => new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
const status = async (p: Promise<unknown>) => {
  try {
    await p
    return 200
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e.status
    throw e
  }
}

describe('the response object routes', () => {
  let g: Gateway
  let other: string
  beforeAll(async () => {
    g = await startGateway({ env: NO_LIMITS })
    other = (await g.services.keys.create({ name: 'other' })).key
  })
  afterAll(() => g.stop())

  test('retrieve, list input items, delete; then the id is gone for retrieve and continuation', async () => {
    const openai = client(g)
    const r = await openai.responses.create({ model: 'mock-gpt', input: [{ role: 'user', content: 'mock: text first' }, { role: 'user', content: 'and second' }] })
    const got = await openai.responses.retrieve(r.id)
    expect(got.id).toBe(r.id)
    expect(got.object).toBe('response')
    expect(got.status).toBe('completed')
    expect(JSON.stringify(got.output)).toBe(JSON.stringify(r.output))
    const items = await openai.responses.inputItems.list(r.id, { order: 'asc' })
    expect(items.data.length).toBe(2)
    expect(JSON.stringify(items.data[0])).toContain('mock: text first')
    // paged: one at a time, newest first by default
    const page = await openai.responses.inputItems.list(r.id, { limit: 1 })
    expect(page.data.length).toBe(1)
    expect(JSON.stringify(page.data[0])).toContain('and second')
    expect(page.has_more).toBe(true)
    const next = await openai.responses.inputItems.list(r.id, { limit: 1, after: page.data[0]!.id })
    expect(JSON.stringify(next.data[0])).toContain('mock: text first')
    expect(next.has_more).toBe(false)
    // before: the items ahead of one, in the order asked; an unknown one is a 400 naming it
    const ahead = await openai.responses.inputItems.list(r.id, { order: 'asc', before: items.data[1]!.id } as never)
    expect(ahead.data.map((it) => it.id)).toEqual([items.data[0]!.id])
    expect(ahead.has_more).toBe(false)
    const unknown = await fetch(`${g.url}/api/alpha/v1/responses/${r.id}/input_items?before=msg_nope`, { headers: { authorization: `Bearer ${g.key}` } })
    expect(unknown.status).toBe(400)
    expect(((await unknown.json()) as { error: string }).error).toContain('before: no input item "msg_nope"')

    const cancel = await fetch(`${g.url}/api/v1/responses/${r.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${g.key}` } })
    expect(cancel.status).toBe(400)
    expect(((await cancel.json()) as { error: string }).error).toContain('background')

    // standalone compaction is not offered: a 404 that says what to send instead, not a 405 for an id "compact"
    for (const root of ['/api/alpha/v1', '/api/v1']) {
      const compact = await fetch(`${g.url}${root}/responses/compact`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', input: 'hi' }) })
      expect(compact.status).toBe(404)
      expect(((await compact.json()) as { error: string }).error).toContain('context_management')
    }

    const deleted = await fetch(`${g.url}/api/v1/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${g.key}` } })
    expect(await deleted.json()).toEqual({ id: r.id, object: 'response', deleted: true })
    expect(await status(openai.responses.retrieve(r.id))).toBe(404)
    const cont = await fetch(`${g.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', previous_response_id: r.id, input: 'again' }),
    })
    expect(cont.status).toBe(400)
    expect(((await cont.json()) as { error: string }).error).toContain(r.id)
  })

  test('an input with one item id twice is a 400 naming both places: paging by that id would never end', async () => {
    const openai = client(g)
    const input = [0, 1, 2].map((i) => ({ type: 'message' as const, id: i === 1 ? 'msg_own' : 'msg_dup', role: 'user' as const, content: `mock: text ${i}` }))
    const err = await openai.responses.create({ model: 'mock-gpt', input }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(String(err.error)).toContain('input[2].id: duplicate item id "msg_dup" (input[0] has it too)')
    // distinct ids page through once each
    const r = await openai.responses.create({ model: 'mock-gpt', input: input.map((it, i) => ({ ...it, id: `msg_${i}` })) })
    const ids: string[] = []
    for await (const it of openai.responses.inputItems.list(r.id, { limit: 1, order: 'asc' })) ids.push(it.id)
    expect(ids).toEqual(['msg_0', 'msg_1', 'msg_2'])
  })

  test("another key's response is a 404 on every route", async () => {
    const r = await client(g).responses.create({ model: 'mock-gpt', input: 'mine' })
    const them = client(g, other)
    expect(await status(them.responses.retrieve(r.id))).toBe(404)
    expect(await status(them.responses.inputItems.list(r.id))).toBe(404)
    expect(await status(them.responses.delete(r.id))).toBe(404)
    expect(await status(them.responses.cancel(r.id))).toBe(404)
    // and it is still there for its own key
    expect((await client(g).responses.retrieve(r.id)).id).toBe(r.id)
  })

  test('deleting a response while requests continue it never answers 500', async () => {
    const openai = client(g)
    const r = await openai.responses.create({ model: 'mock-gpt', input: 'base' })
    const statuses = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        fetch(`${g.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', previous_response_id: r.id, input: 'more' }) }).then((x) => x.status),
      ),
      fetch(`${g.url}/api/v1/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${g.key}` } }).then((x) => x.status),
    ])
    for (const s of statuses) expect([200, 400, 404]).toContain(s)
  })
})

describe('threads are keyed by the gateway, not by the upstream id', () => {
  let g: Gateway
  let up: FakeUpstream
  let b: string
  beforeAll(async () => {
    up = await startFakeUpstream()
    g = await startGateway({ env: { ...NO_LIMITS, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url } })
    b = (await g.services.keys.create({ name: 'b' })).key
  })
  afterAll(async () => {
    await g.stop()
    await up.stop()
  })
  const same = () => ({ json: { ...fixtureJson('openai/responses/nonstream-text.json'), id: 'resp_repeated' } })

  test("an upstream that answers two keys with one id: each key's thread is its own", async () => {
    up.script(same())
    const a1 = await client(g).responses.create({ model: 'gpt-4o-mini', input: 'alpha secret' })
    const b1 = await client(g, b).responses.create({ model: 'gpt-4o-mini', input: 'bravo secret' })
    expect(a1.id).toBe(b1.id)
    await client(g).responses.create({ model: 'gpt-4o-mini', previous_response_id: a1.id, input: 'go on' })
    const sent = JSON.stringify(up.requests.at(-1)!.json().input)
    expect(sent).toContain('alpha secret')
    expect(sent).not.toContain('bravo secret')
  })

  test('an upstream that repeats an id within one key: the continuation chain never loops', async () => {
    up.script(same())
    const first = await client(g).responses.create({ model: 'gpt-4o-mini', input: 'turn one' })
    const second = await client(g).responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'turn two' })
    expect(second.id).toBe(first.id)
    const third = await client(g).responses.create({ model: 'gpt-4o-mini', previous_response_id: second.id, input: 'turn three' })
    expect(third.id).toBe('resp_repeated')
    const sent = JSON.stringify(up.requests.at(-1)!.json().input)
    expect(sent).toContain('turn one')
    expect(sent).toContain('turn two')
  })
})

test("a thread over responses.max_thread_bytes is refused naming the limit", async () => {
  const g = await startGateway({ env: NO_LIMITS, yaml: 'responses:\n  max_thread_bytes: 50000\n' })
  try {
    const openai = client(g)
    const r = await openai.responses.create({ model: 'mock-gpt', input: `mock: text ok ${'w '.repeat(6_000)}` })
    const r2 = await openai.responses.create({ model: 'mock-gpt', previous_response_id: r.id, input: `again ${'w '.repeat(6_000)}` })
    const res = await fetch(`${g.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', previous_response_id: r2.id, input: 'more' }) })
    expect(res.status).toBe(400)
    const error = ((await res.json()) as { error: string }).error
    expect(error).toContain('previous_response_id')
    expect(error).toContain('responses.max_thread_bytes')
    // item references read stored replies too: what one request reads so is bounded the same way
    const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => openai.responses.create({ model: 'mock-gpt', input: `mock: text ${i} ${'w '.repeat(6_000)}` })))
    const refer = (n: number) =>
      fetch(`${g.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', input: [...replies.slice(0, n).map((x) => ({ type: 'item_reference', id: x.output[0]!.id })), { role: 'user', content: 'more' }] }) })
    expect((await refer(2)).status).toBe(200)
    const over = await refer(5)
    expect(over.status).toBe(400)
    expect(((await over.json()) as { error: string }).error).toContain('responses.max_thread_bytes')
  } finally {
    await g.stop()
  }
})

test('every stored response a client received survives a kill -9 right after the last answer', async () => {
  const KEY = 'sk-sy-durable-threads-0123456789abcdef'
  let g = await spawnGateway({ env: { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: KEY } })
  const dir = g.dataDir
  try {
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const ids = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        if (i % 2 === 0) return (await openai.responses.create({ model: 'mock-gpt', input: `mock: text n${i}` })).id
        const stream = await openai.responses.create({ model: 'mock-gpt', input: `mock: text n${i}`, stream: true })
        let id = ''
        for await (const ev of stream) if (ev.type === 'response.completed') id = ev.response.id
        return id
      }),
    )
    g.kill('SIGKILL')
    await g.exited
    g = await spawnGateway({ env: { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: KEY }, dataDir: dir })
    const again = new OpenAI({ apiKey: KEY, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    for (const id of ids) expect(await status(again.responses.create({ model: 'mock-gpt', previous_response_id: id, input: 'continue' }))).toBe(200)
  } finally {
    g.kill('SIGKILL')
    await g.exited
    cleanup(dir)
  }
}, 60_000)
