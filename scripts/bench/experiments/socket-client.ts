// Experiment (docs/bench.md): would an upstream client on Bun's TCP sockets pay
// for itself over fetch? Three bare proxies of chat, each pinned to core 1 in turn: `fetch`
// (returns fetch's Response, as bare-proxy.ts), `fetchtext` (reads the reply as text and
// answers with it, as the gateway's tap does) and `socket` (a minimal keep-alive HTTP/1.1
// client on Bun.connect: content-length replies only, enough for the bench upstream). For
// each, CPU per request at saturation (wrk, 64 connections) and at 200 req/s, three rounds.
//   bun scripts/bench/experiments/socket-client.ts [modes]
import { chatCall } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { openLoop } from '../openloop.ts'
import { cpuSeconds } from '../proc.ts'
import { pinSelf, spawnListening, spawnUpstream } from '../processes.ts'

if (process.env.MODE) await proxy(process.env.MODE, new URL(process.env.UPSTREAM!))
else await drive((process.argv[2] ?? 'fetch,fetchtext,socket').split(','))

async function drive(modes: string[]) {
  pinSelf(0)
  const up = await spawnUpstream(0)
  const procs: Record<string, Awaited<ReturnType<typeof spawnListening>>> = {}
  for (const m of modes) procs[m] = await spawnListening(['taskset', '-c', '1', process.execPath, import.meta.path], { env: { PATH: process.env.PATH!, UPSTREAM: up.url, MODE: m }, cwd: import.meta.dir })
  for (let round = 0; round < 3; round++)
    for (const m of modes) {
      const p = procs[m]!
      const call = chatCall('c', p.url + '/api/alpha/v1', 'k', 'gpt-4o-mini')
      await closedLoop(call, { connections: 16, durationS: 1, core: 0 })
      let c0 = cpuSeconds(p.pid)
      const r = await closedLoop(call, { connections: 64, durationS: 4, core: 0 })
      const sat = ((cpuSeconds(p.pid) - c0) * 1000) / r.requests
      c0 = cpuSeconds(p.pid)
      await openLoop(call, 200, 3000)
      const low = ((cpuSeconds(p.pid) - c0) * 1000) / 600
      console.log(`${m.padEnd(9)} ${r.rps | 0} req/s, ${r.errors} errors; CPU/req ${sat.toFixed(4)} ms saturated, ${low.toFixed(4)} ms at 200 req/s (${(low / sat).toFixed(2)} ×)`)
    }
  for (const p of Object.values(procs)) await p.stop()
  await up.stop()
  process.exit(0)
}

async function proxy(mode: string, upstream: URL) {
  const dec = new TextDecoder('latin1')
  interface Conn { sock: Bun.Socket<undefined> | null; buf: Uint8Array | null; want: number; headEnd: number; status: number; headers: [string, string][]; p: { resolve: (r: Response) => void; reject: (e: Error) => void } | null }
  const idle: Conn[] = []
  const concat = (a: Uint8Array | null, b: Uint8Array) => {
    if (!a || a.length === 0) return b
    const c = new Uint8Array(a.length + b.length)
    c.set(a)
    c.set(b, a.length)
    return c
  }
  const onData = (c: Conn, data: Uint8Array) => {
    const buf = (c.buf = concat(c.buf, data))
    if (c.headEnd < 0) {
      let i = -1
      for (let k = 0; k + 3 < buf.length; k++) if (buf[k] === 13 && buf[k + 1] === 10 && buf[k + 2] === 13 && buf[k + 3] === 10) { i = k; break }
      if (i < 0) return
      const head = dec.decode(buf.subarray(0, i)).split('\r\n')
      c.status = Number(head[0]!.slice(9, 12))
      c.headers = []
      c.want = 0
      for (const line of head.slice(1)) {
        const j = line.indexOf(':')
        const k = line.slice(0, j).toLowerCase()
        if (k === 'content-length') c.want = Number(line.slice(j + 1))
        else c.headers.push([k, line.slice(j + 1).trim()])
      }
      c.headEnd = i + 4
    }
    if (buf.length - c.headEnd < c.want) return
    const p = c.p!
    const body = buf.slice(c.headEnd, c.headEnd + c.want)
    c.p = c.buf = null
    c.headEnd = -1
    idle.push(c)
    p.resolve(new Response(body, { status: c.status, headers: c.headers }))
  }
  const connect = () =>
    new Promise<Conn>((resolve, reject) => {
      const c: Conn = { sock: null, buf: null, want: 0, headEnd: -1, status: 0, headers: [], p: null }
      Bun.connect({
        hostname: upstream.hostname,
        port: Number(upstream.port),
        socket: {
          open: (s) => ((c.sock = s), resolve(c)),
          data: (_s, d) => onData(c, d),
          close: () => (idle.includes(c) && idle.splice(idle.indexOf(c), 1), c.p?.reject(new Error('closed'))),
          error: (_s, e) => (c.p?.reject(e), reject(e)),
        },
      }).catch(reject)
    })
  const post = async (path: string, headers: Record<string, string>, body: string): Promise<Response> => {
    const c = idle.pop() ?? (await connect())
    let head = `POST ${path} HTTP/1.1\r\nhost: ${upstream.host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
    for (const k in headers) head += `${k}: ${headers[k]}\r\n`
    return new Promise((resolve, reject) => {
      c.p = { resolve, reject }
      c.sock!.write(head + '\r\n' + body)
    })
  }
  const H = { 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' }
  const url = upstream.origin + '/v1/chat/completions'
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text()
      if (mode === 'fetch') return fetch(url, { method: 'POST', headers: H, body, signal: req.signal })
      const r = mode === 'socket' ? await post('/v1/chat/completions', H, body) : await fetch(url, { method: 'POST', headers: H, body, signal: req.signal })
      return new Response(await r.text(), { status: r.status, headers: { 'content-type': 'application/json' } })
    },
  })
  console.log(`bare proxy listening on http://127.0.0.1:${server.port}`)
}
