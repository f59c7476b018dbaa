// Recording: the call goes upstream as usual, and its answer is passed on to the gateway as
// it arrives (a stream is never held back) while its bytes are gathered beside, with when
// each arrived. Once read to its end the exchange is written to its cassette: the request's
// match key and normalised body, the response's status, the headers worth keeping, and its
// body (JSON whole, or a stream's events with their times). A stream the gateway stopped
// reading (at its last event, or because its client left) is written as far as it was read; a
// stream that broke off says so after its events; a JSON body that broke off is not written.
import type { Exchange, Transport } from '../providers/http.ts'
import { EventSplitter } from '../routing/sse-events.ts'
import { jsonPart, type BodyPart, type CassetteEntry, type RecordedEvent } from './cassette.ts'
import type { CassetteDir, CassetteRequest } from './cassette-dir.ts'
import { recordedHeaders, type Scrub } from './cassette-scrub.ts'
import { watchedResponse } from '../lib/watched-body.ts'

/** Response headers a replay gives back: how to read the body, and how long to wait after a 429. */
const KEPT_HEADERS = ['content-type', 'retry-after']

export function recording(dir: CassetteDir, next: Transport = fetch): Transport {
  return (url, init, exchange) => recordCall(dir, dir.requestOf(exchange), url, init, exchange, next)
}

/** Sends one call with `next` and writes its exchange to the cassette once its answer has been read. */
export async function recordCall(dir: CassetteDir, req: CassetteRequest, url: string, init: RequestInit, exchange: Exchange, next: Transport): Promise<Response> {
  const requestHeaders = recordedHeaders(init.headers, dir.scrub)
  const t0 = performance.now()
  const res = await next(url, init, exchange)
  const ms = Math.round(performance.now() - t0)
  const headers: Record<string, string> = {}
  for (const h of KEPT_HEADERS) {
    const v = res.headers.get(h)
    if (v !== null) headers[h] = dir.scrub(v)
  }
  const sse = (headers['content-type'] ?? '').includes('text/event-stream')
  const write = (part: BodyPart) => {
    const entry: CassetteEntry = {
      key: req.key,
      at: new Date().toISOString(),
      provider: req.provider,
      ...(req.model ? { model: req.model } : {}),
      request: { path: req.path, ...(requestHeaders ? { headers: requestHeaders } : {}), ...dir.blobs.keep({ body: req.body }) },
      response: { status: res.status, headers, ms, ...dir.blobs.keep(part) },
    }
    dir.append(req, entry)
  }
  return tee(res, (got) => {
    // a JSON answer that broke off is not one to replay; a stream's events before the break are
    if (got.error !== undefined && !sse) return
    write(sse ? eventsOf(got, dir.scrub) : jsonPart(dir.scrub(got.text())))
  })
}

interface Gathered {
  chunks: { ms: number; bytes: Uint8Array }[]
  text(): string
  /** The body failed after these chunks, and the failure's code (a socket's `ECONNRESET`), if it had one. */
  error?: string
  code?: string
}

/**
 * The response passed on as it arrives, its chunks gathered beside with their times; `done`
 * gets them once the body was read to its end, broke off, or was cancelled (an adapter stops
 * reading at a stream's last event; a client that leaves cancels it too, often just after the
 * last event: what was read is what the upstream said).
 */
function tee(res: Response, done: (got: Gathered) => void): Response {
  if (!res.body) {
    done(gathered([]))
    return res
  }
  const t0 = performance.now()
  const chunks: Gathered['chunks'] = []
  return watchedResponse(res, {
    chunk: (bytes) => void chunks.push({ ms: Math.round(performance.now() - t0), bytes }),
    end({ error }) {
      if (error === undefined) return done(gathered(chunks))
      const code = (error as { code?: unknown })?.code
      done({ ...gathered(chunks, (error as Error)?.message ?? String(error)), ...(typeof code === 'string' && { code }) })
    },
  })
}

function gathered(chunks: Gathered['chunks'], error?: string): Gathered {
  return { chunks, error, text: () => Buffer.concat(chunks.map((c) => c.bytes)).toString('utf8') }
}

/** A stream's text cut into its events, each with the time its last byte arrived. */
function eventsOf(got: Gathered, scrub: Scrub): BodyPart {
  const split = new EventSplitter()
  const dec = new TextDecoder()
  const events: RecordedEvent[] = []
  let last = 0
  for (const c of got.chunks) {
    last = c.ms
    for (const text of split.push(dec.decode(c.bytes, { stream: true }))) events.push({ ms: c.ms, text: scrub(text) })
  }
  const rest = split.rest() + dec.decode()
  if (rest !== '') events.push({ ms: last, text: scrub(rest) })
  if (got.error === undefined) return { events }
  return got.code !== undefined ? { events, error: got.error, code: got.code } : { events, error: got.error }
}
