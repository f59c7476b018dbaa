// An upstream's JSON reply, read whole (it is parsed whole) but never past a bound: a compressed
// reply can inflate to gigabytes, which `res.text()` would hold until the process had no memory.
import { UpstreamError } from '../ir/errors.ts'

/** The largest JSON reply read: far past any real one (128 choices of 128k tokens is about 64 MB). */
export const MAX_REPLY_BYTES = 128 * 1024 * 1024
/** The most a gzip or deflate body inflates (deflate's own limit); brotli and zstd have none to speak of. */
const DEFLATE_RATIO = 1032

/**
 * Whether the reply's size is bounded by its headers: a declared length, and an encoding whose
 * inflation is bounded, under `max`. Such a body is read natively, at once (the common case).
 */
function boundedByHeaders(res: Response, max: number): boolean {
  const length = Number(res.headers.get('content-length') ?? NaN)
  if (!Number.isFinite(length)) return false
  const encoding = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase()
  if (encoding === 'identity' || encoding === '') return length <= max
  if (encoding === 'gzip' || encoding === 'deflate' || encoding === 'x-gzip') return length * DEFLATE_RATIO <= max
  return false
}

function replyTooLarge(provider: string | undefined, max: number): UpstreamError {
  const who = provider === undefined ? '' : `${provider} `
  return new UpstreamError({ status: 502, message: `upstream ${who}sent a reply larger than ${max} bytes, which the gateway does not read`, type: 'reply_too_large' }, { retryable: false })
}

/** The reply's text; past `max` bytes (as inflated) the read stops and a 502 says why. */
export async function replyText(res: Response, provider?: string, max = MAX_REPLY_BYTES): Promise<string> {
  if (!res.body || boundedByHeaders(res, max)) return res.text()
  const reader = res.body.getReader()
  const parts: Uint8Array[] = []
  let bytes = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    bytes += r.value.byteLength
    if (bytes > max) {
      reader.cancel().catch(() => {})
      throw replyTooLarge(provider, max)
    }
    parts.push(r.value)
  }
  // decoded as `res.text()` decodes (a byte-order mark dropped)
  return new TextDecoder().decode(Buffer.concat(parts, bytes))
}
