// A fake OpenAI / Anthropic upstream for tests: a Bun.serve on a random port that answers
// with scripted replies — recorded fixtures as JSON, SSE sent in pieces with small delays
// (so a test can prove chunks are relayed as they arrive), errors with headers, slow
// answers, and connections dropped mid-stream. Every request it receives is recorded.
//
//   const up = await startFakeUpstream()
//   up.script({ status: 503, json: { error: { message: 'busy' } } },      // 1st request
//             { sse: fixture('openai/chat/stream-text-include-usage.sse') }) // 2nd and later
//   ... point a provider's base_url at up.url ...
//   up.requests[0].json()  // what the gateway sent; .headers, .path, .method
//   await up.requests[1].closed  // resolves when the gateway closed the connection early
//   await up.stop()
//
// Replies are consumed in order and the LAST one repeats, so `script(a, a, b)` fails twice
// then succeeds for good. A reply may also be a function of the request (a handler), or a
// ready-made Response. Unscripted requests get a 500 naming the path.
//
// Reply fields: `status` (200), `headers`, and one body: `json` (an object, or a string sent
// verbatim, e.g. a fixture file), `sse` (an SSE text: sent event by event, each event cut in
// two, `delayMs` (1) between pieces; `dropAfterEvents: n` cuts the connection after n events;
// `hold: true` sends nothing after the events and keeps the connection open), or `body` (raw
// text). `waitMs` delays the status line (for timeouts).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  path: string
  headers: Record<string, string>
  body: string
  json(): any
  /** Resolves when the client went away before the reply ended (abort propagation). */
  closed: Promise<void>
  /** True once `closed` resolved. */
  disconnected: boolean
}

export interface Reply {
  status?: number
  headers?: Record<string, string>
  json?: unknown
  sse?: string
  body?: string
  delayMs?: number
  dropAfterEvents?: number
  hold?: boolean
  waitMs?: number
}

export type Handler = (req: RecordedRequest) => Reply | Response | Promise<Reply | Response>

export interface FakeUpstream {
  url: string
  requests: RecordedRequest[]
  script(...replies: (Reply | Response | Handler)[]): void
  stop(): Promise<void>
}

const FIXTURES = join(import.meta.dir, '..', 'fixtures')

/** The text of a copied fixture, by its path under test/fixtures (e.g. `anthropic/messages/stream-text.sse`). */
export function fixture(path: string): string {
  return readFileSync(join(FIXTURES, path), 'utf8')
}

export function fixtureJson(path: string): any {
  return JSON.parse(fixture(path))
}

/** SSE text → the pieces the fake sends: each event (with its blank line) cut in two. */
export function ssePieces(text: string): { pieces: string[]; eventEnds: number[] } {
  const events = text.match(/[\s\S]*?(?:\r?\n\r?\n|$)/g)!.filter((e) => e.length > 0)
  const pieces: string[] = []
  const eventEnds: number[] = []
  for (const e of events) {
    const cut = Math.max(1, Math.floor(e.length / 2))
    pieces.push(e.slice(0, cut))
    if (cut < e.length) pieces.push(e.slice(cut))
    eventEnds.push(pieces.length)
  }
  return { pieces, eventEnds }
}

function sseStream(reply: Reply, rec: RecordedRequest, markClosed: () => void): ReadableStream<Uint8Array> {
  const { pieces, eventEnds } = ssePieces(reply.sse!)
  const stopAt = reply.dropAfterEvents !== undefined ? (eventEnds[reply.dropAfterEvents - 1] ?? 0) : pieces.length
  const enc = new TextEncoder()
  let i = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i > 0) await Bun.sleep(reply.delayMs ?? 1)
      if (rec.disconnected) return
      if (i < stopAt) {
        controller.enqueue(enc.encode(pieces[i++]))
        return
      }
      if (reply.dropAfterEvents !== undefined) {
        // what was sent before the drop reaches the gateway first: an error at once can cut the
        // connection with the last pieces still unwritten on a busy machine, a drop before the
        // first event (which the gateway rightly retries) where a test asked for one after it
        await Bun.sleep(50)
        controller.error(new Error('fake upstream: connection dropped'))
      }
      else if (reply.hold) await rec.closed
      else controller.close()
    },
    cancel() {
      markClosed()
    },
  })
}

async function render(reply: Reply | Response, rec: RecordedRequest, markClosed: () => void): Promise<Response> {
  if (reply instanceof Response) return reply
  if (reply.waitMs) await Promise.race([Bun.sleep(reply.waitMs), rec.closed])
  const status = reply.status ?? 200
  if (reply.sse !== undefined) {
    const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers }
    return new Response(sseStream(reply, rec, markClosed), { status, headers })
  }
  if (reply.json !== undefined) {
    const body = typeof reply.json === 'string' ? reply.json : JSON.stringify(reply.json)
    return new Response(body, { status, headers: { 'content-type': 'application/json', ...reply.headers } })
  }
  return new Response(reply.body ?? '', { status, headers: reply.headers })
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = []
  let queue: (Reply | Response | Handler)[] = []

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const body = await req.text()
      let markClosed!: () => void
      const closed = new Promise<void>((r) => (markClosed = r))
      const rec: RecordedRequest = {
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(req.headers),
        body,
        json: () => JSON.parse(body),
        closed,
        disconnected: false,
      }
      const close = () => {
        rec.disconnected = true
        markClosed()
      }
      req.signal.addEventListener('abort', close, { once: true })
      requests.push(rec)
      const next = queue.length > 1 ? queue.shift()! : queue[0]
      if (!next) return new Response(JSON.stringify({ error: { message: `fake upstream: nothing scripted for ${rec.path}` } }), { status: 500 })
      const reply = typeof next === 'function' ? await next(rec) : next instanceof Response ? next.clone() : next
      return render(reply, rec, close)
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    script(...replies) {
      queue = replies
    },
    async stop() {
      await server.stop(true)
    },
  }
}

/** The gateway env that points both families' upstreams at a fake one. */
export const upstreamEnv = (up: FakeUpstream): Record<string, string> => ({ OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: up.url })

/**
 * Gateway config adding `llama-3.1-8b`: a model of OpenAI's family served by an
 * OpenAI-compatible provider on the chat wire alone (so a Responses client reaches it through
 * the translation), at the fake upstream.
 */
export const chatWireModel = (up: FakeUpstream): string => `
providers:
  - { id: local, kind: openai-compatible, base_url: "${up.url}/v1" }
models:
  - { id: llama-3.1-8b, family: openai, deployments: [{ provider: local, upstream_id: llama }], price: { input_mtok: 0, output_mtok: 0 } }
`
