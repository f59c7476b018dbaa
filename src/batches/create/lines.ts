// A JSONL source as lines, read as a stream: only the line being read is ever held, and a
// line past the limit is refused as soon as it is known to be too long (never buffered to
// its end). Pure: bytes in, numbered lines out, or a 400 that names the line.
import { badRequest } from '../../http/errors.ts'

export interface Line {
  /** 1-based, as editors count. */
  n: number
  text: string
}

const NL = 0x0a
const CR = 0x0d

/**
 * The lines of `source`, each at most `maxLineBytes` bytes (UTF-8, without its newline; a
 * CRLF's CR is not counted), and at most `maxTotalBytes` in all. Invalid UTF-8 is a 400.
 */
export async function* jsonlLines(source: AsyncIterable<Uint8Array>, limits: { maxLineBytes: number; maxTotalBytes: number }): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let parts: Uint8Array[] = []
  let held = 0
  let total = 0
  let n = 1
  const lineOf = (bytes: Uint8Array): Line => {
    let end = bytes.byteLength
    if (end > 0 && bytes[end - 1] === CR) end--
    if (end > limits.maxLineBytes) throw tooLong(n, limits.maxLineBytes)
    let text: string
    try {
      text = decoder.decode(bytes.subarray(0, end))
    } catch {
      throw badRequest(`line ${n}: not valid UTF-8`)
    }
    return { n: n++, text }
  }
  const joined = (tail: Uint8Array): Uint8Array => {
    if (parts.length === 0) return tail
    const out = new Uint8Array(held + tail.byteLength)
    let at = 0
    for (const p of parts) {
      out.set(p, at)
      at += p.byteLength
    }
    out.set(tail, at)
    parts = []
    held = 0
    return out
  }
  for await (const chunk of source) {
    total += chunk.byteLength
    if (total > limits.maxTotalBytes) throw badRequest(`the input is larger than ${limits.maxTotalBytes} bytes, the limit of a batch`)
    let from = 0
    for (let nl = chunk.indexOf(NL, from); nl >= 0; nl = chunk.indexOf(NL, from)) {
      yield lineOf(joined(chunk.subarray(from, nl)))
      from = nl + 1
    }
    if (from < chunk.byteLength) {
      const rest = chunk.subarray(from)
      // +1: the CR of a CRLF may be among the held bytes
      if (held + rest.byteLength > limits.maxLineBytes + 1) throw tooLong(n, limits.maxLineBytes)
      // a copy: the source may reuse its buffer for the next chunk
      parts.push(rest.slice())
      held += rest.byteLength
    }
  }
  if (held > 0) yield lineOf(joined(new Uint8Array(0)))
}

function tooLong(n: number, max: number) {
  return badRequest(`line ${n}: longer than ${max} bytes, the limit of a JSONL line`)
}
