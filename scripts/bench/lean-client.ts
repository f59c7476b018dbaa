// A lean streaming client for thousands of open streams: raw HTTP/1.1 on Bun's TCP sockets,
// one connection a stream (`Connection: close`, so the stream ends when the server closes it),
// and no parsing beyond the status line: it notes the first byte's time, counts the chunks
// by their `@` stamps (wire.ts) and looks for the surface's terminator.
import { connect } from 'node:net'
import type { Call } from './call.ts'

export interface LeanStream {
  /** Connect → first response byte, ms (NaN: none came). */
  ttfb: number
  status: number
  chunks: number
  /** The surface's terminator came. */
  ended: boolean
  error?: string
}

interface State {
  t0: number
  s: LeanStream
  /** The last bytes so far, so a terminator split between two reads is still found. */
  tail: string
}

const AT = 64
const TAIL = 40
const dec = new TextDecoder('latin1')

/** The raw request bytes of a call (its own headers, a length, and a close). */
export function rawRequest(call: Call): Uint8Array {
  const u = new URL(call.url)
  const body = call.body ?? ''
  const head = [`${call.method} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`, ...Object.entries(call.headers).map(([k, v]) => `${k}: ${v}`), `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', '']
  return new TextEncoder().encode(head.join('\r\n') + body)
}

/**
 * One request on a socket of its own (this process's fetch keeps Bun's connection limit); its
 * status, once the server closes the connection (0: it failed).
 */
export function statusOnSocket(call: Call): Promise<number> {
  const { hostname, port } = new URL(call.url)
  const request = rawRequest(call)
  return new Promise((done) => {
    const s = connect(Number(port), hostname)
    let head = ''
    s.on('connect', () => s.write(request))
    s.on('data', (d) => {
      if (head.length < 16) head += d.toString()
    })
    s.on('error', () => done(0))
    s.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)))
  })
}

export class LeanClient {
  /** Chunks received by every stream so far (sampled to count a window's). */
  chunks = 0
  open = 0

  /** One stream of `call`; resolves when the server closes it (or `timeoutMs` passes). */
  stream(call: Call, request: Uint8Array, terminator: string, timeoutMs: number): Promise<LeanStream> {
    const u = new URL(call.url)
    const client = this
    return new Promise<LeanStream>((resolve) => {
      const st: State = { t0: performance.now(), s: { ttfb: NaN, status: 0, chunks: 0, ended: false }, tail: '' }
      let sock: Bun.Socket<undefined> | undefined
      let done = false
      const finish = () => {
        if (done) return
        done = true
        clearTimeout(timer)
        client.open--
        resolve(st.s)
      }
      const timer = setTimeout(() => {
        st.s.error = 'timeout'
        if (sock) sock.end()
        else finish()
      }, timeoutMs)
      client.open++
      Bun.connect({
        hostname: u.hostname,
        port: Number(u.port),
        socket: {
          open(s) {
            sock = s
            s.write(request)
          },
          data(_s, b) {
            const s = st.s
            if (Number.isNaN(s.ttfb)) {
              s.ttfb = performance.now() - st.t0
              s.status = Number(dec.decode(b.subarray(9, 12)))
            }
            let n = 0
            for (let i = b.indexOf(AT); i !== -1; i = b.indexOf(AT, i + 1)) n++
            s.chunks += n
            client.chunks += n
            if (!s.ended) {
              // only the edges are decoded: the terminator is searched in the bytes themselves
              if (b.length > TAIL && (b as Buffer).includes(terminator)) s.ended = true
              else s.ended = (st.tail + dec.decode(b.subarray(0, TAIL))).includes(terminator)
              st.tail = dec.decode(b.length > TAIL ? b.subarray(b.length - TAIL) : b)
            }
          },
          close: finish,
          error(_s, e) {
            st.s.error ??= e.message
          },
          connectError(_s, e) {
            st.s.error = `connect: ${e.message}`
            finish()
          },
        },
      }).catch((e) => {
        st.s.error ??= `connect: ${(e as Error).message}`
        finish()
      })
    })
  }
}
