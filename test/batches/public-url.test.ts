// Behind a proxy that ends TLS (or serves the gateway under a path), the URLs the gateway hands
// out must be those its clients reach it by: a message batch's results_url under
// `server.public_url`, never the plain http:// origin the proxy called.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/load.ts'
import { startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false, env: { SWITCHYARD_PUBLIC_URL: 'https://llm.example.com/gw/' } })
})
afterAll(() => rig.stop())

test("a message batch's results_url is under the configured public URL", async () => {
  const client = rig.anthropic()
  const batch = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: { model: 'mock-claude', max_tokens: 16, messages: [{ role: 'user', content: 'mock: text hi' }] } }] })
  await rig.ended(batch.id)
  const b = await client.messages.batches.retrieve(batch.id)
  expect(b.results_url).toBe(`https://llm.example.com/gw/api/beta/v1/messages/batches/${batch.id}/results`)
  // the same path on the gateway itself answers it
  const r = await rig.call('GET', new URL(b.results_url!).pathname.replace(/^\/gw/, ''))
  expect(r.status).toBe(200)
  expect((await r.text()).trim().split('\n')).toHaveLength(1)
})

test('the 404 of a doubled /v1/v1/ names the base URL under the public URL', async () => {
  const r = await rig.call('GET', '/api/alpha/v1/v1/models')
  expect(r.status).toBe(404)
  expect(JSON.stringify(await r.json())).toContain('https://llm.example.com/gw/api/alpha/v1')
})

test('a public URL that is no http(s) URL, or carries a query, is refused at start naming the setting', () => {
  for (const bad of ['llm.example.com', 'ftp://llm.example.com', 'https://llm.example.com/?a=1', 'https://user:pw@llm.example.com'])
    expect(() => loadConfig({ flags: {}, env: { SWITCHYARD_PUBLIC_URL: bad }, cwd: '/tmp' })).toThrow('server.public_url')
})
