// A read of a key's data (its records, usage, files, the admin's key list) answers
// `cache-control: no-store`: without it a browser or a proxy between may keep a copy of prompts,
// replies and spend after the page that asked has gone. Routes that say how they are cached (the
// dashboard's assets) keep what they say.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ADMIN = 'admin-no-store-0001-abcdef'
let gw: Gateway
let id: string
beforeAll(async () => {
  gw = await startGateway({ logLevel: 'silent', env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
  const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  const c = await openai.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'Hi.' }] })
  id = c.id
})
afterAll(async () => {
  await gw?.stop()
})

const get = (path: string, token = gw.key) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${token}` } })

describe('reads of a key’s data are kept by no cache', () => {
  test('a record, the listing, usage, files, the key list, and a refusal', async () => {
    const paths = [`/api/v1/generations?id=${encodeURIComponent(id)}`, '/api/v1/generations', '/api/v1/usage', '/api/alpha/v1/files', '/api/v1/generations?id=nope']
    for (const p of paths) {
      const r = await get(p)
      await r.arrayBuffer()
      expect([p, r.headers.get('cache-control')]).toEqual([p, 'no-store'])
    }
    const keys = await get('/admin/v1/keys', ADMIN)
    await keys.arrayBuffer()
    expect(keys.status).toBe(200)
    expect(keys.headers.get('cache-control')).toBe('no-store')
  })

  test('a HEAD of the same reads, which their GET routes answer, says no-store as well', async () => {
    for (const p of ['/api/v1/generations', '/api/v1/usage', '/api/alpha/v1/files']) {
      const r = await fetch(`${gw.url}${p}`, { method: 'HEAD', headers: { authorization: `Bearer ${gw.key}` } })
      await r.arrayBuffer()
      expect([p, r.status, r.headers.get('cache-control')]).toEqual([p, 200, 'no-store'])
    }
  })

  test('the dashboard’s page keeps the caching its route sets', async () => {
    const r = await fetch(`${gw.url}/ui/`)
    await r.arrayBuffer()
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).not.toBeNull()
  })
})
