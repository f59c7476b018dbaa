// Model lists through the official SDKs.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { missingFields } from '../helpers/sdk-required.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

test('openai models.list() on /api/alpha/v1 and /api/v1 returns the catalog', async () => {
  for (const base of ['/api/alpha/v1', '/api/v1']) {
    const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + base })
    const ids: string[] = []
    for await (const m of client.models.list()) ids.push(m.id)
    expect(ids).toEqual(gw.services.catalog.list().map((m) => m.id))
    expect(ids).toContain('gpt-4o')
    expect(ids).toContain('claude-sonnet-4-5')
  }
  const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + '/api/alpha/v1' })
  // a snapshot is retrieved under its own id, as OpenAI retrieves it
  expect((await client.models.retrieve('gpt-4o-2024-08-06')).id).toBe('gpt-4o-2024-08-06')
})

test('anthropic models.list() on /api/beta returns the catalog in its shape', async () => {
  const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url + '/api/beta' })
  const ids: string[] = []
  for await (const m of client.models.list()) {
    expect(m.type).toBe('model')
    ids.push(m.id)
  }
  expect(ids).toContain('claude-haiku-4-5')
  // page by page, as Anthropic pages it: the SDK walks every page, and each has what was asked
  expect(ids).toEqual(gw.services.catalog.list().map((m) => m.id))
  const first = await client.models.list({ limit: 2 })
  expect(first.data.map((m) => m.id)).toEqual(ids.slice(0, 2))
  expect(first.has_more).toBe(true)
  const next = await client.models.list({ limit: 3, after_id: ids[1] })
  expect(next.data.map((m) => m.id)).toEqual(ids.slice(2, 5))
  const back = await client.models.list({ limit: 2, before_id: ids[4] })
  expect(back.data.map((m) => m.id)).toEqual(ids.slice(2, 4))
  const last = await client.models.list({ limit: 1000, after_id: ids.at(-2)! })
  expect(last.data.map((m) => m.id)).toEqual([ids.at(-1)!])
  expect(last.has_more).toBe(false)
  // a limit is written in digits, as on the gateway's other lists: Number() read 1e3, 0x10, " 5"
  // and 2.0 as integers
  for (const q of ['limit=0', 'limit=abc', 'limit=1001', 'after_id=nope', 'limit=1e3', 'limit=0x10', 'limit=%205', 'limit=2.0', 'limit=']) {
    const res = await fetch(`${gw.url}/api/beta/v1/models?${q}`, { headers: { 'x-api-key': gw.key } })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toMatch(/^(limit|after_id)/)
  }
})

// The SDK's ModelInfo has lifecycle, deprecated_at, retires_at, capabilities and line on every
// model (nullable, never absent), and `models.list({ lifecycle })` filters by stage: a model the
// gateway serves is callable, so it is `active`, and a list of only deprecated or retired ones
// is empty rather than the whole catalog.
test('anthropic models carry the lifecycle fields and models.list({ lifecycle }) filters by them', async () => {
  const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url + '/api/beta', maxRetries: 0 })
  const m = await client.models.retrieve('claude-haiku-4-5')
  expect(m).toMatchObject({ lifecycle: 'active', deprecated_at: null, retires_at: null, capabilities: null, line: null })
  const page = await client.models.list({ limit: 1 })
  expect(page.data[0]).toMatchObject({ lifecycle: 'active', deprecated_at: null, retires_at: null })

  const all = await client.models.list({ limit: 1000 })
  expect((await client.models.list({ limit: 1000, lifecycle: ['active'] })).data.length).toBe(all.data.length)
  const gone = await client.models.list({ lifecycle: ['deprecated', 'retired'] })
  expect(gone.data).toEqual([])
  expect(gone.has_more).toBe(false)
  const err = await client.models.list({ lifecycle: ['sunset' as 'active'] }).then(() => null, (e: { status: number; error: unknown }) => e)
  expect(err?.status).toBe(400)
  expect(JSON.stringify(err?.error)).toContain('lifecycle')
})

// Every field the SDK's ModelInfo and BetaModelInfo (client.beta.models) declare required is on
// the gateway's model objects, listed or retrieved.
test('anthropic models carry every field ModelInfo and BetaModelInfo declare', async () => {
  const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url + '/api/beta', maxRetries: 0 })
  for (const m of [await client.models.retrieve('claude-haiku-4-5'), (await client.models.list({ limit: 1 })).data[0]!]) {
    expect(missingFields(m, '@anthropic-ai/sdk', 'models.d.ts', 'ModelInfo')).toEqual([])
  }
  for (const m of [await client.beta.models.retrieve('claude-haiku-4-5'), (await client.beta.models.list({ limit: 1 })).data[0]!]) {
    expect(missingFields(m, '@anthropic-ai/sdk', 'beta/models.d.ts', 'BetaModelInfo')).toEqual([])
  }
})
