// Experiment (docs/bench.md, long streams): what reading the upstream's body in JS costs a relay,
// per open stream (RSS) and per chunk (CPU), against handing fetch's body back as it is (the
// bare proxy). Three minimal chat relays, each pinned to core 1 in turn, 1,000 long streams each:
// `native` (fetch's Response returned), `reader` (fetch, its body read with a reader and
// re-enqueued: what the gateway's relay does), `http` (node:http, its 'data' events enqueued).
//   bun scripts/bench/experiments/relay-read.ts [modes] [N]
import http from 'node:http'
import { LeanClient } from '../lean-client.ts'
import { surfaceCall } from '../paths.ts'
import { pinSelf, spawnListening, spawnUpstream } from '../processes.ts'
import { heldStreams } from './held-streams.ts'

if (process.env.MODE) relay(process.env.MODE, process.env.UPSTREAM!)
else await drive((process.argv[2] ?? 'native,reader,http').split(','), Number(process.argv[3] ?? 1000))

function relay(mode: string, upstream: string) {
  const target = new URL(upstream + '/v1/chat/completions')
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      const body = await req.text()
      const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-up' }
      if (mode === 'native') return fetch(target, { method: 'POST', headers, body })
      if (mode === 'reader') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const reader = res.body!.getReader()
        return new Response(new ReadableStream({ async pull(c) { const r = await reader.read(); if (r.done) c.close(); else c.enqueue(r.value) } }), { headers: { 'content-type': 'text/event-stream' } })
      }
      if (mode === 'direct') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const reader = res.body!.getReader()
        return new Response(
          new ReadableStream({
            type: 'direct',
            async pull(c: any) {
              for (;;) {
                const r = await reader.read()
                if (r.done) return c.close()
                c.write(r.value)
                await c.flush()
              }
            },
          } as any),
          { headers: { 'content-type': 'text/event-stream' } },
        )
      }
      if (mode === 'gen') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const src = res.body!
        return new Response(
          (async function* () {
            for await (const v of src) yield v
          })() as any,
          { headers: { 'content-type': 'text/event-stream' } },
        )
      }
      if (mode === 'push') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const reader = res.body!.getReader()
        return new Response(
          new ReadableStream({
            async start(c) {
              for (;;) {
                const r = await reader.read()
                if (r.done) return c.close()
                c.enqueue(r.value)
              }
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        )
      }
      if (mode === 'socket') return socketRelay(target, JSON.stringify(headers), body)
      return new Promise<Response>((resolve) => {
        const r = http.request(target, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent }, (res) => {
          const stream = new ReadableStream({
            start(c) {
              res.on('data', (d: Buffer) => {
                try {
                  c.enqueue(d)
                } catch {
                  r.destroy()
                }
              })
              res.on('end', () => c.close())
            },
            cancel: () => void r.destroy(),
          })
          resolve(new Response(stream, { headers: { 'content-type': 'text/event-stream' } }))
        })
        r.end(body)
      })
    },
  })
  console.log(`relay listening on http://127.0.0.1:${server.port}`)
}

async function drive(modes: string[], n: number) {
  pinSelf(0)
  const up = await spawnUpstream(0, { UPSTREAM_STREAM_CHUNKS: '400', UPSTREAM_STREAM_GAP_MS: '50' })
  const client = new LeanClient()
  for (const mode of modes) {
    const p = await spawnListening(['taskset', '-c', '1', process.execPath, import.meta.path], { env: { PATH: process.env.PATH!, UPSTREAM: up.url, MODE: mode, BUN_CONFIG_MAX_HTTP_REQUESTS: String(n + 1000) }, cwd: import.meta.dir })
    const h = await heldStreams(client, surfaceCall('chat', p.url, 'k', true), p.pid, n, { settleMs: 2000, windowMs: 8000 })
    console.log(`${mode.padEnd(7)} ×${n}: ${h.usPerChunk.toFixed(1)} µs/chunk, ${h.kibPerStream.toFixed(1)} KiB/stream (RSS ${h.idleMiB.toFixed(0)} → ${h.openMiB.toFixed(0)} MiB)`)
    await p.stop()
  }
  await up.stop()
  process.exit(0)
}

/** Upstream over Bun's TCP socket: HTTP/1.1 with `Connection: close`, the chunked body decoded by hand, each piece enqueued. */
function socketRelay(target: URL, headersJson: string, body: string): Promise<Response> {
  const headers = JSON.parse(headersJson) as Record<string, string>
  const head = [`POST ${target.pathname} HTTP/1.1`, `host: ${target.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', ''].join('\r\n') + body
  return new Promise<Response>((resolve) => {
    let ctl!: ReadableStreamDefaultController<Uint8Array>
    let started = false
    let pending: Buffer | undefined
    let left = 0 // bytes of the current chunk still to come
    let sock: Bun.Socket<undefined> | undefined
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c), cancel: () => void sock?.end() })
    let skip = 0 // the CRLF after a chunk's data, when it falls in the next read
    const feed = (b: Buffer) => {
      let i = skip
      skip = 0
      while (i < b.length) {
        if (left > 0) {
          const n = Math.min(left, b.length - i)
          ctl.enqueue(b.subarray(i, i + n))
          left -= n
          i += n
          if (left === 0) {
            i += 2
            if (i > b.length) skip = i - b.length
          }
          continue
        }
        const eol = b.indexOf(13, i)
        if (eol === -1) return (pending = b.subarray(i))
        left = parseInt(b.toString('latin1', i, eol), 16)
        i = eol + 2
        if (left === 0) return ctl.close()
      }
      pending = undefined
    }
    Bun.connect({
      hostname: target.hostname,
      port: Number(target.port),
      socket: {
        open: (s) => void ((sock = s), s.write(head)),
        data(s, b: Buffer) {
          try {
            take(b)
          } catch {
            s.end()
          }
        },
        close() {},
      },
    })
    function take(b: Buffer) {
      if (pending) b = Buffer.concat([pending, b])
      pending = undefined
      if (!started) {
        const end = b.indexOf('\r\n\r\n')
        if (end === -1) return void (pending = b)
        started = true
        resolve(new Response(stream, { headers: { 'content-type': 'text/event-stream' } }))
        b = b.subarray(end + 4)
      }
      feed(b)
    }
  })
}
