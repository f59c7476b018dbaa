// The media URL guard: http(s) only; private, loopback, link-local, CGNAT, unique-local and
// unspecified addresses refused after DNS and on every redirect; a size cap and a timeout.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { guardedFetch, type FetchPolicy } from '../../src/media/fetch.ts'
import { refusedAddress } from '../../src/media/address.ts'
import { HttpError } from '../../src/http/errors.ts'

let server: ReturnType<typeof Bun.serve>
beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const u = new URL(req.url)
      if (u.pathname === '/doc.txt') return new Response('hello document', { headers: { 'content-type': 'text/plain; charset=utf-8' } })
      if (u.pathname === '/to-private') return Response.redirect('http://10.0.0.1/secret', 302)
      if (u.pathname === '/to-metadata') return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
      if (u.pathname === '/hop') return Response.redirect(`http://127.0.0.1:${server.port}/doc.txt`, 302)
      if (u.pathname === '/big') return new Response(new Uint8Array(2048))
      // no Content-Length: the cap must hold while the body streams in
      if (u.pathname === '/big-chunked') return new Response(new ReadableStream({ pull: (c) => { c.enqueue(new Uint8Array(512)); } }))
      // headers at once, then a body that stalls past the timeout
      if (u.pathname === '/stall') return new Response(new ReadableStream({ async start(c) { c.enqueue(new TextEncoder().encode('a')); await Bun.sleep(1000); c.close() } }))
      if (u.pathname === '/loop') return Response.redirect(`http://127.0.0.1:${server.port}/loop`, 302)
      if (u.pathname === '/to-file') return new Response(null, { status: 302, headers: { location: 'file:///etc/passwd' } })
      if (u.pathname === '/slow') {
        await Bun.sleep(1000)
        return new Response('late')
      }
      return new Response('no', { status: 404 })
    },
  })
})
afterAll(() => server.stop(true))

/** Names resolve through this table, not the system: `rebind.test` has a public and a loopback address. */
const policy = (over: Partial<FetchPolicy> = {}): FetchPolicy => ({
  allowPrivate: false,
  maxBytes: 1024,
  timeoutMs: 300,
  lookup: async (host) => (host === 'public.test' ? ['93.184.216.34'] : host === 'rebind.test' ? ['93.184.216.34', '127.0.0.1'] : host === 'localhost' ? ['127.0.0.1', '::1'] : []),
  ...over,
})

async function refusal(url: string, p = policy()): Promise<string> {
  const e = await guardedFetch(url, p, 'messages[0].content[1].source.url').catch((x) => x)
  expect(e).toBeInstanceOf(HttpError)
  expect((e as HttpError).status).toBe(400)
  expect((e as HttpError).message).toStartWith('messages[0].content[1].source.url: ')
  return (e as HttpError).message
}

describe('address classes', () => {
  for (const [addr, refused] of [
    ['127.0.0.1', true], ['10.0.0.1', true], ['172.16.5.4', true], ['192.168.1.1', true], ['169.254.169.254', true],
    ['100.64.0.1', true], ['0.0.0.0', true], ['224.0.0.1', true], ['255.255.255.255', true], ['::1', true], ['::', true],
    ['::7f00:1', true], ['64:ff9b::a00:1', true], ['::ffff:169.254.169.254', true], ['fc00::1', true], ['fd12:3456::1', true], ['fe80::1', true], ['::ffff:127.0.0.1', true], ['::ffff:10.0.0.1', true],
    ['93.184.216.34', false], ['2606:2800:220:1::1', false], ['8.8.8.8', false],
  ] as const) {
    test(`${addr}: ${refused ? 'refused' : 'allowed'}`, () => expect(refusedAddress(addr) !== null).toBe(refused))
  }
})

describe('guardedFetch', () => {
  test('literal private, loopback, metadata and IPv6 addresses are refused before any connection', async () => {
    for (const u of ['http://127.0.0.1/x', 'http://10.0.0.1/x', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://0.0.0.0/x']) {
      expect(await refusal(u)).toContain('refused')
    }
  })

  test('a name resolving to a private address is refused (checked after DNS), even when another of its addresses is public', async () => {
    expect(await refusal('http://localhost/x')).toContain('refused')
    expect(await refusal('http://rebind.test/x')).toContain('127.0.0.1')
  })

  test('the system resolver: localhost (from /etc/hosts, no network needed) resolves to loopback and is refused', async () => {
    const { lookup: _, ...system } = policy()
    expect(await refusal(`http://localhost:${server.port}/doc.txt`, system)).toContain('is a loopback address (localhost)')
  })

  test('only http and https', async () => {
    for (const u of ['file:///etc/passwd', 'ftp://public.test/x', 'gopher://public.test/']) expect(await refusal(u)).toContain('only http and https')
    expect(await refusal('not a url')).toContain('not a valid URL')
  })

  // The local test server stands in for a public host: its address is allow-listed, nothing else is.
  const local = (over: Partial<FetchPolicy> = {}) => policy({ allowAddresses: new Set(['127.0.0.1']), ...over })
  const via = (path: string) => `http://127.0.0.1:${server.port}${path}`

  test('an allowed document is fetched; a redirect to an allowed place is followed', async () => {
    const ok = await guardedFetch(via('/doc.txt'), local(), 'doc')
    expect(new TextDecoder().decode(ok.bytes)).toBe('hello document')
    expect(ok.mediaType).toBe('text/plain')
    const hopped = await guardedFetch(via('/hop'), local(), 'doc')
    expect(new TextDecoder().decode(hopped.bytes)).toBe('hello document')
  })

  test('a redirect from an allowed host to a private or metadata address is refused (every hop is checked)', async () => {
    expect(await refusal(via('/to-private'), local())).toContain('10.0.0.1 is a private address')
    expect(await refusal(via('/to-metadata'), local())).toContain('169.254.169.254 is a linkLocal address')
  })

  test('size cap and timeout', async () => {
    expect(await refusal(via('/big'), local())).toContain('larger than 1024 bytes')
    expect(await refusal(via('/slow'), local({ timeoutMs: 100 }))).toContain('longer than 100 ms')
    expect(await refusal(via('/big-chunked'), local())).toContain('larger than 1024 bytes')
    expect(await refusal(via('/stall'), local({ timeoutMs: 100 }))).toContain('longer than 100 ms')
  })

  test('redirects: at most 5, and never to a scheme other than http(s)', async () => {
    expect(await refusal(via('/loop'), local())).toContain('more than 5 redirects')
    expect(await refusal(via('/to-file'), local())).toContain('only http and https')
  })

  test('allow_private_urls lets a private address through (an operator\'s own network)', async () => {
    const ok = await guardedFetch(via('/doc.txt'), policy({ allowPrivate: true }), 'doc')
    expect(new TextDecoder().decode(ok.bytes)).toBe('hello document')
  })
})
