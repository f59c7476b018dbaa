// The response cache as a transport in front of the one that calls upstream (fetch, or the
// cassettes'): an exchange whose call asks for the cache (CallContext `cache`) is looked up
// by its match key (the upstream request, normalised: replay/match.ts) and its scope; a hit
// is answered from the store as the upstream answered it, so the gateway reads, translates,
// records and counts it as usual. A miss goes on, and its 2xx answer is kept once read to
// its end and the generation has succeeded (CacheUse).
import type { Exchange, Transport } from '../providers/http.ts'
import type { Logger } from '../http/log.ts'
import { matchKey } from '../replay/match.ts'
import { RedisUnavailable } from '../cluster/redis.ts'
import type { CacheStore, CachedAnswer } from './store.ts'
import { watchedResponse } from '../lib/watched-body.ts'
import { nextTurn } from '../lib/turn.ts'
import { charBoundary } from '../lib/chars.ts'

/**
 * The store's key of an exchange: its match key within its scope (an account, or `*`), and the
 * beta features it asks for. Anthropic's betas go in a header, not the body (a body's `betas`
 * is moved there), and change the answer: a longer context, a larger output, other tools.
 */
export function cacheKey(exchange: Pick<Exchange, 'path' | 'body'>, scope: string, betas = ''): string {
  const body = typeof exchange.body === 'string' ? parsed(exchange.body) : exchange.body.json
  const h = new Bun.CryptoHasher('sha256').update(scope).update('\n').update(matchKey({ path: exchange.path, body }))
  if (betas) h.update('\nanthropic-beta: ').update(betas)
  const who = whoAsked(body)
  if (who) h.update('\nasked by: ').update(who)
  return h.digest('hex')
}

/**
 * Who a request says it asks for (an end user's id, a cache key of the caller's, metadata's
 * user): a match leaves them out, since they change from run to run, but the Responses API
 * echoes them in its answer, so a hit shared between callers who gave other values would hand
 * one the other's identifiers. Undefined when the request gives none.
 */
function whoAsked(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const b = body as Record<string, unknown>
  const meta = b.metadata as Record<string, unknown> | undefined
  const who = [b.user, b.safety_identifier, b.prompt_cache_key, typeof meta === 'object' && meta !== null ? meta.user_id : undefined]
  return who.every((v) => v === undefined) ? undefined : JSON.stringify(who)
}

/** The `anthropic-beta` header a call sends ('' when none), its tokens sorted: their order says nothing. */
function betasOf(headers: HeadersInit | undefined): string {
  const raw = headers ? new Headers(headers).get('anthropic-beta') : null
  if (!raw) return ''
  return [...new Set(raw.split(',').map((t) => t.trim()).filter(Boolean))].sort().join(',')
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function withCache(store: CacheStore, log: Pick<Logger, 'warn'>, next: Transport = fetch): Transport {
  return async (url, init, exchange) => {
    const use = exchange.ctx?.cache
    if (!use) return next(url, init, exchange)
    const key = cacheKey(exchange, use.scope, betasOf(init.headers))
    // a store that cannot answer is a miss: the request goes upstream as if uncached
    const found = await store.get(key, use.ttlMs).catch((e) => void told(log, 'cache: a lookup failed; the request goes upstream', e))
    use.looked(found !== undefined)
    if (found) {
      // the request body that is never sent (a long one is a stream)
      if (init.body instanceof ReadableStream) void init.body.cancel().catch(() => {})
      return answerOf(found)
    }
    const res = await next(url, init, exchange)
    if (res.status < 200 || res.status > 299 || !res.body) return res
    const keep = (body: string) =>
      use.hold(() => store.put(key, { status: res.status, contentType: res.headers.get('content-type'), body }, use.ttlMs).catch((e) => told(log, 'cache: an answer could not be stored', e)))
    return kept(res, store.maxBytes, keep)
  }
}

/** A store's failure, logged; Redis away is not, once per request: SharedRedis says so once for the outage. */
function told(log: Pick<Logger, 'warn'>, what: string, e: unknown): void {
  if (!(e instanceof RedisUnavailable)) log.warn(what, { error: String(e) })
}

/** A stored stream is handed on this many characters a read, a turn of the loop between reads. */
const SLICE = 64 * 1024

function answerOf(a: CachedAnswer): Response {
  const init: ResponseInit = { status: a.status, headers: a.contentType ? { 'content-type': a.contentType } : {} }
  if (a.body.length <= SLICE || !a.contentType?.includes('text/event-stream')) return new Response(a.body, init)
  // a long stream in reads as an upstream's come: handed on whole, its events were split and
  // read in one stretch of the thread (100,000 events: 340 ms that no other request had)
  const enc = new TextEncoder()
  let at = 0
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at > 0) await nextTurn()
        const end = charBoundary(a.body, Math.min(a.body.length, at + SLICE))
        controller.enqueue(enc.encode(a.body.slice(at, end)))
        at = end
        if (at >= a.body.length) controller.close()
      },
    }),
    init,
  )
}

/**
 * The upstream's answer passed on as it arrives, its bytes gathered beside: `done` gets the
 * text the reader took, once it has read the body to its end or stopped reading it (an
 * adapter stops at a stream's last event), never for a body that failed or one larger than
 * `limit`. Whether that is a whole answer is the generation's to say (CacheUse.settle): one
 * stopped early because the client left ends failed, and is not kept.
 */
function kept(res: Response, limit: number, done: (text: string) => void): Response {
  let chunks: Uint8Array[] | null = []
  let size = 0
  return watchedResponse(res, {
    chunk(b) {
      if (!chunks) return
      size += b.byteLength
      if (size > limit) chunks = null
      else chunks.push(b)
    },
    end({ error }) {
      if (chunks && error === undefined) done(Buffer.concat(chunks).toString('utf8'))
      chunks = null
    },
  })
}
