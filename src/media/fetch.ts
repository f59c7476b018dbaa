// Fetching a media URL a request names (a PDF or text document, an image an upstream cannot
// take by URL), guarded: http(s) only; the name is resolved first and every address it has
// must be public (loopback, RFC 1918, link-local and cloud metadata, CGNAT, unique-local,
// unspecified, multicast, … are refused, IPv4 and IPv6, IPv4-mapped included), again on
// every redirect, which is followed by hand; a size cap read as a stream, and a timeout.
// Residual risk, said plainly: fetch() resolves the name again after our check, so a DNS
// answer that changes within that moment (rebinding) is not caught; a literal address is.
import { lookup as dnsLookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import { badRequest } from '../http/errors.ts'

export interface FetchPolicy {
  allowPrivate: boolean
  maxBytes: number
  timeoutMs: number
  /** Name → addresses (the system resolver by default). */
  lookup?: (host: string) => Promise<string[]>
  /** Addresses fetched although their class is refused (an operator's allow-list; tests' local server). */
  allowAddresses?: ReadonlySet<string>
}

const PUBLIC_RANGES = new Set(['unicast'])
const MAX_REDIRECTS = 5
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')

const systemLookup = async (host: string) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address)

/** Why an address may not be fetched, or null when it is public. */
export function refusedAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`
  let ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address()
  // Deprecated IPv4-compatible addresses (::a.b.c.d) carry an IPv4 address too, and
  // ipaddr.js classes them as unicast; nothing public lives there, so refuse the block.
  const range = ip.range()
  if (!PUBLIC_RANGES.has(range)) return `${address} is a ${range} address`
  if (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) return `${address} is an IPv4-compatible address`
  return null
}

async function checkHost(url: URL, policy: FetchPolicy, at: string): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${at}: refused: only http and https URLs can be fetched, not ${url.protocol.slice(0, 20)}`)
  if (policy.allowPrivate) return
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  let addresses: string[]
  if (ipaddr.isValid(host)) addresses = [host]
  else {
    try {
      addresses = await (policy.lookup ?? systemLookup)(host)
    } catch {
      throw badRequest(`${at}: could not resolve ${host.slice(0, 100)}`)
    }
    if (addresses.length === 0) throw badRequest(`${at}: could not resolve ${host.slice(0, 100)}`)
  }
  for (const a of addresses) {
    if (policy.allowAddresses?.has(a)) continue
    const why = refusedAddress(a)
    if (why) throw badRequest(`${at}: refused: ${why}${a === host ? '' : ` (${host.slice(0, 100)})`}`)
  }
}

export interface Fetched {
  bytes: Uint8Array
  /** The media type the server gave, without parameters ('' when none). */
  mediaType: string
}

/** The bytes at `rawUrl`, or a 400 naming `at` (the block's path in the request). */
export async function guardedFetch(rawUrl: string, policy: FetchPolicy, at: string): Promise<Fetched> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw badRequest(`${at}: not a valid URL`)
  }
  const signal = AbortSignal.timeout(policy.timeoutMs)
  try {
    for (let hop = 0; ; hop++) {
      await checkHost(url, policy, at)
      const res = await fetch(url, { redirect: 'manual', signal })
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        await res.body?.cancel().catch(() => {})
        if (hop >= MAX_REDIRECTS) throw badRequest(`${at}: more than ${MAX_REDIRECTS} redirects`)
        url = new URL(res.headers.get('location')!, url)
        continue
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {})
        throw badRequest(`${at}: fetching the URL failed with HTTP ${res.status}`)
      }
      return { bytes: await readCapped(res, policy.maxBytes, at), mediaType: (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() }
    }
  } catch (e) {
    if ((e as Error)?.name === 'HttpError') throw e
    if (signal.aborted) throw badRequest(`${at}: fetching the URL took longer than ${policy.timeoutMs} ms`)
    throw badRequest(`${at}: could not fetch the URL (${(e as Error)?.message?.slice(0, 120) ?? 'error'})`)
  }
}

async function readCapped(res: Response, max: number, at: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {})
    throw badRequest(`${at}: the document is larger than ${max} bytes`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body!.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw badRequest(`${at}: the document is larger than ${max} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}
