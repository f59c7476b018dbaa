// The dashboard's deployments route over HTTP: every configured provider and the mock with the
// catalog's deployments on it, a failed deployment cooling while the other served, this
// instance's last-hour counters for the admin, and no upstream key in any answer.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { providersGateway, UPSTREAM_KEYS, type ProvidersGateway } from './providers-gateway.ts'

const ADMIN = 'adm-' + crypto.randomUUID()
let p: ProvidersGateway

const get = async (token: string) => {
  const res = await fetch(`${p.gw.url}/api/v1/dashboard/deployments`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  return { text: await res.clone().text(), body: (await res.json()) as any }
}
const deployment = (body: any, provider: string, model: string) => body.providers.find((x: any) => x.id === provider).deployments.find((d: any) => d.model === model)

beforeAll(async () => {
  p = await providersGateway({ SWITCHYARD_ADMIN_TOKEN: ADMIN })
})
afterAll(() => p.stop())

test('the admin: each provider with its kind, address, pool size and deployments; the failed one cooling, the other with the traffic', async () => {
  expect(p.a.requests.length).toBe(1)
  expect(p.b.requests.length).toBe(3)
  const before = Date.now()
  const { body, text } = await get(ADMIN)
  expect(body.providers.map((x: any) => [x.id, x.kind, x.base_url, x.keys])).toEqual([
    ['openai-a', 'openai', `${p.a.url}/v1`, 2],
    ['openai-b', 'openai', `${p.b.url}/v1`, 1],
    ['mock', 'mock', null, null],
  ])
  const a = deployment(body, 'openai-a', 'gpt-4o-mini')
  expect(a).toMatchObject({ upstream_id: 'gpt-4o-mini', weight: 1, priority: 1, state: 'cooling', consecutive_failures: 1, last_hour: { requests: 1, errors: 1, failovers: 1, p50_ms: null } })
  // cooled for the configured 600 s from the failure
  expect(a.cooling_until * 1000).toBeGreaterThan(before + 590_000)
  expect(a.cooling_until * 1000).toBeLessThanOrEqual(Date.now() + 601_000)
  const b = deployment(body, 'openai-b', 'gpt-4o-mini')
  expect(b).toMatchObject({ upstream_id: 'gpt-4o-mini-2024-07-18', weight: 3, priority: 2, state: 'ok', cooling_until: null, consecutive_failures: 0, last_hour: { requests: 3, errors: 0, failovers: 0 } })
  expect(b.last_hour.p50_ms).toBeGreaterThanOrEqual(0)
  // the family's other models go to its first provider; the mock serves mock-* (and the family without a provider)
  expect(deployment(body, 'openai-a', 'gpt-4o')).toMatchObject({ upstream_id: 'gpt-4o', state: 'ok', last_hour: { requests: 0, errors: 0, failovers: 0, p50_ms: null } })
  expect(deployment(body, 'openai-b', 'gpt-4o')).toBeUndefined()
  expect(deployment(body, 'mock', 'mock-gpt')).toMatchObject({ upstream_id: 'mock-gpt', state: 'ok' })
  expect(body.at).toBeGreaterThan(0)
  for (const k of UPSTREAM_KEYS) {
    expect(text).not.toContain(k)
    expect(text).not.toContain(k.slice(-4))
  }
  expect(text).not.toContain('sk-')
})

test('a key: the same providers and states, without addresses, pool sizes or every account\'s counts', async () => {
  const { body, text } = await get(p.gw.key)
  expect(body.providers.map((x: any) => [x.id, x.base_url, x.keys])).toEqual([['openai-a', null, null], ['openai-b', null, null], ['mock', null, null]])
  expect(deployment(body, 'openai-a', 'gpt-4o-mini')).toMatchObject({ state: 'cooling', last_hour: null })
  expect(deployment(body, 'openai-b', 'gpt-4o-mini')).toMatchObject({ state: 'ok', last_hour: null })
  expect(text).not.toContain(p.a.url)
  for (const k of UPSTREAM_KEYS) expect(text).not.toContain(k.slice(-4))
  expect(text).not.toContain('sk-')
})

const chat = (model: string) =>
  fetch(`${p.gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })

test('a deployment health has seen that no catalog entry names (a dated alias) is listed on its provider, under its model', async () => {
  // gpt-4o goes to openai-a alone, which answers 500: the alias's deployment fails and cools
  expect((await chat('gpt-4o-2024-08-06')).status).toBeGreaterThanOrEqual(500)
  expect((await chat('mock-gpt')).status).toBe(200)
  const { body } = await get(ADMIN)
  const alias = body.providers[0].deployments.find((d: any) => d.upstream_id === 'gpt-4o-2024-08-06')
  expect(alias).toMatchObject({ model: 'gpt-4o', weight: 1, priority: 1, state: 'cooling', last_hour: { requests: 1, errors: 1, failovers: 0 } })
  expect(deployment(body, 'openai-a', 'gpt-4o')).toMatchObject({ upstream_id: 'gpt-4o', state: 'ok' })
  expect(deployment(body, 'mock', 'mock-gpt').last_hour).toMatchObject({ requests: 1, errors: 0 })
})

test("a key sees the catalog's deployments only: not a model id another account named, nor its state", async () => {
  // another account's private fine-tune, failing on the mock
  for (let i = 0; i < 3; i++) await chat('mock-acme-private-finetune-7')
  const admin = await get(ADMIN)
  expect(admin.text).toContain('mock-acme-private-finetune-7')
  const key = await get(p.gw.key)
  expect(key.text).not.toContain('mock-acme-private-finetune-7')
  expect(key.text).not.toContain('gpt-4o-2024-08-06')
  expect(deployment(key.body, 'mock', 'mock-gpt')).toMatchObject({ state: 'ok' })
})

test('without a token: refused', async () => {
  expect((await fetch(`${p.gw.url}/api/v1/dashboard/deployments`)).status).toBe(401)
})
