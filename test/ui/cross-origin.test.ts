// A web app calling the gateway from a page of another origin, with the official SDKs'
// `dangerouslyAllowBrowser`, as OpenAI's and Anthropic's own APIs allow: the browser's preflight
// answered, replies and streams read, the request id and an error's status readable. The origins
// allowed are the operator's to narrow; the admin routes are never opened to other origins.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { loadConfig } from '../../src/config/load.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { HAVE_CHROMIUM, launch, type Browser } from './browser.ts'

let open: Gateway // every origin allowed (the default)
let narrow: Gateway // one origin allowed, not the page's
let site: ReturnType<typeof Bun.serve>
const ALLOWED = 'https://app.example.com'

beforeAll(async () => {
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, 'browser-sdks.ts')], target: 'browser' })
  if (!built.success) throw new Error(`the SDKs' browser build failed: ${built.logs.join('\n')}`)
  const sdks = await built.outputs[0]!.text()
  site = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) =>
      new URL(req.url).pathname === '/sdks.js'
        ? new Response(sdks, { headers: { 'content-type': 'text/javascript' } })
        : new Response('<!doctype html><title>app</title><script src="/sdks.js"></script>', { headers: { 'content-type': 'text/html' } }),
  })
  ;[open, narrow] = await Promise.all([startGateway(), startGateway({ env: { SWITCHYARD_CORS_ORIGINS: ALLOWED } })])
}, 60_000)

afterAll(async () => {
  await Promise.all([open?.stop(), narrow?.stop()])
  site?.stop(true)
})

const preflight = (base: string, path: string, origin: string) =>
  fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
  })

describe('the answers a browser reads before and after a cross-origin call', () => {
  test('a preflight to an API route: allowed at once, with the headers the page asked to send (authorization among them)', async () => {
    const r = await preflight(open.url, '/api/alpha/v1/chat/completions', 'http://localhost:5173')
    expect(r.status).toBe(204)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    expect(r.headers.get('access-control-allow-methods')).toContain('POST')
    expect(r.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os')
    expect(r.headers.get('x-request-id')).toBeTruthy()
    // a public site's page calling a gateway on the user's machine asks for the private network too
    const local = await fetch(`${open.url}/api/alpha/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-private-network': 'true' },
    })
    expect(local.headers.get('access-control-allow-private-network')).toBe('true')
  })

  test('an answer, an error included, names the origin allowed and lets the page read every header', async () => {
    for (const auth of [`Bearer ${open.key}`, 'Bearer sk-sy-wrong']) {
      const r = await fetch(`${open.url}/api/alpha/v1/models`, { headers: { origin: 'http://localhost:5173', authorization: auth } })
      expect(r.headers.get('access-control-allow-origin')).toBe('*')
      expect(r.headers.get('access-control-expose-headers')).toBe('*')
    }
  })

  test('with a list of origins: a listed one is named back (and the answer varies by origin); another gets a JSON 403 naming the setting', async () => {
    const ok = await preflight(narrow.url, '/api/beta/v1/messages', ALLOWED)
    expect(ok.status).toBe(204)
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED)
    expect(ok.headers.get('vary')).toContain('Origin')
    const refused = await preflight(narrow.url, '/api/beta/v1/messages', 'https://evil.example.com')
    expect(refused.status).toBe(403)
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    expect(((await refused.json()) as { error: string }).error).toContain('server.cors_origins')
    const read = await fetch(`${narrow.url}/api/alpha/v1/models`, { headers: { origin: 'https://evil.example.com', authorization: `Bearer ${narrow.key}` } })
    expect(read.status).toBe(200)
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('the admin routes are not opened to other origins', async () => {
    const r = await preflight(open.url, '/admin/keys', 'http://localhost:5173')
    expect(r.headers.get('access-control-allow-origin')).toBeNull()
    const read = await fetch(`${open.url}/admin/keys`, { headers: { origin: 'http://localhost:5173' } })
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('an origin that is not one (a path, no scheme) is refused at start, naming the setting', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'https://*.example.com'])
      expect(() => loadConfig({ flags: {}, env: { SWITCHYARD_CORS_ORIGINS: bad }, cwd: '/tmp' })).toThrow('SWITCHYARD_CORS_ORIGINS')
    expect(loadConfig({ flags: {}, env: { SWITCHYARD_CORS_ORIGINS: 'none' }, cwd: '/tmp' }).corsOrigins).toEqual([])
    expect(loadConfig({ flags: {}, env: {}, cwd: '/tmp' }).corsOrigins).toEqual(['*'])
  })
})

describe.skipIf(!HAVE_CHROMIUM)('the official SDKs in a page of another origin', () => {
  let b: Browser
  let page: Page

  beforeAll(async () => {
    b = await launch()
    page = await b.page()
    page.setDefaultTimeout(30_000)
    await page.goto(site.url.href)
    await page.waitForFunction(() => 'OpenAI' in globalThis && 'Anthropic' in globalThis)
  }, 60_000)

  afterAll(async () => {
    await b?.close()
  })

  test('the OpenAI SDK: a reply with its request id, a stream, and an error with its status', async () => {
    const out = await page.evaluate(
      async ([base, key]) => {
        const OpenAI = (globalThis as any).OpenAI
        const client = new OpenAI({ baseURL: `${base}/api/alpha/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
        const { data, request_id } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'say hello' }] }).withResponse()
        let streamed = ''
        for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'say hello' }], stream: true })) streamed += chunk.choices[0]?.delta?.content ?? ''
        const wrong = new OpenAI({ baseURL: `${base}/api/alpha/v1`, apiKey: 'sk-sy-wrong', dangerouslyAllowBrowser: true, maxRetries: 0 })
        const err = await wrong.models.list().catch((e: any) => e)
        return { text: data.choices[0].message.content, request_id, streamed, status: err.status, errorRequestId: err.requestID }
      },
      [open.url, open.key],
    )
    expect(out.text.length).toBeGreaterThan(0)
    expect(out.request_id).toBeTruthy()
    expect(out.streamed.length).toBeGreaterThan(0)
    expect(out.status).toBe(401)
    expect(out.errorRequestId).toBeTruthy()
  })

  test('the Anthropic SDK: a reply and a stream through the messages surface', async () => {
    const out = await page.evaluate(
      async ([base, key]) => {
        const Anthropic = (globalThis as any).Anthropic
        const client = new Anthropic({ baseURL: `${base}/api/beta`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
        const reply = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'say hello' }] })
        const final = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'say hello' }] }).finalMessage()
        return { text: reply.content[0].text, id: reply._request_id, streamed: final.content[0].text }
      },
      [open.url, open.key],
    )
    expect(out.text.length).toBeGreaterThan(0)
    expect(out.id).toBeTruthy()
    expect(out.streamed.length).toBeGreaterThan(0)
  })

  test('a gateway that allows other origins only: the browser refuses to hand the page its answer', async () => {
    const message = await page.evaluate(
      async ([base, key]) => {
        const OpenAI = (globalThis as any).OpenAI
        const client = new OpenAI({ baseURL: `${base}/api/alpha/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
        return client.models.list().then(
          () => 'answered',
          (e: any) => `${e.constructor.name}: ${e.message}`,
        )
      },
      [narrow.url, narrow.key],
    )
    expect(message).toContain('Connection error')
  })
})
