// A multipart/form-data reader whose part bodies are streams. @remix-run/multipart-parser
// 0.16 keeps every part's content in memory until its closing boundary (see #append in
// its lib/multipart.ts), so a 500 MiB upload would be held whole. Here the boundary
// scanning is ours and the part headers are still decoded by that library, which
// handles quoting and RFC 5987 `filename*`.
import { MultipartParseError, parseMultipart } from '@remix-run/multipart-parser'

export { MultipartParseError }

export interface PartHead {
  name?: string
  filename?: string
  /** The part's own Content-Type, if it sent one. */
  contentType?: string
}

export interface StreamedPart extends PartHead {
  /**
   * The part's bytes as they arrive. Read it before asking for the next part; whatever
   * is left unread is skipped. Breaking out of a loop over it does not lose position.
   */
  body: AsyncIterable<Uint8Array>
}

export interface MultipartLimits {
  maxHeaderSize: number
  maxParts: number
}

const CRLF = Buffer.from('\r\n')
const CRLF2 = Buffer.from('\r\n\r\n')
const HEAD_BOUNDARY = 'sy-head-only'

/** Bytes pulled from a stream on demand, with what was not consumed yet. */
class ByteReader {
  private buf: Buffer = Buffer.alloc(0)
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  get length() {
    return this.buf.length
  }
  at(i: number) {
    return this.buf[i]
  }
  indexOf(needle: Buffer, from = 0) {
    return this.buf.indexOf(needle, from)
  }
  take(n: number): Uint8Array {
    const out = this.buf.subarray(0, n)
    this.buf = this.buf.subarray(n)
    return out
  }
  /** Where the longest tail of the buffer that is a proper prefix of `needle` starts (length if none). */
  partialMatchAt(needle: Buffer): number {
    const len = this.buf.length
    for (let i = Math.max(0, len - needle.length + 1); i < len; i++) {
      if (this.buf[i] === needle[0] && this.buf.subarray(i).equals(needle.subarray(0, len - i))) return i
    }
    return len
  }
  skip(n: number) {
    this.buf = this.buf.subarray(n)
  }
  /** Appends the next chunk; false at the end of the stream. */
  async fill(): Promise<boolean> {
    const { done, value } = await this.reader.read()
    if (done) return false
    const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    return true
  }
  async need(n: number, what: string) {
    while (this.buf.length < n) if (!(await this.fill())) throw new MultipartParseError(`Multipart body ended ${what}`)
  }
  cancel() {
    this.reader.cancel().catch(() => {})
  }
}

/**
 * Why a part's header block is not one (a bare CR or LF, a line separator, a line that is no `name: value`), or
 * undefined. A raw line break inside a quoted filename ends its header line early: read as
 * given, `filename="a<LF>b.txt"` was stored as `"a`.
 */
function malformedHead(raw: Uint8Array): string | undefined {
  const head = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1')
  if (/\r(?!\n)|(?<!\r)\n/.test(head)) return 'a bare CR or LF in a header'
  // U+2028 and U+2029 end a line to the library's reading of the head: `filename="a<U+2028>b.txt"` was stored as `"a`
  if (/\u2028|\u2029/.test(new TextDecoder().decode(raw))) return 'a line separator (U+2028 or U+2029) in a header, which no filename or field name may hold'
  for (const line of head.split('\r\n')) if (line !== '' && !/^[!#$%&'*+.^`|~\w-]+:/.test(line)) return `a header line that is not "name: value": ${JSON.stringify(line.slice(0, 60))}`
  return undefined
}

function decodeHead(raw: Uint8Array): PartHead {
  const bad = malformedHead(raw)
  if (bad) throw new MultipartParseError(`Multipart part headers are malformed: ${bad}`)
  const msg = Buffer.concat([Buffer.from(`--${HEAD_BOUNDARY}\r\n`), raw, Buffer.from(`\r\n\r\n\r\n--${HEAD_BOUNDARY}--`)])
  try {
    for (const part of parseMultipart(msg, { boundary: HEAD_BOUNDARY })) {
      return { name: part.name, filename: quotedFilename(raw) ?? part.filename, contentType: part.headers['content-type'] || undefined }
    }
  } catch (e) {
    throw new MultipartParseError(`Multipart part headers are malformed: ${(e as Error).message}`)
  }
  return {}
}

/**
 * `filename="…"` read as the quoted-string it is: `\"` is a quote and `\\` a backslash
 * (the library stored `a\"b.txt` as `a`). undefined when there is no escape to read
 * (the library's answer stands, `filename*` included).
 */
export function quotedFilename(raw: Uint8Array): string | undefined {
  const head = new TextDecoder().decode(raw)
  const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1]
  if (!disposition || /filename\*=/i.test(disposition)) return undefined
  const m = /;\s*filename="((?:[^"\\]|\\.)*)"/i.exec(disposition)
  if (!m || !m[1]!.includes('\\')) return undefined
  return m[1]!.replace(/\\(.)/g, '$1')
}

/** The bytes up to the next delimiter, yielded as they arrive; keeps its place across loops. */
function partBody(r: ByteReader, delimiter: Buffer) {
  let done = false
  const iterator: AsyncIterator<Uint8Array> = {
    async next() {
      while (!done) {
        const i = r.indexOf(delimiter)
        if (i >= 0) {
          const value = r.take(i)
          r.skip(delimiter.length)
          done = true
          if (value.length > 0) return { done: false, value }
          break
        }
        // hold back only a tail that could be the start of a delimiter split across
        // chunks; usually there is none, and the next chunk is then used without a copy
        const emit = r.partialMatchAt(delimiter)
        if (emit > 0) return { done: false, value: r.take(emit) }
        if (!(await r.fill())) throw new MultipartParseError('Multipart body ended inside a part')
      }
      return { done: true, value: undefined }
    },
  }
  return {
    // no `return` method on purpose: a consumer that stops early must not end the part
    [Symbol.asyncIterator]: () => iterator,
    async drain() {
      while (!(await iterator.next()).done) {}
    },
  }
}

export async function* readMultipart(
  stream: ReadableStream<Uint8Array>,
  boundary: string,
  limits: MultipartLimits,
): AsyncGenerator<StreamedPart, void, undefined> {
  const r = new ByteReader(stream.getReader())
  const opening = Buffer.from(`--${boundary}`)
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  try {
    // preamble: anything before the first boundary is ignored (RFC 2046)
    for (;;) {
      const i = r.indexOf(opening)
      if (i >= 0) {
        r.skip(i + opening.length)
        break
      }
      if (r.length > limits.maxHeaderSize) throw new MultipartParseError('Multipart body does not start with its boundary')
      if (!(await r.fill())) throw new MultipartParseError('Multipart body has no boundary')
    }
    for (let count = 0; ; ) {
      await r.need(2, 'after a boundary')
      if (r.at(0) === 0x2d && r.at(1) === 0x2d) return
      // transport padding may sit between the boundary and its line break
      let eol: number
      while ((eol = r.indexOf(CRLF)) < 0) {
        if (r.length > 256) throw new MultipartParseError('Multipart boundary line is malformed')
        await r.need(r.length + 1, 'in a boundary line')
      }
      r.skip(eol)
      // from the boundary's CRLF, so that an empty header block is CRLF CRLF at 0
      let end: number
      while ((end = r.indexOf(CRLF2)) < 0) {
        if (r.length > limits.maxHeaderSize) {
          throw new MultipartParseError(`Multipart part headers exceed ${limits.maxHeaderSize} bytes`)
        }
        await r.need(r.length + 1, 'inside part headers')
      }
      if (end > limits.maxHeaderSize) throw new MultipartParseError(`Multipart part headers exceed ${limits.maxHeaderSize} bytes`)
      const head = end > 2 ? decodeHead(r.take(end).subarray(2)) : (r.skip(end), {})
      r.skip(4)
      if (++count > limits.maxParts) throw new MultipartParseError(`Multipart body has more than ${limits.maxParts} parts`)
      const body = partBody(r, delimiter)
      yield { ...head, body }
      await body.drain()
    }
  } finally {
    r.cancel()
  }
}
