// The cassettes as the transport of every upstream call (config `replay`): `record` sends
// each call and writes its exchange; `replay` answers each from its recording and never calls
// an upstream, a request with none getting a 424 that says what is missing; `record-missing`
// replays what is recorded and records the rest. A replayed answer is the recorded one:
// the same status, headers and bytes, a stream's events in order with their recorded spacing
// divided by `speed` (unset: at once). Several identical requests get their recordings in
// the order they were made. The call is told it was replayed (CallContext `replayed`), so
// its record says so and costs 0 unless `bill` is set.
import type { Config } from '../config/load.ts'
import type { ReplaySettings } from '../config/replay.ts'
import type { Logger } from '../http/log.ts'
import type { Transport } from '../providers/http.ts'
import { partText, type CassetteEntry } from './cassette.ts'
import { CassetteDir } from './cassette-dir.ts'
import { scrubberOf } from './cassette-scrub.ts'
import { recordCall, recording } from './record.ts'
import { missError } from './replay-miss.ts'
import { isMainThread } from 'node:worker_threads'

export function cassetteTransport(settings: ReplaySettings, config: Pick<Config, 'providers' | 'adminToken' | 'bootstrapKey'>, log: Pick<Logger, 'warn'>, next: Transport = fetch): Transport {
  const record = settings.mode === 'record'
  // A record run starts each file it writes afresh, keeping what was recorded since the run
  // began; a batch worker thread (started after this) only adds to the files.
  const dir = new CassetteDir(settings.dir, settings, scrubberOf(config), { writeOnly: record, freshSince: record && isMainThread ? Date.now() : undefined })
  if (record) return recording(dir, next)
  const how = { billed: settings.bill }
  return async (url, init, exchange) => {
    const req = dir.requestOf(exchange)
    // replay wraps round: a suite run twice against one gateway gets the same answers twice
    const found = dir.take(req, settings.mode === 'replay')
    if (found) {
      exchange.ctx?.replayed?.(how)
      unsent(init)
      return answerOf(dir, found, settings.speed, init.signal ?? undefined)
    }
    if (settings.mode === 'record-missing') {
      exchange.ctx?.replayed?.(undefined)
      return recordCall(dir, req, url, init, exchange, next)
    }
    unsent(init)
    const miss = missError(dir, req)
    log.warn(miss.logged, { request_id: exchange.ctx?.requestId })
    throw miss.error
  }
}

/** A request body that is never sent (a long one is a stream): let go. */
function unsent(init: RequestInit): void {
  if (init.body instanceof ReadableStream) void init.body.cancel().catch(() => {})
}

/** Statuses whose responses have no body. */
const NO_BODY = new Set([204, 205, 304])

async function answerOf(dir: CassetteDir, e: CassetteEntry, speed: number | undefined, signal?: AbortSignal): Promise<Response> {
  const r = e.response
  const part = dir.partOf(r)
  if (speed) await wait(r.ms / speed, signal)
  const init = { status: r.status, headers: r.headers }
  if (NO_BODY.has(r.status)) return new Response(null, init)
  if (!('events' in part)) return new Response(partText(part), init)
  const enc = new TextEncoder()
  let i = 0
  let at = 0
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        const ev = part.events[i++]
        if (!ev) {
          // the failure as it came, its code too (a socket's reset is said by its code)
          if (part.error !== undefined) controller.error(Object.assign(new Error(part.error), part.code === undefined ? {} : { code: part.code }))
          else controller.close()
          return
        }
        if (speed) await wait((ev.ms - at) / speed, signal)
        at = ev.ms
        controller.enqueue(enc.encode(ev.text))
      },
    }),
    init,
  )
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal!.reason)
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
