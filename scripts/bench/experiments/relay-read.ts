// Experiment (docs/bench.md, long streams): what reading the upstream's body in JS costs a relay,
// per open stream (RSS) and per chunk (CPU), against handing fetch's body back as it is (the
// bare proxy). Minimal chat relays, each pinned to core 1 in turn, 1,000 long streams each:
// `native` (fetch's Response returned), `reader` (fetch, its body read with a reader and
// re-enqueued on pull: what the gateway's relay does), `push` (the same, enqueued by a loop
// begun at start), `direct` (written to Bun's direct stream), `gen` (an async generator as the
// body), `http` (node:http, its 'data' events enqueued), `socket` (socket-fetch.ts: Bun's TCP
// socket, its reads enqueued), `tapped` (`reader` with the chat tap reading each event and the
// upstream's bytes sent on as they came; `decode` and `split` stop after decoding the read, and
// after splitting it into events), `tapgen` (the same tap in the relay's shape: an async
// generator of the events' text joined, encoded again by sseBody), `directtap` (`direct` with
// the chat tap's text written), `bytestap` (`direct` with the relay's reads: a read of plain
// events read in place by the tap and its bytes written), `nodeweb` (fetch's body through
// `Readable.fromWeb`, whose native reader reads into a buffer of its highWaterMark, HWM bytes,
// 4 KiB by default, its 'data' written to a direct stream), `nodewebtap` (the same with the
// relay's reads), `bytesgen` (`bytestap`'s frames through an async generator that a direct
// stream's loop pulls, as the gateway's relay does), `bytessse` (the same generator under the
// gateway's own SSE body), `sockpush` (socket-fetch.ts's socketPush: each of the socket's reads
// written to a direct stream inside the socket's own callback, so nothing waits between two
// chunks but the socket), `sockpushtap` (the same with the relay's reads). Each line splits the
// CPU a chunk into the JS thread's and the HTTP client thread's. RELAY_BUN_OPTIONS passes
// options to the relays' Bun (a profile, say).
//   bun scripts/bench/experiments/relay-read.ts [modes] [N] [rounds]
import http from 'node:http'
import { Readable } from 'node:stream'
import { LeanClient } from '../lean-client.ts'
import { surfaceCall } from '../paths.ts'
import { pinSelf, spawnListening, spawnUpstream } from '../processes.ts'
import { heldStreams, jsThread } from './held-streams.ts'
import { socketFetch, socketPush } from './socket-fetch.ts'
import { sseBody } from '../../../src/pipeline/sse.ts'
import { openAIChatTap } from '../../../src/providers/openai/tap.ts'
import { EventSplitter } from '../../../src/routing/sse-events.ts'
import { EventReads, GuardedTap } from '../../../src/pipeline/relay.ts'

if (process.env.MODE) relay(process.env.MODE, process.env.UPSTREAM!)
else await drive((process.argv[2] ?? 'native,reader,http').split(','), Number(process.argv[3] ?? 1000), Number(process.argv[4] ?? 1))

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
      if (mode === 'tapped' || mode === 'tapgen' || mode === 'decode' || mode === 'split') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const reader = res.body!.getReader()
        const tap = openAIChatTap({})
        const split = new EventSplitter()
        const dec = new TextDecoder()
        const read = async () => {
          const r = await reader.read()
          if (r.done) return undefined
          const decoded = dec.decode(r.value, { stream: true })
          if (mode === 'decode') return r.value
          const events = split.push(decoded)
          if (mode === 'split') return r.value
          let text = ''
          for (const ev of events) {
            const sent = tap.event(ev)
            if (sent !== null) text += sent
          }
          return mode === 'tapgen' ? text : r.value
        }
        if (mode !== 'tapgen') {
          const stream = new ReadableStream({
            async pull(c) {
              const v = await read()
              if (v === undefined) c.close()
              else c.enqueue(v as Uint8Array)
            },
          })
          return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
        }
        const frames = (async function* () {
          for (let v = await read(); v !== undefined; v = await read()) yield v as string
        })()
        return new Response(sseBody(frames), { headers: { 'content-type': 'text/event-stream' } })
      }
      if (mode === 'direct' || mode === 'directtap' || mode === 'bytestap') {
        const res = await fetch(target, { method: 'POST', headers, body })
        return directRelay(res.body!.getReader(), frameOf(mode))
      }
      if (mode === 'bytesgen' || mode === 'bytessse') {
        // bytestap's frames through an async generator, pulled by a direct loop or by the gateway's SSE body
        const res = await fetch(target, { method: 'POST', headers, body })
        const reader = res.body!.getReader()
        const frame = frameOf('bytestap')
        const frames = (async function* () {
          for (;;) {
            const r = await reader.read()
            if (r.done) return
            yield frame(r.value)
          }
        })()
        if (mode === 'bytessse') return new Response(sseBody(frames), { headers: { 'content-type': 'text/event-stream' } })
        return generatorRelay(frames)
      }
      if (mode === 'nodeweb' || mode === 'nodewebtap') {
        const res = await fetch(target, { method: 'POST', headers, body })
        const readable = Readable.fromWeb(res.body as any, { highWaterMark: Number(process.env.HWM ?? 4096) })
        return nodeRelay(readable, frameOf(mode === 'nodewebtap' ? 'bytestap' : 'direct'))
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
      if (mode === 'sockpush' || mode === 'sockpushtap') {
        // the socket's reads written to a direct stream inside the socket's own callback: no promise a chunk
        const frame = frameOf(mode === 'sockpushtap' ? 'bytestap' : 'direct')
        return new Promise<Response>((resolve) => {
          let ctl: ReadableStreamDirectController | undefined
          let done: (() => void) | undefined
          let early: (string | Uint8Array)[] = []
          let ended = false
          const pull = (c: ReadableStreamDirectController) =>
            new Promise<void>((d) => {
              for (const e of early) c.write(e)
              early = []
              if (ended) return (c.close(), d())
              c.flush()
              ctl = c
              done = d
            })
          const call = socketPush(target, { method: 'POST', headers, body }, {
            head: () => resolve(directResponse(pull, () => call.cancel())),
            piece: (b) => {
              if (!ctl) return (early.push(frame(b)), true)
              ctl.write(frame(b))
              const f = ctl.flush()
              if (typeof f !== 'number') {
                void f.then(() => call.resume())
                return false
              }
              return true
            },
            end: () => {
              ended = true
              ctl?.close()
              done?.()
            },
          })
        })
      }
      if (mode === 'socket') {
        const res = await socketFetch(target, { method: 'POST', headers, body, signal: req.signal })
        return new Response(res.body, { headers: { 'content-type': 'text/event-stream' } })
      }
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

/** What each direct mode sends on for a read: its bytes, the tap's text, or the tap's read of the bytes in place. */
function frameOf(mode: string): (value: Uint8Array) => string | Uint8Array {
  if (mode === 'directtap') {
    const tap = openAIChatTap({})
    const split = new EventSplitter()
    const dec = new TextDecoder()
    return (value) => {
      let text = ''
      for (const ev of split.push(dec.decode(value, { stream: true }))) {
        const sent = tap.event(ev)
        if (sent !== null) text += sent
      }
      return text
    }
  }
  if (mode === 'bytestap') {
    const reads = new EventReads(new GuardedTap(openAIChatTap({}), () => {}))
    return (value) => reads.read(value)
  }
  return (value) => value
}

/** An event-stream Response whose body is Bun's direct stream, written by `pull`. */
function directResponse(pull: (c: ReadableStreamDirectController) => Promise<void> | void, cancel?: () => void): Response {
  const source = { type: 'direct', pull, cancel }
  return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource<Uint8Array>), { headers: { 'content-type': 'text/event-stream' } })
}

/** A direct stream (Bun's `type: 'direct'`) of each read's frame, written and flushed as it comes. */
function directRelay(reader: ReadableStreamDefaultReader<Uint8Array>, frame: (value: Uint8Array) => string | Uint8Array): Response {
  return directResponse(async (c) => {
    for (;;) {
      const r = await reader.read()
      if (r.done) return c.close()
      c.write(frame(r.value))
      const f = c.flush()
      if (typeof f !== 'number') await f
    }
  })
}

/** A direct stream of a generator's frames, written and flushed as they come. */
function generatorRelay(frames: AsyncGenerator<string | Uint8Array>): Response {
  return directResponse(async (c) => {
    for (;;) {
      const g = await frames.next()
      if (g.done) return c.close()
      c.write(g.value)
      const f = c.flush()
      if (typeof f !== 'number') await f
    }
  })
}

/** A direct stream of a node Readable's 'data' events, paused while the socket cannot take more. */
function nodeRelay(readable: Readable, frame: (value: Uint8Array) => string | Uint8Array): Response {
  return directResponse(
    (c) =>
      new Promise<void>((done) => {
        readable.on('data', (d: Uint8Array) => {
          c.write(frame(d))
          const f = c.flush()
          if (typeof f !== 'number') {
            readable.pause()
            void f.then(() => readable.resume())
          }
        })
        readable.on('end', () => (c.close(), done()))
        readable.on('error', () => (c.close(), done()))
      }),
    () => void readable.destroy(),
  )
}

async function drive(modes: string[], n: number, rounds: number) {
  pinSelf(0)
  const up = await spawnUpstream(0, { UPSTREAM_STREAM_CHUNKS: '400', UPSTREAM_STREAM_GAP_MS: '50' })
  const client = new LeanClient()
  for (let round = 0; round < rounds; round++) for (const mode of modes) {
    const p = await spawnListening(['taskset', '-c', '1', process.execPath, import.meta.path], { env: { PATH: process.env.PATH!, UPSTREAM: up.url, MODE: mode, BUN_CONFIG_MAX_HTTP_REQUESTS: String(n + 1000), ...(process.env.HWM ? { HWM: process.env.HWM } : {}), ...(process.env.RELAY_BUN_OPTIONS ? { BUN_OPTIONS: process.env.RELAY_BUN_OPTIONS } : {}) }, cwd: import.meta.dir })
    const h = await heldStreams(client, surfaceCall('chat', p.url, 'k', true), p.pid, n, { settleMs: 2000, windowMs: 8000 })
    const js = jsThread(h)
    console.log(`${mode.padEnd(7)} ×${n}: ${h.usPerChunk.toFixed(1)} µs/chunk (JS thread ${js.toFixed(1)}, HTTP client ${(h.usPerChunkByThread['HTTP Client'] ?? 0).toFixed(1)}), ${h.kibPerStream.toFixed(1)} KiB/stream (RSS ${h.idleMiB.toFixed(0)} → ${h.openMiB.toFixed(0)} MiB)`)
    await p.stop()
  }
  await up.stop()
  process.exit(0)
}

