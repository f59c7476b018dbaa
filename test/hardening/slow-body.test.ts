// A body that trickles in is cut with a 408, not held open: Bun's idle timeout restarts at every
// byte, so one byte every few seconds would hold a connection, and its request, for ever. The
// gateway here allows 1 s, then 1 KiB/s; a body at a slow but honest pace still gets through.
// (Each test is a connection of its own, mostly waiting: they run side by side.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { setBodyPace } from '../../src/http/body-deadline.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let port: number
beforeAll(async () => {
  gw = await startGateway({ yaml: 'limits: { body_grace_s: 1, body_min_bytes_per_s: 1024 }\n' })
  port = Number(new URL(gw.url).port)
})
afterAll(async () => {
  await gw.stop()
  // the pace is the process's: other test files in this process get the default back
  setBodyPace(30, 16 * 1024)
})

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
  /** When the answer's first byte came, from the request's start (ms). */
  ms: number
}

/** A raw HTTP/1.1 request whose body is written by `send`; resolves with the first answer the socket gets. */
function exchange(head: string, send: (sock: Socket) => Promise<void>): Promise<Answer> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    let buf = ''
    let firstAt = 0
    let stopped = false
    const sock = connect(port, '127.0.0.1', () => {
      sock.write(head)
      send(sock).catch(() => {})
    })
    const finish = () => {
      if (stopped) return
      stopped = true
      const [h, ...rest] = buf.split('\r\n\r\n')
      const lines = h!.split('\r\n')
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
      sock.destroy()
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), ms: firstAt - t0 })
    }
    sock.on('data', (d) => {
      if (!firstAt) firstAt = performance.now()
      buf += d.toString('utf8')
      // a whole JSON answer of a declared length is enough
      const len = /content-length: *(\d+)/i.exec(buf)?.[1]
      const at = buf.indexOf('\r\n\r\n')
      if (len && at >= 0 && Buffer.byteLength(buf.slice(at + 4)) >= Number(len)) finish()
    })
    sock.on('error', (e) => (buf ? finish() : reject(e)))
    sock.on('close', () => (buf ? finish() : reject(new Error('closed without an answer'))))
  })
}

/** Writes `text` a piece at a time, `gapMs` apart, while the socket is open. */
const trickle = (text: string, piece: number, gapMs: number) => async (sock: Socket) => {
  for (let i = 0; i < text.length && !sock.destroyed; i += piece) {
    sock.write(text.slice(i, i + piece))
    await Bun.sleep(gapMs)
  }
}

const chatBody = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'x'.repeat(400) }] })
const head = (path: string, extra: string) =>
  `POST ${path} HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${'KEY'}\r\nContent-Type: application/json\r\n${extra}\r\n`

/** Whether the server closes the socket within `ms` of its answer (which may itself take a while on a busy machine). */
function closedAfterAnswer(head: string, first: string, ms: number): Promise<{ status: number; connection: string | undefined; closed: boolean }> {
  return new Promise((resolve) => {
    let buf = ''
    let closed = false
    let timer: Timer | undefined
    const look = () => {
      sock.destroy()
      resolve({ status: Number(buf.split(' ')[1]), connection: /\r\nconnection: *([^\r]+)/i.exec(buf)?.[1]?.toLowerCase(), closed })
    }
    const sock = connect(port, '127.0.0.1', () => sock.write(head + first))
    sock.on('data', (d) => {
      buf += d.toString('utf8')
      timer ??= setTimeout(look, ms)
    })
    sock.on('close', () => (closed = true))
    sock.on('error', () => {})
    // no answer at all: looked at after a generous wait, and the status says so
    setTimeout(() => timer ?? look(), 15_000)
  })
}

// a client with no key that declares a body and sends it a byte at a time must not keep the
// socket: a few thousand such hold every one the gateway has, and it reads no body for them
describe('an answer given before the declared body was read closes the connection', () => {
  test.concurrent('no key, a large declared body: 401, and the socket is closed', async () => {
    const h = head('/api/alpha/v1/chat/completions', 'Content-Length: 50000000\r\n').replace('KEY', 'sk-not-a-key')
    const r = await closedAfterAnswer(h, '{', 1500)
    expect([r.status, r.connection, r.closed]).toEqual([401, 'close', true])
  })
  test.concurrent('no such route: 404, closed', async () => {
    const h = head('/api/v1/nothing-here', 'Content-Length: 50000000\r\n').replace('KEY', gw.key)
    const r = await closedAfterAnswer(h, '{', 1500)
    expect([r.status, r.connection, r.closed]).toEqual([404, 'close', true])
  })
  test.concurrent('a request answered after its body was read keeps its connection', async () => {
    const h = head('/api/alpha/v1/chat/completions', `Content-Length: ${chatBody.length}\r\n`).replace('KEY', gw.key)
    const r = await closedAfterAnswer(h, chatBody, 1000)
    expect([r.status, r.connection, r.closed]).toEqual([200, undefined, false])
    const bad = await closedAfterAnswer(h, chatBody.replace('"mock-gpt"', '"nope-gpt"'), 1000)
    expect([bad.status, bad.closed]).toEqual([400, false])
  })
})

describe('a request body that trickles in', () => {
  test.concurrent('of a declared length: a JSON 408 with a request id once its time is past, and the connection is let go', async () => {
    const r = await exchange(head('/api/alpha/v1/chat/completions', `Content-Length: ${chatBody.length}\r\n`).replace('KEY', gw.key), trickle(chatBody, 1, 400))
    expect(r.status).toBe(408)
    expect(r.headers['x-request-id']).toBeTruthy()
    expect(JSON.parse(r.body).error).toMatch(/Request body not received in time/)
    // 1 s of grace and a few bytes' worth, then the next sweep: well before the body could have come
    expect(r.ms).toBeLessThan(chatBody.length * 400)
    expect(r.ms).toBeGreaterThan(900)
    expect(r.headers.connection).toBe('close')
  })

  test.concurrent('chunked, without a length: the same 408', async () => {
    const chunked = async (sock: Socket) => {
      for (let i = 0; i < chatBody.length && !sock.destroyed; i += 2) {
        const piece = chatBody.slice(i, i + 2)
        sock.write(`${piece.length.toString(16)}\r\n${piece}\r\n`)
        await Bun.sleep(400)
      }
    }
    const r = await exchange(head('/api/beta/v1/messages', 'Transfer-Encoding: chunked\r\nanthropic-version: 2023-06-01\r\n').replace('KEY', gw.key), chunked)
    expect(r.status).toBe(408)
    expect(r.headers['x-request-id']).toBeTruthy()
    expect(JSON.parse(r.body).error).toMatch(/Request body not received in time/)
  })

  test.concurrent('a long declared body, read in parts: the same 408', async () => {
    const long = JSON.stringify({ model: 'mock-gpt', input: 'y'.repeat(300 * 1024) })
    const r = await exchange(head('/api/alpha/v1/responses', `Content-Length: ${long.length}\r\n`).replace('KEY', gw.key), trickle(long.slice(0, 2000), 100, 300))
    expect(r.status).toBe(408)
    expect(JSON.parse(r.body).error).toMatch(/Request body not received in time/)
  })

  test.concurrent('a file upload: the same 408, and no file is left behind', async () => {
    const boundary = 'sy-slow'
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${'{"a":1}\n'.repeat(400)}\r\n--${boundary}--\r\n`
    const r = await exchange(
      head('/api/v1/files', `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${multipart.length}\r\n`).replace('Content-Type: application/json\r\n', '').replace('KEY', gw.key),
      trickle(multipart, 40, 400),
    )
    expect(r.status).toBe(408)
    expect(JSON.parse(r.body).error).toMatch(/Request body not received in time/)
    const list = await fetch(`${gw.url}/api/v1/files`, { headers: { authorization: `Bearer ${gw.key}` } })
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([])
  })

  test.concurrent('a body at a slow but honest pace (2 KiB/s, past the grace) is answered', async () => {
    const big = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'z'.repeat(3000) }] })
    const r = await exchange(head('/api/alpha/v1/chat/completions', `Content-Length: ${big.length}\r\nConnection: close\r\n`).replace('KEY', gw.key), trickle(big, 200, 100))
    expect(r.status).toBe(200)
    expect(r.ms).toBeGreaterThan(1000)
  })
})
