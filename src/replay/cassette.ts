// The cassette format: one JSON line per upstream exchange, in the order they happened.
//
//   {"key":"<match key>","at":"<ISO time>","provider":"openai","model":"gpt-4o-mini",
//    "request":{"path":"/v1/chat/completions","headers":{…},"body":{…the normalised body…}},
//    "response":{"status":200,"headers":{"content-type":"application/json"},"ms":412,"json":{…}}}
//
// A response body is kept as JSON (`json`, with `indent`, `ascii` and `eol` saying how the
// upstream laid it out: replayed byte for byte), as text when JSON would not give the same
// bytes back (a number written `1.0`), or as the
// SSE events of a stream (`events: [{ms, text}]`: each event's exact text and when it had
// arrived, in ms after the response began; `error` when the stream broke after them). A
// request body or response body larger than BLOB_BYTES is kept beside, in `blobs/<sha256>.json`,
// and named by `blob`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { UpstreamError } from '../ir/errors.ts'

export interface RecordedEvent {
  /** When the event's last byte had arrived, in ms after the response's headers. */
  ms: number
  /** The event exactly as sent (its blank line included). */
  text: string
}

/** A response body as kept. */
export type BodyPart =
  | JsonBody
  | { text: string }
  | { events: RecordedEvent[]; error?: string; code?: string }

/** JSON as the upstream wrote it: indented by `indent`, non-ASCII as `\uXXXX` (`ascii`), a newline at the end (`eol`). */
export interface JsonBody {
  json: unknown
  indent?: number
  ascii?: true
  eol?: true
}

export interface RecordedRequest {
  path: string
  headers?: Record<string, string>
  /** The normalised, scrubbed body: what its match key is taken of. */
  body?: unknown
  blob?: string
}

export type RecordedResponse = { status: number; headers: Record<string, string>; ms: number } & (BodyPart | { blob: string })

export interface CassetteEntry {
  key: string
  at: string
  provider: string
  model?: string
  request: RecordedRequest
  response: RecordedResponse
}

/** Past this, a body goes to the blobs folder (the line stays readable). */
export const BLOB_BYTES = 64 * 1024

/** A JSON text as JSON when it can be written back to the same bytes, else as text. */
export function jsonPart(text: string): BodyPart {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return { text }
  }
  // the layouts upstreams use: compact, or indented by 2 (OpenAI's), non-ASCII escaped or not
  for (const indent of [undefined, 2]) {
    for (const ascii of [undefined, true] as const) {
      const layout: JsonBody = { json: v, ...(indent ? { indent } : {}), ...(ascii ? { ascii } : {}) }
      const s = partText(layout)
      if (s === text) return layout
      if (s + '\n' === text) return { ...layout, eol: true }
    }
  }
  return { text }
}

/** The exact text of a JSON or text part. */
export function partText(p: JsonBody | { text: string }): string {
  if ('text' in p) return p.text
  let s = JSON.stringify(p.json, null, p.indent)
  if (p.ascii) s = s.replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
  return p.eol ? s + '\n' : s
}

/** The blobs folder of a cassette dir. */
export class Blobs {
  private readonly dir: string
  constructor(cassettes: string) {
    this.dir = join(cassettes, 'blobs')
  }

  /** `value` as it goes in an entry: itself, or `{ blob }` when its JSON is large. */
  keep<T>(value: T): T | { blob: string } {
    const text = JSON.stringify(value)
    if (text.length <= BLOB_BYTES) return value
    const hash = new Bun.CryptoHasher('sha256').update(text).digest('hex')
    const file = join(this.dir, `${hash}.json`)
    if (!existsSync(file)) {
      mkdirSync(this.dir, { recursive: true })
      writeFileSync(file, text)
    }
    return { blob: hash }
  }

  read(hash: string): unknown {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw unreadable(`cassette blob "${hash}" is not a sha256`)
    const file = join(this.dir, `${hash}.json`)
    try {
      return JSON.parse(readFileSync(file, 'utf8'))
    } catch (e) {
      throw unreadable(`cassette blob ${file} cannot be read: ${(e as Error).message}`)
    }
  }
}

/** A cassette the gateway cannot read: said as it is (a 500), not as an upstream out of reach. */
export function unreadable(message: string): UpstreamError {
  return new UpstreamError({ status: 500, message, type: 'cassette_unreadable' })
}
