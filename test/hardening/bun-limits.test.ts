// Bun's own request-size cap sits far above the gateway's limits, so a body over a limit
// gets the gateway's JSON 413 (with x-request-id), not Bun's bare one.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { createLogger } from '../../src/http/log.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
const logged: string[] = []
beforeAll(async () => {
  gw = await startGateway({ log: createLogger('info', (line) => logged.push(line)) })
})
afterAll(async () => {
  await gw.stop()
})

/** Sends only the head of a request whose declared body is never sent; returns the raw answer. */
function headOnly(path: string, contentLength: number): Promise<string> {
  const { port } = new URL(gw.url)
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), '127.0.0.1', () =>
      sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`),
    )
    let buf = ''
    sock.on('data', (d) => {
      buf += d.toString('utf8')
      if (buf.includes('\r\n\r\n') && buf.includes('}')) sock.destroy()
    })
    sock.on('close', () => resolve(buf))
    sock.on('error', reject)
  })
}

test('a Content-Length above the upload limit + 1 MiB gets our JSON 413 on uploads and generations', async () => {
  const limit = gw.services.config.limits.maxUploadBytes
  for (const path of ['/api/v1/files', '/api/alpha/v1/chat/completions', '/api/beta/v1/messages']) {
    const raw = await headOnly(path, limit + 2 * 1024 * 1024)
    expect(raw).toStartWith('HTTP/1.1 413')
    expect(raw.toLowerCase()).toContain('x-request-id:')
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))
    expect(body.error).toContain('exceeds')
  }
})

/** One raw exchange, whatever the answer (Bun's bare ones close the connection). */
function exchange(head: string): Promise<string> {
  const { port } = new URL(gw.url)
  return new Promise((resolve) => {
    const sock = connect(Number(port), '127.0.0.1', () => sock.write(head))
    let buf = ''
    sock.on('data', (d) => (buf += d.toString('utf8')))
    sock.on('close', () => resolve(buf))
    sock.on('error', () => resolve(buf))
  })
}

test("the answers Bun's HTTP parser gives before any gateway code, as the README's errors section lists them", async () => {
  // If Bun starts handing these to the gateway, the README's list must change with it.
  const cases: [string, string][] = [
    [`GET /api/v1/models?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`, '431'],
    ['POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nContent-Length: 1x\r\nConnection: close\r\n\r\n', '400'],
    ['POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n', '400'],
    ['GET /api/v1/models HTTP/1.1\r\nHost: gw\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n', '400'],
    // past what a 64-bit length holds, and a request with no Host header at all
    ['POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nContent-Length: 18446744073709551616\r\nConnection: close\r\n\r\n', '400'],
    ['GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', '400'],
  ]
  for (const [head, status] of cases) {
    const raw = await exchange(head)
    expect(raw).toStartWith(`HTTP/1.1 ${status}`)
    expect(raw.toLowerCase()).not.toContain('x-request-id')
  }
})

test('a Content-Length of 3 GiB, 4 GiB or 10^15 bytes gets the JSON 413 of the route it names, with a request id', async () => {
  const routes: [string, RegExp][] = [
    ['/api/alpha/v1/chat/completions', /limit of \d+ bytes/],
    ['/api/alpha/v1/responses', /limit of \d+ bytes/],
    ['/api/beta/v1/messages', /limit of \d+ bytes/],
    ['/api/v1/batches', /limit of \d+ bytes/],
    ['/api/v1/files', /limit of \d+ bytes/],
  ]
  for (const length of [3 * 2 ** 30, 4 * 2 ** 30, 10 ** 15]) {
    for (const [path, message] of routes) {
      const raw = await headOnly(path, length)
      expect(raw).toStartWith('HTTP/1.1 413')
      expect(raw.toLowerCase()).toContain('x-request-id:')
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error).toMatch(message)
    }
  }
})

test('a method Bun does not parse (BREW, or get in lowercase) closes the connection with no answer, as the README says', async () => {
  // the gateway never sees these requests; if Bun starts answering them, the README changes with it
  for (const head of ['BREW /health HTTP/1.1\r\nHost: gw\r\n\r\n', 'get /health HTTP/1.1\r\nHost: gw\r\n\r\n']) expect(await exchange(head)).toBe('')
  // and the server goes on answering
  expect((await fetch(`${gw.url}/health`)).status).toBe(200)
})

test('a client that hangs up mid-body is logged as that, not as an unhandled error', async () => {
  const { port } = new URL(gw.url)
  const heads = [
    `POST /api/alpha/v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`,
    `POST /api/v1/batches HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${gw.key}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
    `POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: multipart/form-data; boundary=xx\r\nContent-Length: 100000\r\n\r\n--xx\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc`,
  ]
  for (const head of heads) {
    await new Promise<void>((resolve) => {
      const sock = connect(Number(port), '127.0.0.1', () => {
        sock.write(head)
        setTimeout(() => (sock.destroy(), resolve()), 150)
      })
    })
  }
  const lines = () => logged.map((l) => JSON.parse(l) as { msg: string; status?: number; path?: string })
  const deadline = Date.now() + 3000
  while (lines().filter((l) => l.msg === 'request' && l.status === 499).length < 3 && Date.now() < deadline) await Bun.sleep(20)
  expect(lines().filter((l) => l.msg === 'client closed the connection before its request body arrived').map((l) => l.path)).toEqual(['/api/alpha/v1/chat/completions', '/api/v1/batches', '/api/v1/files'])
  expect(lines().filter((l) => l.msg === 'request' && l.status === 499)).toHaveLength(3)
  expect(lines().filter((l) => l.msg === 'unhandled error')).toEqual([])
})
