// A JSON upload `{content, filename, mime_type?}`: `content` is plain text, or a data URL
// (`data:<mime>;base64,<data>`) whose bytes are decoded before storing, so a download
// returns the raw bytes with the URL's type. Pure.
import { badRequest } from '../http/errors.ts'
import { checkFilename, checkMime, checkPurpose, expiry, guessMime, type UploadMeta } from './upload-params.ts'
import { wellFormed } from '../lib/operator-text.ts'

const FIELDS = new Set(['content', 'filename', 'mime_type', 'purpose', 'expires_after', 'expires_in_seconds'])

const DATA_URL = /^data:([^,]*?),/i
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

export interface DecodedContent {
  bytes: Uint8Array
  /** The data URL's type, when content was a data URL that named one. */
  mimeType?: string
}

export function decodeContent(content: string): DecodedContent {
  const m = DATA_URL.exec(content)
  if (!m) {
    if (!wellFormed(content)) throw badRequest('content: holds half of a surrogate pair (a \\ud800–\\udfff escape alone), which is no text; send the file as a base64 data URL if it is bytes')
    return { bytes: new TextEncoder().encode(content) }
  }
  const params = m[1].split(';').map((p) => p.trim())
  const isBase64 = params.length > 1 && params[params.length - 1].toLowerCase() === 'base64'
  const mediaParts = isBase64 ? params.slice(0, -1) : params
  const mimeType = mediaParts[0] ? checkMime(mediaParts.join(';'), 'content: data URL media type') : undefined
  const data = content.slice(m[0].length)
  if (!isBase64) {
    try {
      return { bytes: new TextEncoder().encode(decodeURIComponent(data)), mimeType }
    } catch {
      throw badRequest('content: data URL has malformed percent-encoding')
    }
  }
  const compact = data.replace(/\s+/g, '')
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw badRequest('content: data URL is not valid base64')
  return { bytes: Buffer.from(compact, 'base64'), mimeType }
}

/** Plain-text content with no stated type: by its name, and text when the name says nothing. */
function textMime(filename: string): string {
  const guess = guessMime(filename)
  return guess === 'application/octet-stream' ? 'text/plain' : guess
}

export function jsonUpload(body: unknown, createdAt: number): { meta: UploadMeta; bytes: Uint8Array } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object {content, filename}')
  }
  const b = body as Record<string, unknown>
  const unknown = Object.keys(b).filter((k) => !FIELDS.has(k))
  if (unknown.length > 0) throw badRequest(`Unknown field(s): ${unknown.join(', ')}`)
  if (typeof b.content !== 'string') throw badRequest('content: required, must be a string')
  const filename = checkFilename(b.filename)
  const given = b.mime_type === undefined ? undefined : checkMime(b.mime_type, 'mime_type')
  const { bytes, mimeType } = decodeContent(b.content)
  const ea = b.expires_after
  if (ea !== undefined && (typeof ea !== 'object' || ea === null || Array.isArray(ea))) {
    throw badRequest('expires_after: must be an object {anchor, seconds}')
  }
  const after = (ea ?? {}) as Record<string, unknown>
  return {
    bytes,
    meta: {
      filename,
      // the data URL says what the decoded bytes are; otherwise what the client said
      mimeType: mimeType ?? given ?? textMime(filename),
      purpose: checkPurpose(b.purpose),
      expiresAt: expiry({ anchor: after.anchor, seconds: after.seconds, inSeconds: b.expires_in_seconds }, createdAt),
    },
  }
}
