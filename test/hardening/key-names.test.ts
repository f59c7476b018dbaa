// A key's name and account are text an operator reads back (the admin listing, the dashboard,
// the usage report's account filter). A NUL character or half of a surrogate pair in one is a
// 400 naming the field, on create and on update: PostgreSQL's text holds neither (a NUL made
// the insert fail, a 500; a lone surrogate was stored as U+FFFD, so the account the key was
// created with was not the one a reload read back), and SQLite kept what no report could name.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ADMIN = 'admin-key-names-' + crypto.randomUUID()
let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
})
afterAll(() => gw.stop())

async function admin(method: string, path: string, raw: string) {
  const res = await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: raw })
  const text = await res.text()
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { status: res.status, body: JSON.parse(text) as { error?: string; id?: string; name?: string; account?: string } }
}

// raw JSON text: the escapes reach the gateway as the client wrote them
const BAD: [field: 'name' | 'account', json: string, says: RegExp][] = [
  ['name', '"a\\u0000b"', /NUL/],
  ['name', '"tab\\there"', /control character/],
  ['name', '"\\ud800"', /surrogate/],
  ['name', '"x\\udfffy"', /surrogate/],
  ['account', '"acme\\u0000"', /NUL/],
  ['account', '"\\udfff"', /surrogate/],
]

test('create: a NUL, a control character or a lone surrogate in name or account is a 400 naming the field, and no key is made', async () => {
  const before = (await gw.services.keys.list()).length
  for (const [field, json, says] of BAD) {
    const body = field === 'name' ? `{"name":${json}}` : `{"name":"ok","account":${json}}`
    const r = await admin('POST', '/admin/v1/keys', body)
    expect([field, json, r.status]).toEqual([field, json, 400])
    expect(r.body.error).toStartWith(`${field}: `)
    expect(r.body.error).toMatch(says)
  }
  expect((await gw.services.keys.list()).length).toBe(before)
})

test('update: the same values are a 400 naming the field, and the key keeps its name and account', async () => {
  const made = await admin('POST', '/admin/v1/keys', '{"name":"kept","account":"acme"}')
  expect(made.status).toBe(201)
  for (const [field, json, says] of BAD) {
    const r = await admin('PATCH', `/admin/v1/keys/${made.body.id}`, `{"${field}":${json}}`)
    expect([field, json, r.status]).toEqual([field, json, 400])
    expect(r.body.error).toStartWith(`${field}: `)
    expect(r.body.error).toMatch(says)
  }
  const now = await admin('GET', `/admin/v1/keys/${made.body.id}`, '')
  expect(now.body).toMatchObject({ name: 'kept', account: 'acme' })
})

test('names in any script, emoji (whole surrogate pairs) and spaces inside are kept as sent', async () => {
  for (const name of ['équipe données', '数据团队', 'ops 🚀 team', 'a'.repeat(200)]) {
    const r = await admin('POST', '/admin/v1/keys', JSON.stringify({ name, account: name }))
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name, account: name })
    expect((await admin('GET', `/admin/v1/keys/${r.body.id}`, '')).body).toMatchObject({ name, account: name })
  }
})
