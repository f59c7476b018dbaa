// The dashboard's own routes under /api/v1/dashboard and the admin's cancel, over HTTP: who
// sees which batches, exports and provider details; the admin cancels any key's batch; a key
// cannot cancel through the admin route.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

const ADMIN = 'adm-' + crypto.randomUUID()
let g: Gateway
let other: string
let mineId: string
let othersId: string

const call = (method: string, path: string, token: string, body?: unknown) =>
  fetch(g.url + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: `q${i}` }] }))

/** A batch of `n` mock items; a refusal says what it was (status and body) instead of an id of undefined. */
async function create(key: string, n: number): Promise<string> {
  const res = await call('POST', '/api/v1/batches', key, { requests: items(n) })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`batch create: HTTP ${res.status} ${body}`)
  return (JSON.parse(body) as { id: string }).id
}

beforeAll(async () => {
  // an upstream configured for one family (never called here), the mock for the other; batches paced
  g = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: 'http://proxy:pw-in-url@127.0.0.1:9/v1?token=tok-in-url' }, yaml: 'batches:\n  max_items_per_second: 5\n' })
  other = (await g.services.keys.create({ name: 'other' })).key
  mineId = await create(g.key, 3)
  othersId = await create(other, 200)
})
afterAll(() => g.stop())

test('batches: a key lists and reads its own (another key\'s is a 404); the admin lists all, with progress', async () => {
  const mine = (await (await call('GET', '/api/v1/dashboard/batches', g.key)).json()) as { data: any[] }
  expect(mine.data.map((b) => b.id)).toEqual([mineId])
  expect((await call('GET', `/api/v1/dashboard/batches/${othersId}`, g.key)).status).toBe(404)
  expect((await call('GET', `/api/v1/dashboard/batches/${othersId}/export`, g.key)).status).toBe(404)
  const all = (await (await call('GET', '/api/v1/dashboard/batches', ADMIN)).json()) as { data: any[] }
  expect(all.data.map((b) => b.id)).toEqual([othersId, mineId])
  const b = all.data[0]
  expect(b.progress).toMatchObject({ total: 200, ended: false })
  expect(b.progress.done).toBe(b.request_counts.completed + b.request_counts.failed)
  expect(b.api_key_id).toBe((await g.services.keys.list()).find((k) => k.name === 'other')!.id)
  const page = (await (await call('GET', `/api/v1/dashboard/batches?limit=1&after=${othersId}`, ADMIN)).json()) as { data: any[]; has_more: boolean }
  expect(page.data.map((x) => x.id)).toEqual([mineId])
  expect((await call('GET', '/api/v1/dashboard/batches?after=batch_nope', ADMIN)).status).toBe(400)
})

test('the admin cancels another key\'s running batch and exports it; a key cannot use the admin route', async () => {
  const refused = await call('POST', `/admin/v1/batches/${othersId}/cancel`, other)
  expect(refused.status).toBe(401)
  const res = await call('POST', `/admin/v1/batches/${othersId}/cancel`, ADMIN)
  expect(res.status).toBe(200)
  // cancelling while its items in flight land, as OpenAI's is
  expect(((await res.json()) as { status: string }).status).toBe('cancelling')
  expect((await call('POST', `/admin/v1/batches/${othersId}/cancel`, ADMIN)).status).toBe(400)
  expect((await call('POST', '/admin/v1/batches/batch_nope/cancel', ADMIN)).status).toBe(404)
  const deadline = Date.now() + 20_000
  while (!(await g.services.batches!.store.byId(othersId))!.endedAt && Date.now() < deadline) await Bun.sleep(50)
  const exp = await call('GET', `/api/v1/dashboard/batches/${othersId}/export?format=ndjson&gzip=true`, ADMIN)
  expect(exp.status).toBe(200)
  expect(exp.headers.get('content-disposition')).toContain(`${othersId}_results.jsonl.gz`)
  const lines = gunzipSync(new Uint8Array(await exp.arrayBuffer())).toString().trim().split('\n')
  expect(lines.length).toBe(200)
})

test('providers: the admin sees the upstream\'s address, a key only that there is one; session says who', async () => {
  const admin = (await (await call('GET', '/api/v1/dashboard/providers', ADMIN)).json()) as any
  // a password or a token in the address is masked, as the banner masks it
  for (const path of ['/api/v1/dashboard/providers', '/api/v1/dashboard/deployments']) {
    const text = await (await call('GET', path, ADMIN)).text()
    expect(text).toContain('http://proxy:***@127.0.0.1:9/v1?token=***')
    for (const secret of ['pw-in-url', 'tok-in-url']) expect(text).not.toContain(secret)
  }
  expect(admin.families).toEqual([
    { family: 'openai', served_by: 'upstream', base_url: 'http://proxy:***@127.0.0.1:9/v1?token=***' },
    { family: 'anthropic', served_by: 'mock', base_url: null },
    { family: 'mock-* models', served_by: 'mock', base_url: null },
  ])
  const key = (await (await call('GET', '/api/v1/dashboard/providers', g.key)).json()) as any
  expect(key.families[0]).toEqual({ family: 'openai', served_by: 'upstream', base_url: null })
  expect(JSON.stringify(key)).not.toContain('127.0.0.1:9')
  expect(await (await call('GET', '/api/v1/dashboard/session', ADMIN)).json()).toEqual({ role: 'admin', accounts: ['default'] })
  const s = (await (await call('GET', '/api/v1/dashboard/session', g.key)).json()) as any
  expect(s).toMatchObject({ role: 'key', accounts: ['default'], key: { name: 'bootstrap', status: 'active' } })
  expect(JSON.stringify(s)).not.toContain(g.key)
})
