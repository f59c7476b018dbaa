// The gateway's outer handler, around the Elysia app: request id, client IP, IP rate
// limit, auth and key limits for /api routes, then the app; then the headers every
// response carries and one access-log line. Kept outside Elysia so refusals cost no
// routing and every response (errors included) gets the same treatment.
import type { Server } from 'bun'
import { authenticate, authenticateKnown, CreditsExhausted } from './auth/guard.ts'
import { IDLE_MAX_S } from './config/load.ts'
import { setRequestInfo, type PendingLimits, type RequestInfo } from './http/context.ts'
import { proxyMatcher } from './http/proxies.ts'
import { adminReader } from './auth/viewer.ts'
import { RateLimiter, rateLimitHeaders, steadyNow, type Limit, type Outcome, type RateLimitBackend } from './auth/ratelimit.ts'
import type { AdmissionServices } from './services.ts'
import type { DirectRoutes } from './http/direct.ts'
import type { Logger } from './http/log.ts'
import { echo, errorResponse, HttpError } from './http/errors.ts'
import { KNOWN_FAILURES } from './failures.ts'
import { clientWentAway, knownAnswer, wentAway } from './http/onerror.ts'
import { fragmentInUrl } from './http/fragment.ts'
import { nulInUrl } from './http/nul.ts'
import { corsFor } from './http/cors.ts'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@\/+=-]{1,128}$/

export type FetchHandler = (req: Request, server: Server<unknown>) => Promise<Response>

/**
 * Elysia's router takes the path from `indexOf('/', 11)` of the URL: right for any authority
 * of four characters or more, wrong for a shorter Host (`x`, `gw`, an empty one), where it
 * skips part of the path. Auth, limits and logging must see the path the router routes, so
 * such a request reaches the app with its URL rebuilt on a long authority. So does one whose
 * Host makes a URL that does not parse (a port past 65535, an unclosed `[`), which every route
 * reading its query string would throw on.
 */
const ROUTER_PATH_FROM = 11
const CANONICAL_ORIGIN = 'http://localhost'
/** Methods that only read, or take away. */
const SPEND_NOTHING: ReadonlySet<string> = new Set(['GET', 'HEAD', 'DELETE'])

/** Methods that change nothing: still answered when the database cannot be written. */
const READS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])
const STORE_LOST_MESSAGE = 'Service unavailable: the database cannot be written (its file was deleted or replaced under the running gateway, or cannot be read); nothing was taken or changed'

/** What a key that spent its credit may still do: read, delete its own things, cancel a batch or response (which stops spending). */
const spendsNothing = (method: string, path: string): boolean => SPEND_NOTHING.has(method) || (method === 'POST' && path.endsWith('/cancel'))

/**
 * Index of the path's first '/' in a request URL (after `scheme://authority`), or -1.
 * With an empty Host, Bun's URL is the bare path.
 */
function pathStart(url: string): number {
  if (url.charCodeAt(0) === 47) return 0
  return url.indexOf('/', url.indexOf('//') + 2)
}

function pathOf(url: string, start: number): string {
  if (start < 0) return '/'
  const q = url.indexOf('?', start)
  return q < 0 ? url.slice(start) : url.slice(start, q)
}

export function clientIp(req: Request, server: Server<unknown>, trusted: (address: string) => boolean): string {
  const peer = server.requestIP(req)?.address ?? ''
  if (!trusted(peer)) return peer
  const xff = req.headers.get('x-forwarded-for')
  if (!xff) return peer
  // the right-most address that is not one of our proxies is the client
  const hops = xff.split(',').map((s) => s.trim()).filter(Boolean)
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i]!)) return hops[i]!
  return hops[0] ?? peer
}

/** A client's path under /api/alpha or /api/beta without the /v1 every route there has (its base URL lacks it). */
const LACKS_V1 = /^\/api\/(alpha|beta)\/(chat\/completions|completions|responses|conversations|messages|embeddings|files|batches|models)(\/|$)/

/** A base URL set wrong, seen in the path (/v1 twice, or not at all): a 404 naming the one to set. */
function baseUrlMistake(path: string, url: string, publicUrl?: string): Response | undefined {
  const what = path.includes('/v1/v1/') ? 'has a doubled /v1/v1/' : LACKS_V1.test(path) ? 'lacks /v1' : undefined
  if (what === undefined) return undefined
  // the URL clients reach the gateway by when it is configured; with an empty Host the URL is
  // a bare path: no origin to quote but the default one
  const origin = publicUrl ?? (URL.canParse(url) ? new URL(url).origin : 'http://127.0.0.1:4141')
  const hint = path.startsWith('/api/beta')
    ? `set the Anthropic SDK's baseURL or Claude Code's ANTHROPIC_BASE_URL to ${origin}/api/beta (they append /v1/... themselves); @ai-sdk/anthropic takes ${origin}/api/beta/v1`
    : `set the base URL to ${origin}/api/alpha/v1 (OpenAI clients append the path after /v1)`
  return errorResponse(404, `No route ${echo(path, 200)}: the path ${what} — ${hint}`)
}

export function createPipeline(s: AdmissionServices, appFetch: (req: Request) => Response | Promise<Response>, direct?: DirectRoutes): FetchHandler {
  const { config, keys, limiter, log, storeLost } = s
  const trusted = proxyMatcher(config.trustedProxies)
  const adminRead = adminReader(config.adminToken)
  const cors = corsFor(config.corsOrigins)

  /** A 429, counted for the metrics by the limit that refused. */
  const limited = (scope: 'key' | 'ip', binding: Outcome['binding']) => {
    s.metrics?.rateLimited(scope)
    return errorResponse(429, `Rate limit exceeded (${scope})`, rateLimitHeaders(binding, true))
  }

  /** Takes limits: from memory at once, or (several instances, Redis) as a round trip. */
  const rateLimits: RateLimitBackend = s.cluster?.limiter ?? limiter
  /** `then` for a value that is a promise only when the limits are shared: memory stays synchronous. */
  const then = <T, U>(v: T | Promise<T>, f: (t: T) => U | Promise<U>): U | Promise<U> => (v instanceof Promise ? v.then(f) : f(v))

  const keyLimitsOf = (key: { id: string; rpm: number | null }): Limit[] => [
    { bucket: 'k:' + key.id, limit: key.rpm ?? config.limits.keyRpm, windowMs: 60_000, scope: 'key' },
    { bucket: 'kb:' + key.id, limit: config.limits.keyBurstRps, windowMs: 1_000, scope: 'key' },
  ]

  /**
   * The refusal for an /api request, or the rate-limit outcome to put in its headers. With
   * shared limits each take is a round trip; the shared store away throws RedisUnavailable.
   * `overlap`: the limits may be decided alongside the handler (see `Later`).
   */
  function guard(req: Request, path: string, info: RequestInfo, overlap: boolean): Guarded | Promise<Guarded> | Later {
    const now = Date.now()
    // the windows' clock: one a step of the system clock does not move (ratelimit.ts)
    const at = steadyNow()
    const ipLimits: Limit[] = [{ bucket: 'ip:' + info.ip, limit: config.limits.ipRpm, windowMs: 60_000, scope: 'ip' }]
    const beta = path.startsWith('/api/beta/')
    // shared limits and a key this instance knows (nearly every request): the address's
    // limit and the key's in one round trip, decided as the two below would decide them
    if (rateLimits.takeBoth) {
      const known = authenticateKnown(req.headers, beta, keys)
      if (known !== undefined && !(known instanceof HttpError)) {
        const take = () =>
          rateLimits.takeBoth!(ipLimits, keyLimitsOf(known)).then(([ipOutcome, keyOutcome]) => {
            if (!ipOutcome.allowed) return limited('ip', ipOutcome.binding)
            info.key = known
            keys.touch(known.id, now)
            if (!keyOutcome!.allowed) return limited('key', keyOutcome!.binding)
            return RateLimiter.tighter(ipOutcome.binding, keyOutcome!.binding)
          })
        if (!overlap) return take()
        info.key = known
        keys.touch(known.id, now)
        const later = new Later(take)
        if (known.credits === null) void later.allowed() // taken now (and a failure handled)
        return later
      }
    }
    return then(rateLimits.take(ipLimits, at), (ipOutcome): Guarded | Promise<Guarded> => {
      if (!ipOutcome.allowed) return limited('ip', ipOutcome.binding)
      // a key in memory answers at once; only a key unknown here is looked up (a promise)
      return then(authenticate(req.headers, beta, keys), (found): Guarded | Promise<Guarded> => {
        // a key that spent its credit still reads what it spent it on: the record of the very
        // request that crossed zero, its usage, its files (nothing read costs anything); and it
        // can still stop a batch or delete its data
        const key = found instanceof CreditsExhausted && spendsNothing(req.method, path) ? found.key : found
        if (key instanceof HttpError) {
          // the dashboard's admin view: a few GET routes also take the admin token (auth/viewer.ts)
          if (adminRead(req, path)) return (info.admin = true), ipOutcome.binding
          // a key whose spend reached its credit is refused here, before any model is known
          if (key.status === 402) s.metrics?.creditsRefused()
          return errorResponse(key.status, key.message)
        }
        info.key = key
        keys.touch(key.id, now)
        return then(rateLimits.take(keyLimitsOf(key), at), (keyOutcome) => {
          if (!keyOutcome.allowed) return limited('key', keyOutcome.binding)
          return RateLimiter.tighter(ipOutcome.binding, keyOutcome.binding)
        })
      })
    })
  }

  return async function gateway(req, server) {
    const start = pathStart(req.url)
    const path = pathOf(req.url, start)
    const sent = req.headers.get('x-request-id')
    const info: RequestInfo = {
      requestId: sent !== null && SANE_REQUEST_ID.test(sent) ? sent : crypto.randomUUID(),
      ip: clientIp(req, server, trusted),
      startedAt: performance.now(),
    }
    setRequestInfo(req, info)

    let res: Response | undefined
    let limits: Outcome['binding'] | undefined
    let later: Later | undefined
    let routed = req
    let held = false
    const handle = req.method === 'POST' ? direct?.post(path) : undefined
    try {
      // a browser's question before a cross-origin call: answered before any key is asked for
      const preflight = cors !== undefined && req.method === 'OPTIONS' && path.startsWith('/api/') ? cors.preflight(req) : undefined
      if (preflight !== undefined) {
        res = preflight
      } else if (storeLost !== undefined && !READS.has(req.method) && (path.startsWith('/api/') || path.startsWith('/admin/')) && storeLost()) {
        res = errorResponse(503, STORE_LOST_MESSAGE, { 'retry-after': '5' })
      } else if (path.startsWith('/admin/') || path === '/metrics') {
        // Admin routes (and /metrics, which takes the admin token) count toward the IP limit too: wrong tokens cannot be tried at line rate.
        const ipLimit: Limit = { bucket: 'ip:' + info.ip, limit: config.limits.ipRpm, windowMs: 60_000, scope: 'ip' }
        const ip = await rateLimits.take([ipLimit], steadyNow())
        if (!ip.allowed) res = limited('ip', ip.binding)
      } else if (path.startsWith('/api/')) {
        res = baseUrlMistake(path, req.url, config.publicUrl)
        if (!res) {
          const guarded = guard(req, path, info, handle !== undefined && smallBody(req))
          if (guarded instanceof Later) {
            later = guarded
            info.limits = later
          } else {
            const g = guarded instanceof Promise ? await guarded : guarded
            if (g instanceof Response) res = g
            else limits = g
          }
        }
      }
      if (!res) {
        // a key's request (or a dashboard read of the admin's) may wait minutes in silence: a long
        // generation's first byte, a JSON reply; the connection is held that long for it, and
        // given back to limits.idle_timeout_s once the answer is on its way (a stream pings
        // every 15 s of silence), so that keep-alive after it is not held 255 s
        if (info.key || info.admin) {
          server.timeout(req, IDLE_MAX_S)
          held = true
        }
        if (start < ROUTER_PATH_FROM || !URL.canParse(req.url)) {
          routed = new Request(CANONICAL_ORIGIN + (start < 0 ? '/' : req.url.slice(start)), req)
          setRequestInfo(routed, info)
        }
        const odd = nulInUrl(req.url, start) ?? fragmentInUrl(req.url, start)
        res = odd ? errorResponse(odd.status, odd.message) : await (handle ? handle(routed) : appFetch(routed))
      }
    } catch (e) {
      res = failed(e, req, info.requestId, path, log)
    }
    if (later) {
      // the limits' answer comes first, whatever the handler said meanwhile (taken now if the
      // handler ended before it asked for them)
      try {
        const g = await later.taken()
        if (g instanceof Response) {
          void res.body?.cancel().catch(() => {})
          res = g
        } else limits = g
      } catch (e) {
        void res.body?.cancel().catch(() => {})
        res = failed(e, req, info.requestId, path, log)
      }
    }

    // `request-id` is the name the Anthropic SDK reads (`_request_id`, an error's requestID)
    const extra: Record<string, string> = { 'x-request-id': info.requestId, 'request-id': info.requestId }
    if (limits && res.status < 300) Object.assign(extra, rateLimitHeaders(limits, false))
    // a page of another origin reads the answer (its errors included) when that origin is allowed
    if (cors !== undefined && path.startsWith('/api/') && !res.headers.has('access-control-allow-origin')) Object.assign(extra, cors.headers(req.headers.get('origin')))
    // answered without reading the whole body the request declares (no key, a limit, no route,
    // too slow, too large): the connection closes, else Bun keeps it to take the rest of that
    // body in, as slowly as the client likes, and a client with no key could hold every socket
    if (res.status === 408 || res.status === 413 || (!req.bodyUsed && !routed.bodyUsed && declaresBody(req))) extra.connection = 'close'
    // a read of a key's data (records, usage, files, keys): kept by no cache, a browser's
    // included, unless its route said otherwise (the dashboard's assets do); a HEAD is answered
    // by the GET route, and a cache may keep its answer too. Every admin answer likewise, whatever
    // its method: creating or rotating a key answers with its secret
    if ((req.method === 'GET' || req.method === 'HEAD' || path.startsWith('/admin/')) && !res.headers.has('cache-control')) extra['cache-control'] = 'no-store'
    res = withHeaders(res, extra)
    if (held) server.timeout(req, config.limits.idleTimeoutS)

    if (log.level === 'debug' || log.level === 'info') {
      log.info('request', {
        request_id: info.requestId,
        method: req.method,
        path,
        status: res.status,
        duration_ms: Math.round((performance.now() - info.startedAt) * 100) / 100,
        key_id: info.key?.id,
        model: info.model,
        trace_id: info.traceId,
        span_id: info.spanId,
      })
    }
    return res
  }
}

/** The answer to what a request's handling threw. */
function failed(e: unknown, req: Request, requestId: string, path: string, log: Logger): Response {
  const known = knownAnswer(KNOWN_FAILURES, e, log, requestId)
  if (known) return known
  if (clientWentAway(req, e)) return wentAway(log, requestId, path)
  // a DOMException's stack is '' (not undefined): its name and message say what it was
  log.error('unhandled error', { request_id: requestId, error: (e as Error)?.stack || String(e) })
  return errorResponse(500, `Internal error; quote request id ${requestId} to support`)
}

/** Largest body whose read and decode may overlap the limits' round trip. */
const OVERLAP_MAX_BODY = 64 * 1024

function smallBody(req: Request): boolean {
  const length = req.headers.get('content-length')
  return length !== null && Number(length) <= OVERLAP_MAX_BODY
}

type Guarded = Response | Outcome['binding']

/**
 * Shared limits decided alongside the handler, for a small body of a generation route, taken
 * once, when first asked. The pipeline (pipeline/generate.ts) waits for them before anything is
 * sent upstream, and a refusal replaces whatever the handler answered. An unlimited key's are
 * taken at once, so their round trip overlaps the body's read. A funded key's are taken when
 * the pipeline asks for them, in the turn it asks for the admission: the two calls go to Redis
 * together, one round trip. Only for bodies of a known, small length: a refused request wastes
 * one small parse.
 */
class Later implements PendingLimits {
  private taking?: Promise<Guarded>
  private allowing?: Promise<boolean>

  constructor(private readonly take: () => Promise<Guarded>) {}

  /** The front door's answer: a refusal, or the outcome for the headers. Rejects when the store could not be read. */
  taken(): Promise<Guarded> {
    return (this.taking ??= this.take())
  }

  allowed(): Promise<boolean> {
    return (this.allowing ??= this.taken().then(isAllowed, notAllowed))
  }
}

// (made once, not two closures a request)
const isAllowed = (g: Guarded) => !(g instanceof Response)
const notAllowed = () => false

function declaresBody(req: Request): boolean {
  const length = req.headers.get('content-length')
  return (length !== null && length !== '0') || req.headers.has('transfer-encoding')
}

function withHeaders(res: Response, extra: Record<string, string>): Response {
  try {
    setAll(res.headers, extra)
    return res
  } catch {
    // a relayed upstream Response has immutable headers
    const copy = new Response(res.body, res)
    setAll(copy.headers, extra)
    return copy
  }
}

function setAll(headers: Headers, extra: Record<string, string>) {
  // (a Vary the answer had is kept: it is a list)
  for (const k in extra) k === 'vary' ? headers.append(k, extra[k]!) : headers.set(k, extra[k]!)
}
