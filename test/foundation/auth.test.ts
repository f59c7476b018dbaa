// Keys over real HTTP: every 401 kind, 402, which header works on which route.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const get = (path: string, headers: Record<string, string> = {}) => fetch(gw.url + path, { headers })

async function expectError(res: Response, status: number, fragment: RegExp) {
  expect(res.status).toBe(status)
  const body = (await res.json()) as { error: string }
  expect(Object.keys(body)).toEqual(['error'])
  expect(body.error).toMatch(fragment)
  return body.error
}

describe('401 kinds', () => {
  test('missing header', async () => {
    await expectError(await get('/api/v1/models'), 401, /Missing API key/)
  })
  test('malformed Authorization header', async () => {
    await expectError(await get('/api/v1/models', { authorization: 'Basic abc' }), 401, /Malformed Authorization/)
    await expectError(await get('/api/v1/models', { authorization: 'Bearer' }), 401, /Malformed Authorization/)
  })
  test('unknown key, without echoing it', async () => {
    const msg = await expectError(await get('/api/v1/models', { authorization: 'Bearer sk-sy-nosuchkey123' }), 401, /Invalid API key/)
    expect(msg).not.toContain('sk-sy-nosuchkey123')
  })
  test('x-api-key alone on a non-beta route is the wrong header', async () => {
    await expectError(await get('/api/v1/models', { 'x-api-key': gw.key }), 401, /Wrong authentication header/)
    await expectError(await get('/api/alpha/v1/models', { 'x-api-key': gw.key }), 401, /x-api-key is accepted only on \/api\/beta/)
  })
  test('inactive key', async () => {
    const { key, record } = await gw.services.keys.create({ name: 'to-disable' })
    expect((await get('/api/v1/models', { authorization: `Bearer ${key}` })).status).toBe(200)
    await gw.services.keys.update(record.id, { status: 'inactive' })
    await expectError(await get('/api/v1/models', { authorization: `Bearer ${key}` }), 401, /inactive/)
  })
  test('zero credits', async () => {
    const { key } = await gw.services.keys.create({ name: 'zero', credits: 0 })
    await expectError(await get('/api/v1/models', { authorization: `Bearer ${key}` }), 401, /zero credits/)
  })
})

test('402 when a funded key has spent its credits, for what spends; what it spent them on it can still read, cancel and delete', async () => {
  const { key, record } = await gw.services.keys.create({ name: 'funded', credits: 0.01 })
  const chat = () =>
    fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
    })
  const first = await chat()
  expect(first.status).toBe(200)
  const id = ((await first.json()) as { id: string }).id
  const uploaded = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'notes', filename: 'n.txt' }) })
  const fileId = ((await uploaded.json()) as { id: string }).id
  await gw.services.billing.addSpent(record.id, 0.01)
  const msg = await expectError(await chat(), 402, /Credits exhausted/)
  expect(msg).not.toContain(key)
  const upload = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: new FormData() })
  expect(upload.status).toBe(402)
  // the record of what it spent, its usage and the models stay readable
  for (const path of [`/api/v1/generations?id=${id}`, '/api/v1/usage', '/api/v1/models', '/api/v1/files']) {
    expect((await get(path, { authorization: `Bearer ${key}` })).status).toBe(200)
  }
  // nor does stopping a batch or deleting its data spend anything: a 404 for what is not there, never 402
  const cancel = await fetch(`${gw.url}/api/alpha/v1/batches/batch_none/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } })
  expect(cancel.status).toBe(404)
  expect((await fetch(`${gw.url}/api/v1/files/${fileId}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
  await gw.services.keys.credit(record.id, 1)
  expect((await chat()).status).toBe(200)
})

test('a 402 prints a tiny credit and spend as plain dollars, as a person reads them', async () => {
  const { key, record } = await gw.services.keys.create({ name: 'tiny', credits: 0.0000001 })
  await gw.services.billing.addSpent(record.id, 0.0000002)
  const msg = await expectError(
    await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
    }),
    402,
    /Credits exhausted/,
  )
  expect(msg).toContain('spent $0.0000002 of its $0.0000001 credits')
  expect(msg).not.toMatch(/\de-\d/)
})

test('beta routes take x-api-key or Bearer, and ignore the query string', async () => {
  const variants: Record<string, string>[] = [{ 'x-api-key': gw.key }, { authorization: `Bearer ${gw.key}` }]
  for (const h of variants) {
    const res = await get('/api/beta/v1/models?beta=true', h)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { type: string }[] }
    expect(body.data[0]!.type).toBe('model')
  }
})
