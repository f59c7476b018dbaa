// Inline media a client sends as base64 (a chat `data:` URL, a Responses `image_url` or
// `file_data`, a messages `base64` source), checked before any upstream call: empty data,
// text that is not base64, an image format no upstream takes, or bytes that are not what
// they were declared as are a 400 naming the field. The bytes decide as they do for an
// uploaded file (inline.ts): an image declared as another image format is that format; one
// declared as an image or a PDF whose bytes are none is refused. The data is never decoded
// whole: one scan of its characters (9–16 ms for 20 MB here, a tenth of parsing the body)
// and its first bytes for the type.
import { badRequest } from '../http/errors.ts'
import { IMAGE_TYPES, isPdf, sniffImage } from './inline.ts'

/** The first character that is not of the base64 alphabet (padding included). */
const OUTSIDE = /[^A-Za-z0-9+/]/
const HEADER = /^data:([^;,]+)((?:;[^;,]*)*);base64$/i
const IMAGES: ReadonlySet<string> = new Set(IMAGE_TYPES)
const clip = (s: string) => JSON.stringify(s.length > 64 ? s.slice(0, 64) + '…' : s)

export interface DataUrl {
  mediaType: string
  data: string
}

/** A base64 `data:` URL's media type and data, or a 400 naming `at`; the header is read apart, never the data by a pattern. */
export function parseDataUrl(url: string, at: string): DataUrl {
  const comma = url.indexOf(',')
  const m = comma < 0 || comma > 300 ? null : HEADER.exec(url.slice(0, comma))
  if (!m) throw badRequest(`${at}: expected a base64 data URL (data:<media type>;base64,<data>) or an https:// URL`)
  return { mediaType: m[1]!, data: url.slice(comma + 1) }
}

/** The URL-safe alphabet's own characters: data in it is refused (only the standard alphabet is taken), saying what to send instead. */
const URL_SAFE: ReadonlySet<string> = new Set(['-', '_'])
const URL_SAFE_HINT = ': the URL-safe alphabet; send standard base64, with + and / for - and _'

/** Line breaks and spaces, as base64 wrapped at 76 characters holds (MIME's form): skipped, as decoders do. */
const SPACE = /[\t\n\r ]/
const SPACES = /[\t\n\r ]+/g

/**
 * `data` unless it is not non-empty, padded or unpadded standard base64: a 400 naming `at`.
 * Wrapped data comes back without its line breaks (a copy, only for data sent so), which is
 * what goes upstream: a decoder skips them, an upstream's check may not.
 */
export function checkBase64(data: string, at: string): string {
  if (data.length === 0) throw badRequest(`${at}: the base64 data is empty`)
  const bad = OUTSIDE.exec(data)
  if (bad && SPACE.test(data[bad.index]!)) return checkBase64(data.replace(SPACES, ''), at)
  const end = bad ? bad.index : data.length
  const tail = data.slice(end)
  const ok = (tail === '' && end % 4 !== 1) || ((tail === '=' || tail === '==') && data.length % 4 === 0)
  if (!ok) {
    const what = bad && tail !== '=' && tail !== '==' ? `${clip(data[end]!)} at character ${end}${URL_SAFE.has(data[end]!) ? URL_SAFE_HINT : ''}` : `a length of ${data.length} characters, which no padding explains`
    throw badRequest(`${at}: not valid base64 data (${what})`)
  }
  return data
}

/** The first bytes of base64 `data` (enough for a signature), decoded without the rest. */
const head = (data: string) => Buffer.from(data.slice(0, 16), 'base64')

/**
 * The media type and data inline base64 is to go as, or a 400 naming `at`. An image (an image
 * part, or a document declared as an image) must be PNG, JPEG, GIF or WebP, and is the one its
 * bytes are; a document declared as a PDF must be one. Other document types are the target's
 * to judge (the adapters').
 */
export function inlineMedia(mediaType: string, given: string, at: string, part: 'image' | 'document'): { mediaType: string; data: string } {
  const data = checkBase64(given, at)
  const declared = mediaType.toLowerCase().split(';')[0]!.trim()
  const bytes = head(data)
  if (part === 'image' || declared.startsWith('image/')) {
    if (!IMAGES.has(declared)) throw badRequest(`${at}: ${clip(declared)} is not an image format the upstreams take (PNG, JPEG, GIF, WebP)`)
    const image = sniffImage(bytes)
    if (!image) throw badRequest(`${at}: declared as ${declared}, but the content is not a PNG, JPEG, GIF or WebP image`)
    return { mediaType: image === declared ? mediaType : image, data }
  }
  if (declared === 'application/pdf' && !isPdf(bytes)) throw badRequest(`${at}: declared as a PDF, but the content is not one`)
  return { mediaType, data }
}

/** A base64 `data:` URL checked (inlineMedia), with the media type its bytes are and its data unwrapped: `url` itself when it needs neither. */
function checkedDataUrl(url: string, at: string, part: 'image' | 'document'): string {
  const given = parseDataUrl(url, at)
  const { mediaType, data } = inlineMedia(given.mediaType, given.data, at, part)
  return mediaType === given.mediaType && data === given.data ? url : `data:${mediaType};base64,${data}`
}

/**
 * `o[key]`, when it is a `data:` URL, checked (checkedDataUrl) and set to what goes upstream, in
 * the body itself: the pass-through path sends the body as it came. Anything else is left alone.
 */
export function checkDataUrlIn(o: Record<string, unknown>, key: string, at: string, part: 'image' | 'document'): void {
  const v = o[key]
  if (typeof v === 'string' && v.startsWith('data:')) o[key] = checkedDataUrl(v, at, part)
}
