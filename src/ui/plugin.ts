// GET /ui: the dashboard page and its two assets, from the bundle built into the server
// (assets.gen.ts). Every answer carries a strict Content-Security-Policy: scripts, styles and
// connections from this origin only, no inline script or style, no framing, no HTML sinks. Assets are named
// by content hash and cached for good; the page itself is never cached.
import { Elysia } from 'elysia'
import { gzipSync } from 'node:zlib'
import { UI_ASSETS, UI_INDEX } from './assets.gen.ts'
import { withoutSecrets } from '../lib/secrets.ts'

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  // the app builds every element from text nodes: an HTML string given to innerHTML and the
  // like is refused outright (Trusted Types, with no policy to make one), should one ever appear
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ')

const SECURITY = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
}

interface Served {
  type: string
  plain: Uint8Array<ArrayBuffer>
  gzip: Uint8Array<ArrayBuffer>
  cache: string
}

function served(type: string, body: string, cache: string): Served {
  const plain = new TextEncoder().encode(body)
  return { type, plain, gzip: new Uint8Array(gzipSync(plain, { level: 9 })), cache }
}

export function uiRoutes() {
  // compressed once at start: a few tens of KB
  const index = served('text/html; charset=utf-8', UI_INDEX, 'no-store')
  const assets = new Map(Object.entries(UI_ASSETS).map(([path, a]) => [path, served(a.type, a.body, 'public, max-age=31536000, immutable')]))
  const send = (f: Served, request: Request) => {
    const gz = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')
    const headers: Record<string, string> = { ...SECURITY, 'content-type': f.type, 'cache-control': f.cache, vary: 'accept-encoding' }
    if (gz) headers['content-encoding'] = 'gzip'
    return new Response(gz ? f.gzip : f.plain, { headers })
  }
  const notFound = (path: string) =>
    new Response(JSON.stringify({ error: `No dashboard file ${withoutSecrets(path.slice(0, 200))}` }), { status: 404, headers: { ...SECURITY, 'content-type': 'application/json' } })
  return new Elysia({ name: 'ui' })
    .get('/ui', ({ request }) => send(index, request))
    .get('/ui/', ({ request }) => send(index, request))
    .get('/ui/assets/:name', ({ request, params }) => {
      const path = `/ui/assets/${params.name}`
      const f = assets.get(path)
      return f ? send(f, request) : notFound(path)
    })
}
