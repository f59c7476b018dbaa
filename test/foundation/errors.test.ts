// Error bodies, request ids, 404/405, the doubled or missing /v1 hint, malformed JSON, 413.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { runCli, startGateway, tempDir, type Gateway } from '../helpers/server.ts'
import { bounded } from '../../src/http/errors.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: 'admin-secret', SWITCHYARD_MAX_BODY_BYTES: String(64 * 1024) } })
})
afterAll(() => gw.stop())
const auth = () => ({ authorization: `Bearer ${gw.key}` })
const admin = { authorization: 'Bearer admin-secret', 'content-type': 'application/json' }

test('every response carries x-request-id: the client sane one is kept, others replaced', async () => {
  const ok = await fetch(gw.url + '/health', { headers: { 'x-request-id': 'client-req-42' } })
  expect(ok.headers.get('x-request-id')).toBe('client-req-42')
  const bad = await fetch(gw.url + '/api/v1/models', { headers: { 'x-request-id': 'no spaces\tallowed' } })
  expect(bad.status).toBe(401)
  expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  const notFound = await fetch(gw.url + '/nope')
  expect(notFound.headers.get('x-request-id')).toBeTruthy()
})

test('unknown route 404, wrong method 405, both as {error}', async () => {
  const nf = await fetch(gw.url + '/api/v1/nothing-here', { headers: auth() })
  expect(nf.status).toBe(404)
  expect(await nf.json()).toEqual({ error: 'No route GET /api/v1/nothing-here' })
  const m = await fetch(gw.url + '/api/v1/models', { method: 'DELETE', headers: auth() })
  expect(m.status).toBe(405)
  expect(m.headers.get('allow')).toBe('GET')
  expect(((await m.json()) as { error: string }).error).toContain('DELETE')
})

test('a doubled /v1/v1/ gets a 404 naming the base URL to configure', async () => {
  const r = await fetch(gw.url + '/api/beta/v1/v1/messages?beta=true', { method: 'POST', headers: { 'x-api-key': gw.key } })
  expect(r.status).toBe(404)
  expect(((await r.json()) as { error: string }).error).toContain(`${gw.url}/api/beta`)
  const o = await fetch(gw.url + '/api/alpha/v1/v1/chat/completions', { method: 'POST', headers: auth() })
  expect(((await o.json()) as { error: string }).error).toContain(`${gw.url}/api/alpha/v1`)
})

// a base URL without its /v1 (the openai SDK given ROOT/api/alpha, @ai-sdk/anthropic given
// ROOT/api/beta) reaches a path that is no route: the 404 says which base URL to set
test('a path that lacks /v1 gets a 404 naming the base URL to configure', async () => {
  const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha`, maxRetries: 0 })
  const e = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }).catch((e: Error) => e)
  expect(e).toBeInstanceOf(OpenAI.NotFoundError)
  expect((e as Error).message).toContain(`set the base URL to ${gw.url}/api/alpha/v1`)
  const r = await fetch(gw.url + '/api/beta/messages', { method: 'POST', headers: { 'x-api-key': gw.key } })
  expect(r.status).toBe(404)
  expect(((await r.json()) as { error: string }).error).toContain(`@ai-sdk/anthropic takes ${gw.url}/api/beta/v1`)
  // a path under /api/alpha that no client makes stays a plain 404
  const other = await fetch(gw.url + '/api/alpha/nothing', { headers: auth() })
  expect(other.status).toBe(404)
  expect(((await other.json()) as { error: string }).error).not.toContain('/v1')
})

test("a long quoted client value is cut in a message; the gateway's own words between two short ones are not", async () => {
  const long = 'x'.repeat(200)
  expect(bounded(`model: "${long}" is not known`)).toBe(`model: "${'x'.repeat(64)}…" is not known`)
  const ours = `reasoning.summary: "auto" needs a GPT-5-family model; Claude-family model mock-claude has no reasoning summaries (use "none")`
  expect(bounded(ours)).toBe(ours)
  const r = await fetch(gw.url + '/api/alpha/v1/responses', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-claude', input: 'hi', reasoning: { summary: 'auto' } }) })
  expect(r.status).toBe(400)
  expect(((await r.json()) as { error: string }).error).toEndWith('(use "none")')
})

test('malformed JSON is a 400 that names the parse problem', async () => {
  const r = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: '{"name": "x",' })
  expect(r.status).toBe(400)
  expect(((await r.json()) as { error: string }).error).toMatch(/^Malformed JSON body: .+/)
})

test('413 from Content-Length, without reading the body', async () => {
  const r = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'x'.repeat(70 * 1024) }) })
  expect(r.status).toBe(413)
  expect(((await r.json()) as { error: string }).error).toContain('65536')
})

test('413 on a body sent in chunks with no Content-Length, decided while reading', async () => {
  let sent = 0
  const chunk = new TextEncoder().encode('x'.repeat(16 * 1024))
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent >= 1024 * 1024) return c.close() // would be 1 MiB if all of it were read
      sent += chunk.byteLength
      c.enqueue(chunk)
      await Bun.sleep(1)
    },
  })
  const r = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body, duplex: 'half' } as RequestInit)
  expect(r.status).toBe(413)
  expect(sent).toBeLessThan(1024 * 1024)
})

test('admin routes: token required; create, list, update, disable, credit', async () => {
  expect((await fetch(gw.url + '/admin/v1/keys')).status).toBe(401)
  const c = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'ci', account: 'acme', credits: 5, rpm: 9 }) })
  expect(c.status).toBe(201)
  const created = (await c.json()) as { id: string; key: string; account: string; credits: number; rpm: number }
  expect(created.key).toStartWith('sk-sy-')
  expect(created).toMatchObject({ account: 'acme', credits: 5, rpm: 9 })
  expect((await fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(200)
  const list = (await (await fetch(gw.url + '/admin/v1/keys', { headers: admin })).json()) as { data: { id: string; key?: string }[] }
  expect(list.data.map((k) => k.id)).toContain(created.id)
  expect(JSON.stringify(list)).not.toContain(created.key)
  const bad = await fetch(gw.url + `/admin/v1/keys/${created.id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ status: 'paused' }) })
  expect(bad.status).toBe(400)
  expect(((await bad.json()) as { error: string }).error).toStartWith('status')
  const d = await fetch(gw.url + `/admin/v1/keys/${created.id}/disable`, { method: 'POST', headers: admin })
  expect(((await d.json()) as { status: string }).status).toBe('inactive')
  expect((await fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(401)
  const cr = await fetch(gw.url + `/admin/v1/keys/${created.id}/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 2.5 }) })
  expect(((await cr.json()) as { credits: number }).credits).toBe(7.5)
  expect((await fetch(gw.url + '/admin/v1/keys/key_nope', { headers: admin })).status).toBe(404)
})

test('a grant that would take a key past the most it may hold is a 400, never credits of Infinity (which would read as unlimited)', async () => {
  const c = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'rich', credits: 1 }) })
  const { id } = (await c.json()) as { id: string }
  const grant = (amount: number) => fetch(gw.url + `/admin/v1/keys/${id}/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount }) })
  // one grant past the bound, and two that only pass it together
  const big = await grant(1e308)
  expect(big.status).toBe(400)
  expect(((await big.json()) as { error: string }).error).toStartWith('amount')
  expect((await grant(6e11)).status).toBe(200)
  const over = await grant(6e11)
  expect(over.status).toBe(400)
  expect(over.headers.get('x-request-id')).toBeTruthy()
  expect(((await over.json()) as { error: string }).error).toContain('would pass')
  const k = (await (await fetch(gw.url + `/admin/v1/keys/${id}`, { headers: admin })).json()) as { credits: number | null }
  expect(k.credits).toBe(6e11 + 1)
  const set = await fetch(gw.url + `/admin/v1/keys/${id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ credits: 1e300 }) })
  expect(set.status).toBe(400)
  // the bound is said, not TypeBox's "Expected union value"
  expect(((await set.json()) as { error: string }).error).toBe('credits: expected null (unlimited) or USD 0 to 1000000000000')
  // the CLI holds to the same bound
  const cli = await runCli(['keys', 'create', '--name', 'rich', '--credits', '1e300', '--data-dir', tempDir()])
  expect(cli.code).toBe(2)
  expect(cli.stderr).toContain('--credits: at most 1000000000000 USD')
  expect((await fetch(gw.url + `/admin/v1/keys/key_nope/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 1 }) })).status).toBe(404)
})

// the admin routes take no query: a filter the listing does not have answered every key as if
// it were the filtered list, and a second parameter was as silent
test('admin routes: a query parameter is a 400 naming it, after the token is checked', async () => {
  expect((await fetch(gw.url + '/admin/v1/keys?status=inactive')).status).toBe(401)
  const c = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'q' }) })
  const { id } = (await c.json()) as { id: string }
  for (const [method, path, name] of [
    ['GET', '/admin/v1/keys?status=inactive', 'status'],
    ['GET', '/admin/v1/keys?account=acme', 'account'],
    ['GET', `/admin/v1/keys/${id}?verbose=1`, 'verbose'],
    ['POST', `/admin/v1/keys/${id}/disable?force=1`, 'force'],
    ['GET', '/admin/v1/cache?__proto__=1', '__proto__'],
  ] as const) {
    const r = await fetch(gw.url + path, { method, headers: admin })
    expect(r.status).toBe(400)
    expect(r.headers.get('x-request-id')).toBeTruthy()
    expect(((await r.json()) as { error: string }).error).toStartWith(`${name}: unknown query parameter`)
  }
  // the refused disable changed nothing
  expect(((await (await fetch(gw.url + `/admin/v1/keys/${id}`, { headers: admin })).json()) as { status: string }).status).toBe('active')
})

// a string of digits passed as an integer, past its bound: "0" requests a minute was stored
test('a key\'s rpm must be an integer of at least 1, not a string of one', async () => {
  for (const rpm of ['0', '60', '-5']) {
    const r = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'rpm', rpm }) })
    expect(r.status).toBe(400)
    expect(((await r.json()) as { error: string }).error).toStartWith('rpm')
  }
  const ok = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'rpm', rpm: 60 }) })
  const { id, rpm } = (await ok.json()) as { id: string; rpm: number }
  expect(rpm).toBe(60)
  expect((await fetch(gw.url + `/admin/v1/keys/${id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ rpm: '0' }) })).status).toBe(400)
  // nor past what a column holds: the bound is said
  const huge = await fetch(gw.url + `/admin/v1/keys/${id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ rpm: 1e300 }) })
  expect(huge.status).toBe(400)
  expect(((await huge.json()) as { error: string }).error).toBe('rpm: expected null (the default) or an integer 1 to 1000000000')
  for (const rpm of ['1e3', ' 5', '5000000000']) {
    const cli = await runCli(['keys', 'create', '--name', 'r', '--rpm', rpm, '--data-dir', tempDir()])
    expect(cli.code).toBe(2)
    expect(cli.stderr).toContain('--rpm')
  }
})

test('an account name that is all blanks is a 400 (no report or listing could name it again); one with blanks inside is kept', async () => {
  for (const account of [' ', '\t', '  \n ']) {
    const r = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'blank', account }) })
    expect(r.status).toBe(400)
    expect(((await r.json()) as { error: string }).error).toStartWith('account:')
  }
  const ok = await fetch(gw.url + '/admin/v1/keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'spaced', account: ' acme corp ' }) })
  expect(ok.status).toBe(201)
  const { id } = (await ok.json()) as { id: string }
  expect((await fetch(gw.url + `/admin/v1/keys/${id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ account: ' ' }) })).status).toBe(400)
})

test('admin routes answer 404 when no admin token is configured', async () => {
  const plain = await startGateway()
  try {
    const r = await fetch(plain.url + '/admin/v1/keys', { headers: { authorization: 'Bearer anything' } })
    expect(r.status).toBe(404)
  } finally {
    await plain.stop()
  }
})

test('an unexpected exception is a 500 with the request id, its stack logged but not returned', async () => {
  const { createPipeline } = await import('../../src/front.ts')
  const { createLogger } = await import('../../src/http/log.ts')
  const lines: string[] = []
  const services = { ...gw.services, log: createLogger('info', (l) => lines.push(l)) }
  const handler = createPipeline(services, () => {
    throw new Error('kaboom at /secret/path/file.ts')
  })
  const server = Bun.serve({ port: 0, fetch: handler })
  try {
    const r = await fetch(`http://127.0.0.1:${server.port}/health`, { headers: { 'x-request-id': 'req-500' } })
    expect(r.status).toBe(500)
    expect(r.headers.get('x-request-id')).toBe('req-500')
    const body = (await r.json()) as { error: string }
    expect(body.error).toContain('req-500')
    expect(body.error).not.toContain('kaboom')
    expect(body.error).not.toContain('/secret/path')
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error')
    expect(logged.request_id).toBe('req-500')
    expect(logged.error).toContain('kaboom')
  } finally {
    server.stop(true)
  }
})
