// The one way an adapter calls its upstream: POST with the provider's timeout combined
// with the caller's AbortSignal (a client that disconnects aborts the upstream request),
// retries with exponential backoff + jitter on connect errors, 429 and 5xx while nothing
// has been handed back, and every failure mapped through errors.ts. Each attempt takes the
// next key of the provider's pool; a key refused with 401/403 leaves it, and the call goes on
// at once with the next key while one is left.
import { errorSaid, notAReplyError, redirectRefused, upstreamErrorFrom } from './errors.ts'
import { bodyPrefix } from '../http/body-prefix.ts'
import { replyText } from './reply-text.ts'
import { Idle, type Watch } from './idle.ts'
import { chunkStream, encodeJson, type ChunkedBody } from './json-body.ts'
import type { KeyPool } from './key-pool.ts'
import { UpstreamError, type CallContext, type ProviderConfig } from './types.ts'

/** Backoff: BASE · 2^attempt, capped, with jitter in [½, 1] of that. */
export const RETRY = {
  baseMs: 100,
  capMs: 2_000,
  /** An upstream Retry-After longer than this is not waited for: the 429 goes to the client, which can wait itself. */
  maxRetryAfterMs: 2_000,
}

export interface UpstreamRequest<T> {
  provider: ProviderConfig
  /** Appended to the provider's base URL. */
  path: string
  headers: Record<string, string>
  /** The body's text, or `{ json }` to have it encoded here (a long conversation in slices: json-body.ts). */
  body: string | { json: Record<string, unknown> }
  /** The caller's signal: aborting it aborts the upstream request at any point. */
  signal: AbortSignal
  /**
   * Turns a 2xx answer into the result. It runs inside the attempt — still under the
   * timeout, and a retryable UpstreamError it throws (e.g. an error as the first stream
   * event) is retried like an HTTP 5xx. Once it resolves, the timeout stops applying to the
   * whole call; a stream's reader that notes its reads on `idle` is still held to it between
   * two reads (idle.ts).
   */
  accept: (res: Response, idle: Watch) => Promise<T>
  /** The provider's key pool and how a key is sent; absent: `headers` carry the credentials, if any. */
  auth?: UpstreamAuth
  /** What sends the request: fetch, unless cassettes or the response cache stand in (src/replay). */
  transport?: Transport
  /** The call's context, for a transport that needs it (whose key, which model). */
  ctx?: CallContext
}

/**
 * What sends one attempt upstream, in fetch's shape; `exchange` says what it is, for a
 * transport that records, replays or caches exchanges by their match key (src/replay/match.ts).
 */
export type Transport = (url: string, init: RequestInit, exchange: Exchange) => Promise<Response>

export interface Exchange {
  /** The provider's configured id. */
  provider: string
  /** The path after the provider's base URL, query included. */
  path: string
  /** The body as the adapter gave it: its text, or the JSON it is encoded from. */
  body: string | { json: Record<string, unknown> }
  ctx?: CallContext
}

export interface UpstreamAuth {
  pool: KeyPool
  /** The headers that carry one key (`authorization: Bearer …`, `x-api-key`, `api-key`). */
  headers(key: string): Record<string, string>
}

/** The trace context a call carries: the call's own, whatever the adapter's headers say. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const

/**
 * An adapter's headers with those the call carries for its observers (CallContext `headers`, a
 * trace's `traceparent`): the adapter's win a conflict, except the trace context's.
 */
export function withCallHeaders(own: Record<string, string>, ctx: { headers?: Record<string, string> }): Record<string, string> {
  const extra = ctx.headers
  if (!extra) return own
  const out = { ...extra, ...own }
  for (const k of TRACE_HEADERS) if (extra[k] !== undefined) out[k] = extra[k]
  return out
}

/** Failures of a key the pool has just let go while others remain: tried again at once with the next. */
const refusedKey = new WeakSet<UpstreamError>()

/** Failures of the last credentials a provider holds (its only key, or none): the deployment, not the request, is at fault. */
const refusedCredentials = new WeakSet<UpstreamError>()

/** Whether the upstream refused every credential the provider holds (401/403 with no other key left): no call of this deployment can succeed. */
export function credentialsRefused(e: unknown): boolean {
  return e instanceof UpstreamError && refusedCredentials.has(e)
}

export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const exp = Math.min(RETRY.capMs, RETRY.baseMs * 2 ** attempt)
  return Math.round(exp * (0.5 + random() / 2))
}

/** An upstream's Retry-After, or its `retry-after-ms` (Azure OpenAI's) in whole seconds. */
function retryAfterOfHeaders(h: Headers): string | null {
  const given = h.get('retry-after')
  if (given) return given
  const ms = Number(h.get('retry-after-ms') || NaN)
  return Number.isFinite(ms) && ms >= 0 ? String(Math.ceil(ms / 1000)) : null
}

/** Retry-After is seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined | null, now = Date.now()): number | undefined {
  if (!value) return undefined
  const secs = Number(value)
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

const TIMED_OUT = Symbol('upstream timeout')
const PAST_DEADLINE = Symbol("the request's deadline")
const timedOut = (controller: AbortController) => controller.abort(TIMED_OUT)
const deadlinePassed = (controller: AbortController) => controller.abort(PAST_DEADLINE)
const ONCE = { once: true }

/** The failures that are the request's deadline passing: the pipeline tries no other deployment after one. */
const deadlineErrors = new WeakSet<UpstreamError>()

export function pastDeadline(e: unknown): boolean {
  return e instanceof UpstreamError && deadlineErrors.has(e)
}

function deadlineError(deadline: { ms: number }): UpstreamError {
  const e = new UpstreamError({ status: 504, message: `no upstream answered within the request's deadline (${deadline.ms / 1000} s)`, type: 'timeout' })
  deadlineErrors.add(e)
  return e
}

/** The characters of an upstream's error body read for its message. */
const ERROR_BODY_READ = 64 * 1024

async function attempt<T>(req: UpstreamRequest<T>, body: string | ChunkedBody): Promise<T> {
  const { provider, signal, auth } = req
  // the request's deadline, when it comes before the provider's timeout, ends the attempt instead
  const deadline = req.ctx?.deadline
  const left = deadline ? deadline.at - performance.now() : Infinity
  if (left <= 0) throw deadlineError(deadline!)
  const key = auth?.pool.take()
  const headers = key === undefined ? req.headers : { ...req.headers, ...auth!.headers(key) }
  const controller = new AbortController()
  const onCallerAbort = () => controller.abort(signal.reason)
  signal.addEventListener('abort', onCallerAbort, ONCE)
  const timer = left < provider.timeoutMs ? setTimeout(deadlinePassed, left, controller) : setTimeout(timedOut, provider.timeoutMs, controller)
  let committed = false
  const idle = new Idle(controller, provider.name, provider.timeoutMs)
  idle.onBegun = () => clearTimeout(timer)
  try {
    let res: Response
    try {
      const send: Transport = req.transport ?? fetch
      res = await send(provider.baseUrl + req.path, {
        method: 'POST',
        ...(typeof body === 'string'
          ? { headers, body }
          : { headers: { ...headers, 'content-length': String(body.length) }, body: chunkStream(body), duplex: 'half' }),
        signal: controller.signal,
        // a redirect would take the provider's key (Anthropic's x-api-key, Azure's api-key) and
        // the prompt to wherever it points: answered as the failure it is, never followed
        redirect: 'manual',
      } as RequestInit, { provider: provider.id, path: req.path, body: req.body, ctx: req.ctx })
    } catch (e) {
      throw transportError(provider, controller.signal, signal, e, deadline)
    }
    if (res.status >= 300 && res.status < 400) throw redirectRefused(provider.name, res.status)
    if (res.status < 200 || res.status > 299) {
      // only its message is wanted: an error body of any size (or one that inflates to gigabytes) costs at most this much
      const bodyText = await bodyPrefix(res, ERROR_BODY_READ).catch(() => '')
      const err = upstreamErrorFrom({
        provider: provider.name,
        upstreamStatus: res.status,
        bodyText,
        retryAfter: retryAfterOfHeaders(res.headers),
        apiKey: key ?? provider.apiKey,
      })
      if (res.status === 401 || res.status === 403) {
        if (key !== undefined && auth!.pool.reject(key, res.status)) refusedKey.add(err)
        else refusedCredentials.add(err)
      }
      throw err
    }
    let out: T
    try {
      out = await req.accept(res, idle)
    } catch (e) {
      // a caller that left while the reply's first events were read: its leaving stands (499),
      // whatever the cut read made of it (a translated stream's "connection closed", a 502)
      if (signal.aborted) throw signal.reason
      if (e instanceof UpstreamError) throw e
      throw ownFault(provider, controller.signal, signal, e) ?? transportError(provider, controller.signal, signal, e, deadline)
    }
    // one that left while a stream's opening was held has no stream to take: handed one, nobody
    // would read it, and its record would never be written
    if (signal.aborted) throw signal.reason
    committed = true
    idle.start()
    return out
  } finally {
    clearTimeout(timer)
    if (!committed) {
      // A failed attempt must not leave a half-read body (and its socket) behind.
      signal.removeEventListener('abort', onCallerAbort)
      if (!controller.signal.aborted) controller.abort()
    }
  }
}

/** Errors of the gateway's own process, not of the network or the upstream. */
const OWN_RESOURCES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE', 'ENOMEM', 'ENOBUFS'])

/**
 * A failure of the gateway's own code while it read a 2xx reply (a TypeError, a RangeError with
 * no code; the network's come with one, ECONNRESET): the upstream made the reply and bills it, so
 * it is not sent again (a retry would make and bill another), and no deployment is rested for it.
 * Undefined for any other failure.
 */
function ownFault(p: ProviderConfig, ours: AbortSignal, callers: AbortSignal, e: unknown): UpstreamError | undefined {
  if (callers.aborted || ours.aborted) return undefined
  if (!(e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError)) return undefined
  if ((e as { code?: unknown }).code !== undefined) return undefined
  return new UpstreamError({ status: 502, message: `the gateway failed reading the reply of upstream ${p.name}`, type: 'gateway_error' })
}

/** A fetch or body-read failure: the caller's abort passes through as is; the rest become UpstreamErrors. */
function transportError(p: ProviderConfig, ours: AbortSignal, callers: AbortSignal, e: unknown, deadline?: { ms: number }): unknown {
  if (callers.aborted) return callers.reason
  if (ours.aborted && ours.reason === PAST_DEADLINE) return deadlineError(deadline!)
  // a transport's own answer in the gateway's terms (a cassette miss) stands as it is
  if (e instanceof UpstreamError) return e
  if (ours.aborted && ours.reason === TIMED_OUT) {
    return new UpstreamError({ status: 504, message: `upstream ${p.name} did not answer within ${p.timeoutMs} ms`, type: 'timeout' })
  }
  const code = (e as { code?: string })?.code
  // the gateway's own machine is out of descriptors or memory: no fault of the upstream's, so
  // no other deployment is tried and none is rested; the client may try again shortly
  if (code !== undefined && OWN_RESOURCES.has(code)) {
    return new UpstreamError({ status: 503, message: `the gateway could not open a connection to upstream ${p.name}: it is out of resources (${code}); retry shortly`, type: 'gateway_resources', retryAfter: '1' })
  }
  return new UpstreamError(
    { status: 502, message: `could not reach upstream ${p.name}${code ? ` (${code})` : ''}`, type: 'connection_error' },
    { retryable: true },
  )
}

/**
 * POSTs to the upstream with retries. Resolves with what `accept` made of the first 2xx
 * answer; rejects with an UpstreamError (already mapped to the spec status) or, when the
 * caller aborted, with the abort reason.
 */
export async function callUpstream<T>(req: UpstreamRequest<T>): Promise<T> {
  let failed: { status: number; error: string; ms: number } | undefined
  for (let n = 0; ; n++) {
    const sent = performance.now()
    try {
      // the send before this one failed: said now, its time not counting the wait since
      if (failed) req.ctx?.resent?.(failed.status, failed.error, failed.ms)
      failed = undefined
      // a body sent in parts lets each part go as it is sent: a retry encodes it again
      return await attempt(req, typeof req.body === 'string' ? req.body : await encodeJson(req.body.json))
    } catch (e) {
      // another key of the pool, at once: the refusal was the key's, not the upstream's (the pool shrinks each time)
      if (e instanceof UpstreamError && refusedKey.has(e) && !req.signal.aborted) {
        failed = { status: e.status, error: e.message, ms: performance.now() - sent }
        n--
        continue
      }
      if (!(e instanceof UpstreamError) || !e.retryable || n >= req.provider.maxRetries || req.signal.aborted) throw e
      failed = { status: e.status, error: e.message, ms: performance.now() - sent }
      const hinted = retryAfterMs(e.retryAfter)
      if (hinted !== undefined && (hinted > RETRY.maxRetryAfterMs || req.ctx?.alternatives === true)) throw e
      // a wait past the request's deadline is cut short: the attempt after it fails at once
      const deadline = req.ctx?.deadline
      await sleep(Math.min(hinted ?? backoffMs(n), deadline ? Math.max(0, deadline.at - performance.now()) : Infinity), req.signal)
    }
  }
}

export function bodyOf(res: Response, provider: string): ReadableStream<Uint8Array> {
  if (!res.body) throw new UpstreamError({ status: 502, message: `upstream ${provider} sent an empty body`, type: 'empty_body' }, { retryable: true })
  return res.body
}

export async function readJson(res: Response, provider: string): Promise<unknown> {
  const text = await replyText(res, provider)
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    throw new UpstreamError({ status: 502, message: `upstream ${provider} sent a body that is not JSON`, type: 'invalid_body' }, { retryable: true })
  }
  // a reply is an object: `null`, a list or a number is no reply (read as one, it failed as a
  // TypeError, taken for a connection lost)
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new UpstreamError({ status: 502, message: `upstream ${provider} sent a body that is not a JSON object`, type: 'invalid_body' }, { retryable: true })
  // an error object sent with a 2xx status is an error all the same, never an empty reply
  const o = j as { error?: unknown; choices?: unknown; content?: unknown; output?: unknown } | null
  if (o !== null && typeof o === 'object' && o.error != null && !Array.isArray(o.choices) && !Array.isArray(o.content) && !Array.isArray(o.output)) {
    throw notAReplyError(`an error with status ${res.status}: ${errorSaid(text) ?? 'an error'}`, provider)
  }
  return j
}
