// A query parameter given twice on the stored-response and conversation routes: the route
// reads one value, so the other would be ignored without a word (`limit=2&limit=abc` answered
// two items, `order=asc&order=desc` the first order). A 400 naming it, as on the other routes;
// `include`, a list, may repeat.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(async () => {
  await gw.stop()
})

async function call(method: string, path: string, body?: object) {
  const res = await fetch(`${gw.url}/api/alpha/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { status: res.status, json: JSON.parse(text) }
}

describe('a query parameter given twice', () => {
  test('is a 400 naming it on input_items, a response retrieve and a conversation listing; include may repeat', async () => {
    const input = [1, 2, 3].map((i) => ({ role: 'user', content: `m${i}` }))
    const r = await call('POST', '/responses', { model: 'mock-gpt', input })
    expect(r.status).toBe(200)
    const conv = await call('POST', '/conversations', { items: input })
    expect(conv.status).toBe(200)
    const routes = [`/responses/${r.json.id}/input_items`, `/conversations/${conv.json.id}/items`]
    for (const route of routes) {
      for (const [q, name] of [
        ['limit=2&limit=abc', 'limit'],
        ['limit=1&limit=3', 'limit'],
        ['order=asc&order=desc', 'order'],
        ['after=x&after=y', 'after'],
      ] as const) {
        const res = await call('GET', `${route}?${q}`)
        expect({ route, q, status: res.status }).toEqual({ route, q, status: 400 })
        expect(res.json.error).toBe(`${name}: given more than once`)
      }
      const ok = await call('GET', `${route}?include=message.input_image.image_url&include=file_search_call.results&limit=2`)
      expect(ok.status).toBe(200)
      expect(ok.json.data).toHaveLength(2)
    }
    const twice = await call('GET', `/responses/${r.json.id}?stream=false&stream=true`)
    expect(twice.status).toBe(400)
    expect(twice.json.error).toBe('stream: given more than once')
    const retrieved = await call('GET', `/responses/${r.json.id}?include[]=a&include[]=b`)
    expect(retrieved.status).toBe(200)
  })
})
