// /ui as served: the page and its two assets from the bundle built into the server, each with
// the strict Content-Security-Policy; gzip when asked; nothing from another origin; under
// 200 KB gzipped; and the committed bundle module is what the current sources build to.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { bundleUi, GENERATED, renderModule } from '../../scripts/ui-bundle.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let g: Gateway
beforeAll(async () => {
  g = await startGateway()
})
afterAll(() => g.stop())

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

test('GET /ui: the page with a strict CSP (no inline script or style), no-store; its assets by hash, immutable; all same-origin', async () => {
  for (const path of ['/ui', '/ui/']) {
    const r = await fetch(g.url + path)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(r.headers.get('content-security-policy')).toBe(CSP)
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    expect(r.headers.get('cache-control')).toBe('no-store')
    const html = await r.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/) // no inline script
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i) // no inline style or handler
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBe(3)
    for (const ref of refs) expect(ref === 'data:,' || ref.startsWith('/ui/assets/')).toBe(true)
  }
  const html = await (await fetch(g.url + '/ui')).text()
  for (const ref of [...html.matchAll(/"(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!)) {
    const r = await fetch(g.url + ref)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe(ref.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8')
    expect(r.headers.get('content-security-policy')).toBe(CSP)
    expect(r.headers.get('cache-control')).toContain('immutable')
    const body = await r.text()
    // nothing from another origin: the only absolute URL in the code is the SVG namespace
    expect([...body.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg')).toEqual([])
    expect(body).not.toContain('url(')
  }
  const missing = await fetch(g.url + '/ui/assets/app-000.js')
  expect(missing.status).toBe(404)
  expect(missing.headers.get('content-type')).toBe('application/json')
})

test('gzip when accepted; the whole page is under 200 KB gzipped', async () => {
  const html = await (await fetch(g.url + '/ui')).text()
  let total = 0
  for (const path of ['/ui', ...[...html.matchAll(/"(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!)]) {
    // Bun's fetch would decompress on its own: ask for the raw bytes
    const r = await fetch(g.url + path, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
    expect(r.headers.get('content-encoding')).toBe('gzip')
    const bytes = new Uint8Array(await r.arrayBuffer())
    expect(gunzipSync(bytes).length).toBeGreaterThan(bytes.length)
    total += bytes.length
    const plain = await fetch(g.url + path, { headers: { 'accept-encoding': 'identity' } })
    expect(plain.headers.get('content-encoding')).toBeNull()
  }
  console.log(`dashboard: ${total} bytes gzipped in total`)
  expect(total).toBeLessThan(200 * 1024)
})

test('src/ui/assets.gen.ts is what `npm run build:ui` makes from the current src/ui/app (rerun it after a change)', async () => {
  expect(readFileSync(GENERATED, 'utf8')).toBe(renderModule(await bundleUi()))
}, 30_000)
