// Generation bodies: the size limit is decided from Content-Length up front, or while
// reading a chunked body, without reading the rest; malformed JSON is a 400 that says why.
import { isUtf8 } from 'node:buffer'
import { HttpError } from './errors.ts'
import { MAX_BODY_NODES, MAX_BODY_VALUES, parseJsonSafe } from './json-safe.ts'
import { checkElsewhere, mayHoldMorePartsSoon } from './parts.ts'
import { turnOfItsOwn } from '../lib/turn.ts'
import { bodyClock, tooSlow, withinBodyTime } from './body-deadline.ts'
import { BodyShare } from './body-budget.ts'
import { requestInfo } from './context.ts'
import { inflated } from './inflate.ts'

export { checkJsonValue, MAX_BODY_NODES, MAX_BODY_VALUES, MAX_JSON_DEPTH, parseJsonSafe } from './json-safe.ts'

function tooLarge(limit: number) {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes`)
}

/** Content-Encoding → the format of DecompressionStream that reads it (in a worker: inflate.ts). */
const DECODERS: Record<string, CompressionFormat> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'brotli' as CompressionFormat, zstd: 'zstd' as CompressionFormat }

/**
 * A request's body as the client meant it: a compressed one (Content-Encoding gzip, deflate,
 * br or zstd; Codex's request compression sends zstd) decompressed as it is read, so every
 * bound on its size holds for what it decompresses to, and the request thread only passes chunks.
 * Another encoding is a 415 naming the header.
 */
export function decodedBody(request: Request): { body: ReadableStream<Uint8Array> | null; encoding?: string } {
  const enc = request.headers.get('content-encoding')?.trim().toLowerCase()
  if (!enc || enc === 'identity') return { body: request.body }
  const format = Object.hasOwn(DECODERS, enc) ? DECODERS[enc] : undefined
  if (!format) throw new HttpError(415, `Content-Encoding: ${enc.slice(0, 40)} is not one this gateway reads; send gzip, deflate, br, zstd or an uncompressed body`)
  return { body: request.body && inflated(request.body, format), encoding: enc }
}

/**
 * `use` of a body's text (refused, 413, past `limit` bytes), the body's share of the bytes read
 * at once (body-budget.ts) held until `use` ends, however it ends.
 */
export async function withBodyText<T>(request: Request, limit: number, use: (text: string) => T | Promise<T>): Promise<T> {
  const share = new BodyShare(requestInfo(request).key?.id)
  try {
    return await use(await readBodyText(request, limit, share))
  } finally {
    share.release()
  }
}

/** A body's text, refused (413) past `limit` bytes, its size taken into `share` before it is read. Not itself async: the usual body, of a declared length, costs no frame of its own. */
function readBodyText(request: Request, limit: number, share: BodyShare): Promise<string> {
  try {
    if (request.headers.has('content-encoding')) {
      const { body, encoding } = decodedBody(request)
      if (encoding) {
        // what it declares (compressed) is taken now; what it decompresses to past that, as it comes
        share.reached(Math.min(declaredLength(request), limit))
        return readStream(body, limit, encoding, request, share)
      }
    }
    const declared = request.headers.get('content-length')
    if (declared !== null) {
      const n = Number(declared)
      if (Number.isFinite(n) && n > limit) return Promise.reject(tooLarge(limit))
      if (Number.isFinite(n)) share.reached(n)
      // Bun holds a body to its declared length, so it cannot grow past the limit. A short one is
      // read whole, with the time its length earns; a long one is read in parts, each earning its own.
      if (Number.isFinite(n) && n <= WHOLE_READ) return withinBodyTime(request.bytes(), n).then((b) => utf8Text(b, request))
    }
  } catch (e) {
    return Promise.reject(e)
  }
  return readStream(request.body, limit, undefined, request, share)
}

function declaredLength(request: Request): number {
  const n = Number(request.headers.get('content-length') ?? 0)
  return Number.isFinite(n) ? n : 0
}

/**
 * A body's bytes as text: JSON is UTF-8, and bytes that are not (Latin-1 text, a stray byte, an
 * encoded surrogate) are a 400 saying where, never replaced by U+FFFD on the way upstream.
 */
function utf8Text(bytes: Uint8Array, request: Request): string {
  if (!isUtf8(bytes)) throw notUtf8(bytes, request)
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  // a leading byte-order mark is left out, as Request.text() leaves it out
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

function notUtf8(bytes: Uint8Array, request: Request): HttpError {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers.get('content-type') ?? '')?.[1]
  const said = charset && !/^utf-?8$/i.test(charset) ? ` (the Content-Type says charset=${charset.slice(0, 40)}; send UTF-8)` : ''
  return new HttpError(400, `Request body is not valid UTF-8 at byte ${firstInvalidUtf8(bytes)}${said}`)
}

/**
 * Where the first byte that is no part of well-formed UTF-8 is, in a body known to hold one: the
 * native decoder finds its 64 KiB step, and only that step is read here byte by byte (a body of
 * 32 MiB with a bad last byte holds the thread for no longer than a small one).
 */
function firstInvalidUtf8(b: Uint8Array): number {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const STEP = 65536
  let at = 0
  try {
    for (; at < b.length; at += STEP) decoder.decode(b.subarray(at, at + STEP), { stream: true })
    decoder.decode()
    return b.length
  } catch {
    // what the decoder still held of a character begun before this step (at most 3 bytes), from
    // that character's start: everything before it was well-formed
    let from = Math.max(0, Math.min(at, b.length) - 3)
    for (let k = 0; k < 3 && from > 0 && (b[from]! & 0xc0) === 0x80; k++) from--
    return scanUtf8(b, from, Math.min(b.length, at + STEP))
  }
}

/** The first byte from `from` (a character's start) to `to` that breaks UTF-8; `to` when none does. */
function scanUtf8(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; ) {
    const c = b[i]!
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0
    if (n === 0) return i
    // the second byte's range is narrower after E0, ED, F0 and F4 (no overlongs, surrogates, or past U+10FFFF)
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf
    for (let k = 1; k < n; k++) {
      const d = b[i + k]
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i
    }
    i += n
  }
  return to
}

/** Bodies up to this declared length are read in one call: the time they may take is known up front. */
const WHOLE_READ = 256 * 1024

/** A body read to its end, refused (413) once past `limit` bytes; a compressed one's failure to decompress is a 400 naming its encoding. */
async function readStream(body: ReadableStream<Uint8Array> | null, limit: number, encoding: string | undefined, request: Request, share: BodyShare): Promise<string> {
  if (!body) return ''
  const reader = body.getReader()
  let late = false
  const clock = bodyClock(() => {
    late = true
    reader.cancel().catch(() => {})
  })
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>
      try {
        step = await reader.read()
      } catch (e) {
        if (late) throw tooSlow()
        if (encoding === undefined) throw e
        throw new HttpError(400, `Content-Encoding: ${encoding}: the body could not be decompressed (${(e as Error)?.message ?? String(e)})`)
      }
      const { done, value } = step
      if (late) throw tooSlow()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        reader.cancel().catch(() => {})
        throw tooLarge(limit)
      }
      try {
        share.reached(size)
      } catch (e) {
        reader.cancel().catch(() => {})
        throw e
      }
      clock.arrived(value.byteLength)
      chunks.push(value)
    }
  } finally {
    clock.done()
  }
  return utf8Text(Buffer.concat(chunks), request)
}

/** Past this many characters a body's parse, checks and decoding wait for a turn of their own. */
const LARGE_BODY = 64 * 1024

const BODY_PARTS = { nodes: MAX_BODY_NODES, values: MAX_BODY_VALUES }

/** A generation body (or another one-request body): bounded in bytes, and in parts (MAX_BODY_NODES, MAX_BODY_VALUES); its share of the bytes read at once held until it is parsed. */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  // withBodyText's work, written out: the hot path pays no callback's promise
  const share = new BodyShare(requestInfo(request).key?.id)
  try {
    const text = await readBodyText(request, limit, share)
    if (text.trim() === '') throw new HttpError(400, 'Request body is empty: expected a JSON object')
    if (text.length > LARGE_BODY) await turnOfItsOwn()
    // a body of a megabyte or less is scanned at once: no promise to wait for
    const more = mayHoldMorePartsSoon(text, BODY_PARTS)
    if (more === true || (more !== false && (await more))) await checkElsewhere(text, BODY_PARTS, 'JSON body')
    return parseJsonSafe(text, 'JSON body', MAX_BODY_NODES, MAX_BODY_VALUES)
  } finally {
    share.release()
  }
}
