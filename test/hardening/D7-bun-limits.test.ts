// D7: Bun's own request-size cap sits far above the gateway's limits, so a body over a limit
// gets the gateway's JSON 413 (with x-request-id), not Bun's bare one.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
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

test('D7 — a Content-Length above the upload limit + 1 MiB gets our JSON 413 on uploads and generations', async () => {
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

test("D7 — the answers Bun's HTTP parser gives before any gateway code, as the README's errors section lists them", async () => {
  // If Bun starts handing these to the gateway, the README's list must change with it.
  const cases: [string, string][] = [
    [`GET /api/v1/models?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`, '431'],
    ['POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nContent-Length: 1x\r\nConnection: close\r\n\r\n', '400'],
    ['POST /api/v1/files HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n', '400'],
    ['GET /api/v1/models HTTP/1.1\r\nHost: gw\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n', '400'],
  ]
  for (const [head, status] of cases) {
    const raw = await exchange(head)
    expect(raw).toStartWith(`HTTP/1.1 ${status}`)
    expect(raw.toLowerCase()).not.toContain('x-request-id')
  }
})
