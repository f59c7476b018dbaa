// GET /api/v1/generations without `id`: the paged listing, newest first, with filters, under the
// lookup's ownership rules (a key lists its own records; the admin token lists everyone's), and
// the admin token accepted on /api only for the dashboard's reads.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ApiKey } from '../../src/http/context.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { genInput } from './input.ts'

const ADMIN = 'adm-' + crypto.randomUUID()
let g: Gateway
let me: ApiKey
let other: { key: string; record: ApiKey }
const mine: string[] = [] // reply ids, oldest first

beforeAll(async () => {
  g = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
  me = (await g.services.keys.authenticate(g.key))!
  other = await g.services.keys.create({ name: 'other', account: 'elsewhere' })
  const t0 = Date.UTC(2026, 10, 20, 8)
  for (let i = 0; i < 25; i++) {
    const input = genInput(g.services.catalog, me, {
      createdAt: t0 + i * 1000,
      model: i % 5 === 0 ? 'claude-sonnet-4-5' : 'gpt-4o',
      endpoint: i % 5 === 0 ? 'anthropic.messages' : 'openai.chat.completions',
      error: i % 7 === 3 ? 'upstream answered 502' : null,
      httpStatus: i % 7 === 3 ? 502 : 200,
    })
    g.services.recorder.record(input)
    mine.push(input.id)
  }
  // two records in the same millisecond: the order between them still holds across pages
  for (const id of ['same-a', 'same-b']) {
    const input = genInput(g.services.catalog, me, { id, createdAt: t0 + 30_000 })
    g.services.recorder.record(input)
    mine.push(id)
  }
  for (let i = 0; i < 4; i++) g.services.recorder.record(genInput(g.services.catalog, other.record, { createdAt: t0 + 500 + i, model: 'gpt-4o-mini' }))
  await g.services.recorder.flush()
})
afterAll(() => g.stop())

const get = (path: string, token = g.key) => fetch(g.url + path, { headers: { authorization: `Bearer ${token}` } })
const list = async (q: string, token = g.key) => {
  const r = await get(`/api/v1/generations${q}`, token)
  expect(r.status).toBe(200)
  return (await r.json()) as { object: string; data: any[]; has_more: boolean; first_id: string | null; last_id: string | null; partial: boolean }
}

describe('GET /api/v1/generations (listing)', () => {
  test('a key lists its own records newest first, page by page with after=last_id, none missed or repeated', async () => {
    const seen: string[] = []
    let after = ''
    for (let pages = 0; ; pages++) {
      const p = await list(`?limit=4${after ? `&after=${after}` : ''}`)
      expect(p.data.length).toBeLessThanOrEqual(4)
      seen.push(...p.data.map((d) => d.id))
      for (const d of p.data) expect(d.api_key_id).toBe(me.id)
      if (!p.has_more) break
      after = p.last_id!
      expect(pages).toBeLessThan(10)
    }
    expect(seen.length).toBe(mine.length)
    expect(new Set(seen)).toEqual(new Set(mine))
    // newest first (the two of one millisecond in either order, but each once)
    expect(seen.slice(2)).toEqual([...mine].reverse().slice(2))
  })

  test('filters: model (an alias maps to its canonical id), status, endpoint; combined', async () => {
    const claude = await list('?model=claude-sonnet-4-5&limit=200')
    expect(claude.data.length).toBe(5)
    for (const d of claude.data) expect(d).toMatchObject({ model: 'claude-sonnet-4-5', endpoint: 'anthropic.messages' })
    const errors = await list('?status=error&limit=200')
    expect(errors.data.map((d) => d.id)).toEqual(mine.filter((_, i) => i < 25 && i % 7 === 3).reverse())
    for (const d of errors.data) expect(d).toMatchObject({ error: 'upstream answered 502', http_status: 502 })
    const ok = await list('?status=ok&limit=200')
    expect(ok.data.length + errors.data.length).toBe(mine.length)
    const chat = await list('?endpoint=openai.chat.completions&status=error&model=gpt-4o&limit=200')
    expect(chat.data.length).toBe(errors.data.filter((d) => d.model === 'gpt-4o').length)
  })

  test('another key: its own records only; asking for mine by key, account or cursor finds nothing', async () => {
    const p = await list('?limit=200', other.key)
    expect(p.data.length).toBe(4)
    for (const d of p.data) expect(d).toMatchObject({ api_key_id: other.record.id, account: 'elsewhere' })
    const byKey = await get(`/api/v1/generations?key=${me.id}`, other.key)
    expect(byKey.status).toBe(404)
    expect((await byKey.json()).error).toContain('No such key')
    expect((await get('/api/v1/generations?account=default', other.key)).status).toBe(404)
    const mineFirst = (await list('?limit=1')).data[0].gateway_id
    const cursor = await get(`/api/v1/generations?after=${mineFirst}`, other.key)
    expect(cursor.status).toBe(400)
    expect((await cursor.json()).error).toStartWith('after:')
    // and the lookup by id stays the key's own
    expect((await get(`/api/v1/generations?id=${mine[0]}`, other.key)).status).toBe(404)
  })

  test('the admin token lists every key\'s records, filters by key and account, and reads any record by id', async () => {
    const all = await list('?limit=200', ADMIN)
    expect(all.data.length).toBe(mine.length + 4)
    const byKey = await list(`?key=${other.record.id}&limit=200`, ADMIN)
    expect(byKey.data.length).toBe(4)
    const byAccount = await list('?account=default&limit=200', ADMIN)
    expect(byAccount.data.length).toBe(mine.length)
    const one = await get(`/api/v1/generations?id=${mine[3]}`, ADMIN)
    expect(one.status).toBe(200)
    expect((await one.json()).generation.id).toBe(mine[3])
  })

  test('the admin token on usage: every account, or one by account=; a key naming another account is a 404', async () => {
    const q = '?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z'
    const all = (await (await get(`/api/v1/usage${q}`, ADMIN)).json()) as any
    expect(all.totals.total_requests).toBe(mine.length + 4)
    const one = (await (await get(`/api/v1/usage${q}&account=elsewhere`, ADMIN)).json()) as any
    expect(one.totals.total_requests).toBe(4)
    const own = (await (await get(`/api/v1/usage${q}`)).json()) as any
    expect(own.totals.total_requests).toBe(mine.length)
    expect((await get(`/api/v1/usage${q}&account=elsewhere`)).status).toBe(404)
    // breakdown=model: a series per model, in top-model order, summing to the total
    const split = (await (await get(`/api/v1/usage${q}&breakdown=model`, ADMIN)).json()) as any
    expect(split.series_by_model.map((m: any) => m.model)).toEqual(split.top_models.map((m: any) => m.model))
    split.series.forEach((p: any, i: number) => expect(split.series_by_model.reduce((n: number, m: any) => n + m.series[i].requests, 0)).toBe(p.requests))
    expect((await get(`/api/v1/usage${q}&breakdown=key`)).status).toBe(400)
  })

  test('the admin token is no API key: refused on every other /api route and on writes; a wrong token is a 401', async () => {
    for (const [method, path] of [['GET', '/api/v1/batches'], ['GET', '/api/v1/files'], ['POST', '/api/v1/batches'], ['GET', '/api/v1/models'], ['POST', '/api/alpha/v1/chat/completions']]) {
      const r = await fetch(g.url + path, { method, headers: { authorization: `Bearer ${ADMIN}` } })
      expect(r.status).toBe(401)
    }
    // nor through a path that only looks like a dashboard read
    for (const path of ['/api/v1/dashboard/../files', '/api/v1/dashboard/%2e%2e/files', '/api/v1/dashboard//session', '/api/v1/usage/', '/api/v1/generations/x']) {
      const r = await fetch(g.url + path, { headers: { authorization: `Bearer ${ADMIN}` } })
      expect(r.status).toBe(401)
    }
    expect((await get('/api/v1/generations', ADMIN + 'x')).status).toBe(401)
    expect((await get('/api/v1/dashboard/session', ADMIN + 'x')).status).toBe(401)
  })

  test('bad parameters are 400s naming them', async () => {
    for (const [q, field] of [['limit=0', 'limit'], ['limit=201', 'limit'], ['status=failed', 'status'], ['endpoint=openai.chat', 'endpoint'], ['model=', 'model'], ['after=gen-nope', 'after'], ['colour=red', 'colour'], ['limit=2&limit=3', 'limit'], ['status=ok&status=error', 'status']]) {
      const r = await get(`/api/v1/generations?${q}`)
      expect(r.status).toBe(400)
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect((await r.json()).error).toStartWith(`${field}:`)
    }
  })
})

test('without SWITCHYARD_ADMIN_TOKEN no bearer is an admin: the listing is a 401 for anything but a key', async () => {
  const plain = await startGateway()
  try {
    const r = await fetch(`${plain.url}/api/v1/generations`, { headers: { authorization: 'Bearer ' } })
    expect(r.status).toBe(401)
    const s = await fetch(`${plain.url}/api/v1/dashboard/session`, { headers: { authorization: `Bearer ${plain.key}` } })
    expect(await s.json()).toMatchObject({ role: 'key' })
  } finally {
    await plain.stop()
  }
})

describe('the scan budget of a filtered page', () => {
  test('a rare filter reads at most the budget per page; following last_id over partial pages finds every match, in order, once', async () => {
    const { GenerationList } = await import('../../src/generations/list.ts')
    const list = new GenerationList(g.services.storage.sql, 5)
    const walk = async (f: { keyId?: string; model?: string; status?: 'ok' | 'error' }, limit: number) => {
      const got: string[] = []
      let partials = 0
      let after: { createdAt: number; tie: number | string } | undefined
      for (let i = 0; i < 100; i++) {
        const p = await list.page({ ...f, limit, after })
        expect(p.rows.length).toBeLessThanOrEqual(limit)
        got.push(...p.rows.map((r) => r.replyId))
        if (p.partial) partials++
        if (!p.hasMore) return { got, partials }
        after = await list.cursor(p.next!, f.keyId)
        expect(after).toBeDefined()
      }
      throw new Error('did not end')
    }
    const errors = mine.filter((_, i) => i < 25 && i % 7 === 3).reverse()
    const r = await walk({ keyId: me.id, status: 'error' }, 2)
    expect(r.got).toEqual(errors)
    expect(r.partials).toBeGreaterThan(0)
    // the admin's scope (no key), a model of 5 among 31 records
    const claude = await walk({ model: 'claude-sonnet-4-5' }, 50)
    expect(claude.got).toEqual(mine.filter((_, i) => i < 25 && i % 5 === 0).reverse())
    // nothing matches: every page is partial and empty until the scope runs out
    expect(await walk({ model: 'no-such-model' }, 50)).toEqual({ got: [], partials: 6 })
    // no filter: no budget, plain pages
    expect(await walk({ keyId: other.record.id }, 3)).toMatchObject({ partials: 0 })
  })

  test('over HTTP a filtered page says whether it is partial', async () => {
    const p = await list('?status=error&limit=200')
    expect(p.partial).toBe(false)
    expect(p.has_more).toBe(false)
  })
})
