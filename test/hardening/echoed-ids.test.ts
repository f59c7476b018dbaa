// A value a client sends is echoed cut in an error message, so a 10 KB id (or a long
// path) cannot make an error of that size.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ADMIN = 'admin-token-d10-echo-0123456789'
let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_KEY_BURST_RPS: '1000' } })
})
afterAll(async () => {
  await gw.stop()
})

const long = 'x'.repeat(10_000)

async function expectShortError(res: Response, status: number) {
  expect(res.status).toBe(status)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const text = await res.text()
  expect(text.length).toBeLessThan(1000)
  expect(JSON.parse(text).error).toContain('…')
}

test('file ids are cut in 404s on every files route', async () => {
  const auth = { authorization: `Bearer ${gw.key}` }
  for (const root of ['/api/v1/files', '/api/alpha/v1/files', '/api/beta/v1/files']) {
    await expectShortError(await fetch(`${gw.url}${root}/file-${long}`, { headers: auth }), 404)
    await expectShortError(await fetch(`${gw.url}${root}/file-${long}/content`, { headers: auth }), 404)
    await expectShortError(await fetch(`${gw.url}${root}/file-${long}`, { method: 'DELETE', headers: auth }), 404)
  }
})

test('admin key ids, unknown paths and wrong methods are cut too', async () => {
  await expectShortError(await fetch(`${gw.url}/admin/v1/keys/key_${long}`, { headers: { authorization: `Bearer ${ADMIN}` } }), 404)
  await expectShortError(await fetch(`${gw.url}/api/v1/${long}`, { headers: { authorization: `Bearer ${gw.key}` } }), 404)
  await expectShortError(await fetch(`${gw.url}/${long}`), 404)
  await expectShortError(await fetch(`${gw.url}/api/beta/v1/v1/${long}`, { headers: { authorization: `Bearer ${gw.key}` } }), 404)
})

test('an id whose percent-encoding is malformed (the router hands it over as null) is a 404, not a 500', async () => {
  const auth = { authorization: `Bearer ${gw.key}` }
  for (const root of ['/api/v1/files', '/api/beta/v1/files']) {
    for (const [method, path] of [['GET', '/file-%E0%A4%A'], ['GET', '/file-%E0%A4%A/content'], ['DELETE', '/file-%E0%A4%A']] as const) {
      const res = await fetch(`${gw.url}${root}${path}`, { method, headers: auth })
      expect(res.status).toBe(404)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(((await res.json()) as { error: string }).error).toBeString()
    }
  }
  const admin = await fetch(`${gw.url}/admin/v1/keys/key_%E0%A4%A`, { headers: { authorization: `Bearer ${ADMIN}` } })
  expect(admin.status).toBe(404)
  expect(admin.headers.get('x-request-id')).toBeTruthy()
})
