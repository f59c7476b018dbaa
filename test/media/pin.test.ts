// The guard connects to the address it checked, not to whatever the name resolves to a
// moment later (DNS rebinding): the names here exist only in the test's resolver, so the
// fetch can only succeed if it connects to the checked address itself. The Host header and,
// over TLS, the certificate check keep the name. 127.0.0.1 stands in for a public address.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { HttpError } from '../../src/http/errors.ts'
import { guardedFetch, type FetchPolicy } from '../../src/media/fetch.ts'

const TLS_DIR = join(import.meta.dir, 'tls')
let cert: string
let http: ReturnType<typeof Bun.serve>
let https: ReturnType<typeof Bun.serve>
const seen: string[] = []

const reply = (req: Request) => {
  seen.push(req.headers.get('host') ?? '')
  const p = new URL(req.url).pathname
  if (p === '/hop') return Response.redirect(`http://docs.test:${http.port}/doc`, 302)
  return new Response('pinned', { headers: { 'content-type': 'text/plain' } })
}

beforeAll(async () => {
  cert = await Bun.file(join(TLS_DIR, 'docs.test.crt')).text()
  http = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: reply })
  https = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert, key: await Bun.file(join(TLS_DIR, 'docs.test.key')).text() }, fetch: reply })
})
afterAll(() => {
  http.stop(true)
  https.stop(true)
})

/** A resolver that answers `answers` in turn (the last one again), counting its calls. */
function resolver(...answers: string[][]) {
  const r = { calls: 0, lookup: async (_host: string) => answers[Math.min(r.calls++, answers.length - 1)]! }
  return r
}

const policy = (lookup: FetchPolicy['lookup'], over: Partial<FetchPolicy> = {}): FetchPolicy => ({
  allowPrivate: false, maxBytes: 1 << 16, timeoutMs: 2000, lookup, allowAddresses: new Set(['127.0.0.1']), ...over,
})

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.catch((x) => x)
  expect(e).toBeInstanceOf(HttpError)
  expect((e as HttpError).status).toBe(400)
  return (e as HttpError).message
}

describe('the connection goes to the checked address', () => {
  test('http: a name only the guard can resolve is fetched from the address it checked, Host keeps the name, one lookup', async () => {
    const r = resolver(['127.0.0.1'])
    const got = await guardedFetch(`http://docs.test:${http.port}/doc`, policy(r.lookup), 'doc')
    expect(new TextDecoder().decode(got.bytes)).toBe('pinned')
    expect(seen.at(-1)).toBe(`docs.test:${http.port}`)
    expect(r.calls).toBe(1)
  })

  test('a rebinding answer on the next hop is checked again and refused', async () => {
    const r = resolver(['127.0.0.1'], ['10.0.0.1'])
    expect(await refusal(guardedFetch(`http://docs.test:${http.port}/hop`, policy(r.lookup), 'messages[0].content[0].source.url'))).toBe(
      'messages[0].content[0].source.url: refused: 10.0.0.1 is a private address (docs.test)',
    )
    expect(r.calls).toBe(2)
  })

  test('https: the certificate is checked against the name, not the address connected to', async () => {
    const got = await guardedFetch(`https://docs.test:${https.port}/doc`, policy(resolver(['127.0.0.1']).lookup, { ca: cert }), 'doc')
    expect(new TextDecoder().decode(got.bytes)).toBe('pinned')
    expect(seen.at(-1)).toBe(`docs.test:${https.port}`)
    // same address, another name: the certificate for docs.test does not cover it
    const msg = await refusal(guardedFetch(`https://other.test:${https.port}/doc`, policy(resolver(['127.0.0.1']).lookup, { ca: cert }), 'doc'))
    expect(msg).toStartWith('doc: could not fetch the URL')
  })

  test('several addresses: an unreachable one is skipped for the next checked one', async () => {
    // 127.0.0.2 is loopback too (allow-listed here) but nothing listens on this port there
    const r = resolver(['127.0.0.2', '127.0.0.1'])
    const got = await guardedFetch(`http://docs.test:${http.port}/doc`, policy(r.lookup, { allowAddresses: new Set(['127.0.0.1', '127.0.0.2']) }), 'doc')
    expect(new TextDecoder().decode(got.bytes)).toBe('pinned')
  })
})
