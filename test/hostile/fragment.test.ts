// A raw `#` in a request target (HTTP's target has no fragment): a 400 naming it, not a route
// answer about a path the client did not mean (a 405 saying GET is not allowed on the files
// listing, a 404 for /health, a lookup of the id `abc#x`). `%23` is an id's `#`, as before.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(async () => {
  await gw.stop()
})

/** A GET of `target` as written (fetch would keep the fragment to itself): status, request id, body. */
function rawGet(target: string): Promise<{ status: number; requestId: boolean; body: string }> {
  const { port } = new URL(gw.url)
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), '127.0.0.1', () => sock.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.key}\r\nConnection: close\r\n\r\n`))
    let buf = ''
    sock.on('data', (d) => (buf += d.toString('utf8')))
    sock.on('error', reject)
    sock.on('close', () => {
      const [head = '', body = ''] = buf.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), requestId: /\r\nx-request-id: /i.test(head), body })
    })
  })
}

describe('a fragment in the request target', () => {
  test('is a 400 naming it, on any route; %23 still names an id', async () => {
    for (const target of ['/api/v1/files#x', '/api/v1/files/abc#x', '/health#/../api/v1/files', '/api/v1/usage?timeframe=24h#x']) {
      const r = await rawGet(target)
      expect({ target, status: r.status, requestId: r.requestId }).toEqual({ target, status: 400, requestId: true })
      expect(JSON.parse(r.body).error).toStartWith("path: holds a '#'")
    }
    const encoded = await rawGet('/api/v1/files/abc%23x')
    expect(encoded.status).toBe(404)
    expect(JSON.parse(encoded.body).error).toBe('No such file: abc#x')
    expect((await rawGet('/api/v1/files')).status).toBe(200)
  })
})
