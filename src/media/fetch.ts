// Fetching a URL a request names (a PDF or text document; an image an upstream cannot take
// by URL), guarded against reaching the gateway's own network (SSRF):
//  - http and https only;
//  - the name is resolved here, every address it has must be public (address.ts), and the
//    connection goes to the address that was checked: the URL's host is swapped for it, the
//    Host header and the TLS server name (SNI and certificate check) keep the name, so a DNS
//    answer that changes between check and connect (rebinding) cannot redirect the request;
//  - redirects are followed by hand, at most MAX_REDIRECTS, each hop checked the same way;
//  - one deadline covers lookups, every hop and the body; the body is read as a stream and
//    abandoned once past the size cap (Content-Length is not trusted, compressed bodies are
//    counted after decompression).
// Every failure is a 400 naming `at`, the block's path in the client's request.
import { lookup as dnsLookup } from 'node:dns/promises'
import type { Config } from '../config/load.ts'
import { badRequest, HttpError } from '../http/errors.ts'
import { canonicalAddress, refusedAddress } from './address.ts'

export interface FetchPolicy {
  /** Skip the address check (an operator whose documents live on a private network). */
  allowPrivate: boolean
  maxBytes: number
  /** The most one request inlines, all its sources together (undefined: no bound past each source's). */
  maxRequestBytes?: number
  timeoutMs: number
  /** Name → addresses; the system resolver by default (tests inject names of their own). */
  lookup?: (host: string) => Promise<string[]>
  /** Addresses treated as public although their class is refused (tests' local servers). */
  allowAddresses?: ReadonlySet<string>
  /** Certificates (PEM) trusted for https instead of the system's (a private CA; tests). */
  ca?: string
}

export interface Fetched {
  bytes: Uint8Array
  /** The media type the server gave, lower-case, without parameters ('' when none). */
  mediaType: string
  /** The `charset` parameter of Content-Type, when given. */
  charset?: string
  /** The URL the bytes finally came from (after redirects). */
  url: URL
}

export const MAX_REDIRECTS = 5

export function fetchPolicy(config: Pick<Config, 'media'>): FetchPolicy {
  return { allowPrivate: config.media.allowPrivateUrls, maxBytes: config.media.maxBytes, maxRequestBytes: config.media.maxRequestBytes, timeoutMs: config.media.timeoutMs }
}

const clip = (s: string, n = 100) => (s.length > n ? s.slice(0, n) + '…' : s)

const systemLookup = async (host: string) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address)

/** `p`, or a rejection as soon as `signal` aborts (dns.lookup takes no signal). */
function raced<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop))
  })
}

/** The checked addresses to connect to for `url` (IPv4 first), or a 400. Empty: connect by name. */
async function checkedAddresses(url: URL, policy: FetchPolicy, at: string, signal: AbortSignal): Promise<string[]> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${at}: refused: only http and https URLs can be fetched, not ${clip(url.protocol, 20)}`)
  if (policy.allowPrivate) return []
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  let addresses: string[]
  if (canonicalAddress(host) !== null) addresses = [host]
  else {
    try {
      addresses = await raced((policy.lookup ?? systemLookup)(host), signal)
    } catch (e) {
      if (signal.aborted) throw e
      addresses = []
    }
    if (addresses.length === 0) throw badRequest(`${at}: could not resolve ${clip(host)}`)
  }
  // Every address must pass, not just the one we would use: a name is refused as a whole.
  for (const a of addresses) {
    if (policy.allowAddresses?.has(a) || policy.allowAddresses?.has(canonicalAddress(a) ?? '')) continue
    const why = refusedAddress(a)
    if (why) throw badRequest(`${at}: refused: ${why}${a === host ? '' : ` (${clip(host)})`}`)
  }
  return addresses.map((a) => canonicalAddress(a)!).sort((a, b) => Number(a.includes(':')) - Number(b.includes(':')))
}

/** One request to `url`, connected to `address` (a checked one) while keeping the name. */
function pinnedFetch(url: URL, address: string | undefined, signal: AbortSignal, ca: string | undefined): Promise<Response> {
  const init: BunFetchRequestInit = { redirect: 'manual', signal }
  const tls: BunFetchRequestInitTLS = {}
  if (ca !== undefined) tls.ca = ca
  let target = url
  if (address !== undefined) {
    target = new URL(url)
    target.hostname = address.includes(':') ? `[${address}]` : address
  }
  if (target.hostname !== url.hostname) {
    init.headers = { host: url.host }
    // the certificate is checked against the name, as if we had connected by name
    if (url.protocol === 'https:' && canonicalAddress(url.hostname.replace(/^\[|\]$/g, '')) === null) tls.serverName = url.hostname
  }
  if (url.protocol === 'https:' && Object.keys(tls).length > 0) init.tls = tls
  return fetch(target, init)
}

/** The first address that answers; a connection failure moves on to the next one. */
async function connect(url: URL, addresses: string[], signal: AbortSignal, ca: string | undefined): Promise<Response> {
  if (addresses.length === 0) return pinnedFetch(url, undefined, signal, ca)
  let last: unknown
  for (const a of addresses) {
    try {
      return await pinnedFetch(url, a, signal, ca)
    } catch (e) {
      if (signal.aborted) throw e
      last = e
    }
  }
  throw last
}

/** The bytes at `rawUrl`, or a 400 naming `at`. `signal` (the client's) cancels the fetch. */
export async function guardedFetch(rawUrl: string, policy: FetchPolicy, at: string, signal?: AbortSignal): Promise<Fetched> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw badRequest(`${at}: not a valid URL`)
  }
  const deadline = AbortSignal.timeout(policy.timeoutMs)
  const all = signal ? AbortSignal.any([deadline, signal]) : deadline
  try {
    for (let hop = 0; ; hop++) {
      const res = await connect(url, await checkedAddresses(url, policy, at, all), all, policy.ca)
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
      if (location !== null) {
        await res.body?.cancel().catch(() => {})
        if (hop >= MAX_REDIRECTS) throw badRequest(`${at}: more than ${MAX_REDIRECTS} redirects`)
        try {
          url = new URL(location, url)
        } catch {
          throw badRequest(`${at}: a redirect to an invalid URL`)
        }
        continue
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {})
        throw badRequest(`${at}: fetching the URL failed with HTTP ${res.status}`)
      }
      const [type = '', ...params] = (res.headers.get('content-type') ?? '').split(';')
      const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)/i.exec(p)?.[1]).find(Boolean)
      return { bytes: await readCapped(res, policy.maxBytes, at), mediaType: type.trim().toLowerCase(), charset, url }
    }
  } catch (e) {
    if (e instanceof HttpError) throw e
    if (deadline.aborted) throw badRequest(`${at}: fetching the URL took longer than ${policy.timeoutMs} ms`)
    if (signal?.aborted) throw badRequest(`${at}: the request was cancelled while fetching the URL`)
    throw badRequest(`${at}: could not fetch the URL (${clip(String((e as Error)?.message ?? e), 160)})`)
  }
}

async function readCapped(res: Response, max: number, at: string): Promise<Uint8Array> {
  const tooBig = () => badRequest(`${at}: the content is larger than ${max} bytes`)
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > max) {
    await res.body?.cancel().catch(() => {})
    throw tooBig()
  }
  if (!res.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw tooBig()
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, size)
}
