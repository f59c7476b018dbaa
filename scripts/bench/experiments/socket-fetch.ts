// Experiment (docs/bench.md, long streams): an upstream call over Bun's own TCP/TLS sockets,
// answered as a fetch Response whose body is a ReadableStream fed by the socket's reads.
// fetch's body, read from JavaScript, holds a 64 KiB buffer for every pending read; these
// reads are the socket's own, as long as each arrives, so an open stream waiting for its next
// chunk holds none. HTTP/1.1 only, one connection a call (no keep-alive pool), no proxies from
// the environment: enough to measure, not a transport to ship. socketPush, under it, hands each
// read to a callback instead (push-relay.patch relays a stream from there).
import { Buffer } from 'node:buffer'

const HEAD_END = Buffer.from('\r\n\r\n')

/** POSTs `init.body` (a string) to `url` on a socket of its own; socketPush's reads queued in a ReadableStream. */
export function socketFetch(url: URL, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }): Promise<Response> {
  const signal = init.signal
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<Response>((resolve, reject) => {
    let ctl: ReadableStreamDefaultController<Uint8Array> | undefined
    let answered = false
    const onAbort = () => call.cancel(signal.reason)
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => void (ctl = c),
        pull: () => call.resume(),
        cancel: () => {
          signal.removeEventListener('abort', onAbort)
          call.cancel()
        },
      },
      // a queue of a few reads before the socket is paused: pausing at every read costs a syscall a chunk
      { highWaterMark: 16 },
    )
    const call = socketPush(url, init, {
      head(res) {
        answered = true
        resolve(new Response(stream, res))
      },
      piece(b) {
        ctl!.enqueue(b)
        return (ctl!.desiredSize ?? 1) > 0
      },
      end(err) {
        signal.removeEventListener('abort', onAbort)
        if (!answered) return reject(err ?? connectionError('ECONNRESET', 'the upstream closed the connection'))
        try {
          if (err) ctl!.error(err)
          else ctl!.close()
        } catch {
          // the reader cancelled the stream first
        }
      },
    })
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function connectionError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

function parseHead(text: string): { status: number; statusText: string; headers: Headers } | undefined {
  const lines = text.split('\r\n')
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0]!)
  if (!m) return undefined
  const headers = new Headers()
  for (let i = 1; i < lines.length; i++) {
    const c = lines[i]!.indexOf(':')
    if (c > 0) headers.append(lines[i]!.slice(0, c).trim(), lines[i]!.slice(c + 1).trim())
  }
  return { status: Number(m[1]), statusText: m[2] ?? '', headers }
}

/** The body's framing: chunked, a length, or until the connection closes. */
class BodyReader {
  untilClose = false
  private chunked = false
  private left = 0
  /** Bytes of a chunk's trailing CRLF still to skip. */
  private skip = 0
  /** The start of a chunk-size line split between reads. */
  private partial: Buffer | undefined

  frame(h: Headers): void {
    if (/chunked/i.test(h.get('transfer-encoding') ?? '')) this.chunked = true
    else if (h.has('content-length')) this.left = Number(h.get('content-length'))
    else this.untilClose = true
  }

  /** Hands each piece of the body to `out`; true once the body is complete. */
  feed(b: Buffer, out: (piece: Uint8Array) => void): boolean {
    if (this.untilClose) {
      if (b.length) out(b)
      return false
    }
    if (!this.chunked) {
      if (b.length > this.left) b = b.subarray(0, this.left)
      if (b.length) out(b)
      this.left -= b.length
      return this.left === 0
    }
    if (this.partial) {
      b = Buffer.concat([this.partial, b])
      this.partial = undefined
    }
    let i = this.skip
    this.skip = 0
    if (i > b.length) {
      this.skip = i - b.length
      return false
    }
    while (i < b.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, b.length - i)
        out(b.subarray(i, i + n))
        this.left -= n
        i += n
        if (this.left === 0) {
          i += 2
          if (i > b.length) this.skip = i - b.length
        }
        continue
      }
      const eol = b.indexOf(10, i)
      if (eol === -1) {
        this.partial = b.subarray(i)
        return false
      }
      const size = parseInt(b.toString('latin1', i, eol), 16)
      if (!(size >= 0)) throw connectionError('EPROTO', 'the upstream sent a malformed chunk')
      if (size === 0) return true
      this.left = size
      i = eol + 1
    }
    return false
  }
}

const realFetch = globalThis.fetch

/** fetch, with string-bodied POSTs sent on sockets of their own (an experiment sets it as the global fetch). */
export const socketTransport = (url: string | URL | Request, init?: RequestInit): Promise<Response> =>
  typeof url === 'string' && typeof init?.body === 'string' && init.signal
    ? socketFetch(new URL(url), { method: init.method ?? 'POST', headers: init.headers as Record<string, string>, body: init.body, signal: init.signal })
    : realFetch(url, init)

/**
 * The same call with no stream between the socket and its reader: each piece of the body is handed
 * to `piece` inside the socket's own read, which says whether to go on (false pauses the socket
 * until `resume` is called). Nothing waits between two reads but the socket itself.
 */
export function socketPush(
  url: URL,
  init: { method: string; headers: Record<string, string>; body: string },
  sink: { head(res: { status: number; headers: Headers }): void; piece(b: Uint8Array): boolean; end(err?: unknown): void },
): { resume(): void; cancel(reason?: unknown): void } {
  const tls = url.protocol === 'https:'
  const port = Number(url.port || (tls ? 443 : 80))
  let head = `${init.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
  for (const k in init.headers) head += `${k}: ${init.headers[k]}\r\n`
  head += `content-length: ${Buffer.byteLength(init.body)}\r\naccept-encoding: identity\r\nconnection: close\r\n\r\n`
  let sock: Bun.Socket<undefined> | undefined
  let answered = false
  let ended = false
  let pending: Buffer | undefined
  const body = new BodyReader()
  let paused = false
  const out = (b: Uint8Array) => {
    if (!sink.piece(b) && !paused) {
      paused = true
      sock?.pause()
    }
  }
  const end = (err?: unknown) => {
    if (ended) return
    ended = true
    if (err) sock?.terminate()
    else sock?.end()
    sink.end(err)
  }
  const take = (b: Buffer) => {
    if (!answered) {
      if (pending) b = Buffer.concat([pending, b])
      const e = b.indexOf(HEAD_END)
      if (e === -1) return void (pending = b)
      pending = undefined
      const res = parseHead(b.toString('latin1', 0, e))
      if (!res) return end(connectionError('EPROTO', 'the upstream answered something other than HTTP/1.x'))
      body.frame(res.headers)
      answered = true
      sink.head(res)
      b = b.subarray(e + 4)
    }
    if (body.feed(b, out)) end()
  }
  Bun.connect({
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    tls: tls ? { serverName: url.hostname } : undefined,
    socket: {
      open(s) {
        sock = s
        s.write(head + init.body)
      },
      data(_s, b) {
        if (ended) return
        try {
          take(b as Buffer)
        } catch (e) {
          end(e)
        }
      },
      close() {
        if (answered && body.untilClose) end()
        else end(connectionError('ECONNRESET', 'the upstream closed the connection'))
      },
      error: (_s, e) => end(e),
      connectError: (_s, e) => end(e),
    },
  }).catch(end)
  return {
    resume: () => {
      if (!paused) return
      paused = false
      sock?.resume()
    },
    cancel: (reason?: unknown) => end(reason ?? new Error('cancelled')),
  }
}
