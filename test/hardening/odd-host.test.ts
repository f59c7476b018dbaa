// One path for auth, limits, logging and routing, whatever the Host header. A 1–3
// character Host used to make the router see a different path than auth did, so
// `GET /ab/api/v1/models` with `Host: x` got the model list with no key.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let port: number
beforeAll(async () => {
  gw = await startGateway()
  port = Number(new URL(gw.url).port)
})
afterAll(async () => {
  await gw.stop()
})

/** One raw HTTP/1.1 exchange; the status, the headers (lower-case) and the body text. */
function raw(head: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(head))
    let buf = ''
    sock.on('data', (d) => (buf += d.toString('utf8')))
    sock.on('error', reject)
    sock.on('end', () => {
      const [h, ...rest] = buf.split('\r\n\r\n')
      const lines = h!.split('\r\n')
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') })
    })
  })
}

const request = (target: string, host: string | null, auth?: string) =>
  `GET ${target} HTTP/1.1\r\n${host === null ? '' : `Host: ${host}\r\n`}${auth ? `Authorization: Bearer ${auth}\r\n` : ''}Connection: close\r\n\r\n`

describe('odd Host headers', () => {
  // the IPv6 host names the gateway's own port, filled in once it is known
  const hosts = ['', 'x', 'gw', 'abc', 'abcd', '[::1]:PORT']
  const hostValue = (h: string) => h.replace('PORT', String(port))
  for (const h of hosts) {
    test(`Host "${h}": no key → 401 on /api routes, even behind a path prefix the router might skip`, async () => {
      const hv = hostValue(h)
      for (const target of ['/api/v1/models', '/ab/api/v1/models', '/abc/api/v1/files', '/x/api/alpha/v1/chat/completions']) {
        const r = await raw(request(target, hv))
        expect(r.status === 401 || r.status === 404).toBe(true)
        expect(r.status).not.toBe(200)
        expect(r.headers['x-request-id']).toBeTruthy()
        expect(JSON.parse(r.body).error).toBeString()
      }
      expect((await raw(request('/api/v1/models', hv))).status).toBe(401)
      // a doubled /v1/v1/ still gets its hint, not a 500, whatever the Host
      expect((await raw(request('/api/beta/v1/v1/messages', hv))).status).toBe(404)
    })

    test(`Host "${h}": with a key, /api/v1/models is 200 and an unknown path is 404, never 500`, async () => {
      const hv = hostValue(h)
      const ok = await raw(request('/api/v1/models', hv, gw.key))
      expect(ok.status).toBe(200)
      expect(JSON.parse(ok.body).data.length).toBeGreaterThan(0)
      const missing = await raw(request('/ab/api/v1/models', hv, gw.key))
      expect(missing.status).toBe(404)
      expect(missing.headers['x-request-id']).toBeTruthy()
    })
  }

  test('a request rebuilt for the router keeps its body: chat and a chunked multipart upload with Host "x"', async () => {
    const body = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text hello' }] })
    const chat = await raw(`POST /api/alpha/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    expect(chat.status).toBe(200)
    expect(JSON.parse(chat.body).choices[0].message.content).toBe('hello')
    const form = `--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(300_000)}\r\n--b--\r\n`
    const up = await raw(`POST /api/v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${form.length.toString(16)}\r\n${form}\r\n0\r\n\r\n`)
    expect(up.status).toBe(200)
    expect(JSON.parse(up.body).bytes).toBe(300_000)
  })

  // Bun puts the Host into the request's URL as given; a port past 65535 or an unclosed IPv6
  // bracket makes a URL that does not parse, and a route reading its query threw on it (a 500)
  test('a Host that makes no valid URL: answered as any other, never 500', async () => {
    for (const hv of ['evil.example:99999', '[::1', 'a b.example', 'x:-1']) {
      const listed = await raw(request('/api/v1/files?limit=1', hv, gw.key))
      expect(listed.status).toBe(200)
      expect(JSON.parse(listed.body).object).toBe('list')
      const bad = await raw(request('/api/v1/files?limit=0', hv, gw.key))
      expect(bad.status).toBe(400)
      expect(JSON.parse(bad.body).error).toContain('limit')
      const unknown = await raw(request('/api/v1/nope', hv, gw.key))
      expect(unknown.status).toBe(404)
      expect(unknown.headers['x-request-id']).toBeTruthy()
      expect((await raw(request('/api/v1/files', hv))).status).toBe(401)
    }
  })

  test('an absolute-form request target routes by its own path', async () => {
    expect((await raw(request(`http://x/api/v1/models`, 'x'))).status).toBe(401)
    expect((await raw(request(`http://x/api/v1/models`, 'x', gw.key))).status).toBe(200)
    expect((await raw(request(`http://x/ab/api/v1/models`, 'x'))).status).not.toBe(200)
  })

  test('a request with no Host header at all is still authenticated', async () => {
    expect((await raw(request('/api/v1/models', null))).status).not.toBe(200)
  })
})
