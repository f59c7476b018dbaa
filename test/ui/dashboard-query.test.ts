// The dashboard's own routes hold their query strings as the OpenAI-shaped batch routes and the
// generations listing do: a parameter a route does not take, or one given twice, is a 400
// naming it. Before, `batches?limit=10&limit=20` listed 10 and `export?format=zip&format=ndjson`
// sent a ZIP without a word, where /api/v1/batches/ID/export refused the same query.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ADMIN = 'adm-' + crypto.randomUUID()
let g: Gateway
let batchId: string

const call = (method: string, path: string, token: string) => fetch(g.url + path, { method, headers: { authorization: `Bearer ${token}` } })

beforeAll(async () => {
  g = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
  const res = await fetch(`${g.url}/api/v1/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: [{ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }] }),
  })
  batchId = ((await res.json()) as { id: string }).id
})
afterAll(() => g.stop())

async function refused(method: string, path: string, token: string, names: string) {
  const res = await call(method, path, token)
  const body = (await res.json()) as { error: string }
  expect([path, res.status]).toEqual([path, 400])
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(body.error).toStartWith(`${names}: `)
}

test('a parameter a dashboard route does not take is a 400 naming it, for a key and for the admin', async () => {
  for (const token of [g.key, ADMIN]) {
    await refused('GET', '/api/v1/dashboard/session?x=1', token, 'x')
    await refused('GET', '/api/v1/dashboard/providers?__proto__=1', token, '__proto__')
    await refused('GET', '/api/v1/dashboard/deployments?constructor=1', token, 'constructor')
    await refused('GET', '/api/v1/dashboard/batches?status=completed', token, 'status')
    await refused('GET', `/api/v1/dashboard/batches/${batchId}?expand=1`, token, 'expand')
    await refused('GET', `/api/v1/dashboard/batches/${batchId}/export?fromat=zip`, token, 'fromat')
  }
  await refused('POST', `/admin/v1/batches/${batchId}/cancel?force=1`, ADMIN, 'force')
})

test('a parameter given twice is a 400 naming it, not the first value taken without a word', async () => {
  for (const token of [g.key, ADMIN]) {
    await refused('GET', '/api/v1/dashboard/batches?limit=10&limit=20', token, 'limit')
    await refused('GET', `/api/v1/dashboard/batches?after=${batchId}&after=batch_other`, token, 'after')
    await refused('GET', `/api/v1/dashboard/batches/${batchId}/export?format=zip&format=ndjson`, token, 'format')
  }
})

test('what the dashboard itself asks is answered as before', async () => {
  for (const token of [g.key, ADMIN]) {
    for (const path of ['/api/v1/dashboard/session', '/api/v1/dashboard/providers', '/api/v1/dashboard/deployments', '/api/v1/dashboard/batches?limit=20', `/api/v1/dashboard/batches?limit=1&after=${batchId}`, `/api/v1/dashboard/batches/${batchId}`]) {
      const res = await call('GET', path, token)
      expect([path, res.status]).toEqual([path, 200])
      await res.arrayBuffer()
    }
    for (const q of ['format=ndjson', 'format=ndjson&gzip=true', 'format=zip']) {
      const res = await call('GET', `/api/v1/dashboard/batches/${batchId}/export?${q}`, token)
      expect([q, res.status]).toEqual([q, 200])
      await res.arrayBuffer()
    }
  }
})
