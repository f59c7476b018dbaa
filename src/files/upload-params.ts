// Upload metadata: what the client may say about a file besides its bytes, and the rules
// for each field. Pure; every failure is a 400 that names the field.
import { badRequest } from '../http/errors.ts'
import { operatorTextFault } from '../lib/operator-text.ts'

/** OpenAI's purposes. An upload that names none is `user_data`, the general-purpose one. */
export const PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const
export const DEFAULT_PURPOSE = 'user_data'

const DAY = 86_400
/** Bounds of an expiry in seconds, per field (OpenAI: one hour to 30 days). */
const EXPIRY_BOUNDS: Record<string, [number, number]> = {
  'expires_after[seconds]': [3600, 30 * DAY],
  expires_in_seconds: [1, 30 * DAY],
}

const MAX_FILENAME = 512

/** Text fields a multipart upload may carry besides `file`. */
export const MULTIPART_FIELDS = new Set(['purpose', 'expires_after[anchor]', 'expires_after[seconds]', 'expires_in_seconds'])

const BY_EXTENSION: Record<string, string> = {
  jsonl: 'application/jsonl',
  json: 'application/json',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  xml: 'application/xml',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  zip: 'application/zip',
  gz: 'application/gzip',
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(\s*;\s*[a-z0-9!#$&^_.+-]+=("[\x20-\x21\x23-\x7e]*"|[a-z0-9!#$&^_.+-]+))*$/i

export interface UploadMeta {
  filename: string
  purpose: string
  mimeType: string
  /** Epoch ms; null = never. */
  expiresAt: number | null
}

export function guessMime(filename: string): string {
  const dot = filename.lastIndexOf('.')
  return (dot >= 0 && BY_EXTENSION[filename.slice(dot + 1).toLowerCase()]) || 'application/octet-stream'
}

export function checkFilename(name: unknown, field = 'filename'): string {
  if (typeof name !== 'string' || name.length === 0) throw badRequest(`${field}: must be a non-empty string`)
  if (name.length > MAX_FILENAME) throw badRequest(`${field}: longer than ${MAX_FILENAME} characters`)
  const fault = operatorTextFault(name)
  if (fault) throw badRequest(`${field}: ${fault}`)
  return name
}

export function checkMime(mime: unknown, field: string): string {
  if (typeof mime !== 'string' || !MIME.test(mime.trim())) {
    throw badRequest(`${field}: must be a MIME type such as "text/plain" or "image/png"`)
  }
  return mime.trim()
}

export function checkPurpose(purpose: unknown): string {
  if (purpose === undefined) return DEFAULT_PURPOSE
  if (typeof purpose !== 'string' || !(PURPOSES as readonly string[]).includes(purpose)) {
    throw badRequest(`purpose: must be one of ${PURPOSES.join(', ')}`)
  }
  return purpose
}

function seconds(field: string, raw: unknown): number {
  const n = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : raw
  const [min, max] = EXPIRY_BOUNDS[field]
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw badRequest(`${field}: must be an integer from ${min} to ${max}`)
  }
  return n
}

/**
 * The expiry, from OpenAI's `expires_after` (anchor + seconds) or Anthropic's
 * `expires_in_seconds`; null when neither is given.
 */
export function expiry(
  given: { anchor?: unknown; seconds?: unknown; inSeconds?: unknown },
  createdAt: number,
): number | null {
  const { anchor, seconds: after, inSeconds } = given
  if (anchor !== undefined || after !== undefined) {
    if (inSeconds !== undefined) throw badRequest('expires_in_seconds: cannot be combined with expires_after')
    if (anchor !== 'created_at') throw badRequest('expires_after[anchor]: must be "created_at"')
    if (after === undefined) throw badRequest('expires_after[seconds]: required with expires_after[anchor]')
    return createdAt + seconds('expires_after[seconds]', after) * 1000
  }
  if (inSeconds !== undefined) return createdAt + seconds('expires_in_seconds', inSeconds) * 1000
  return null
}

/** Metadata of a multipart upload from its text fields and the file part's head. */
export function multipartMeta(
  fields: Record<string, string>,
  part: { filename?: string; contentType?: string },
  createdAt: number,
): UploadMeta {
  const filename = checkFilename(part.filename ?? 'file', 'file: filename')
  // a part with no Content-Type (the openai SDK's toFile sends none) is typed by its name
  const mimeType =
    part.contentType && part.contentType.toLowerCase() !== 'application/octet-stream'
      ? checkMime(part.contentType, 'file: Content-Type')
      : guessMime(filename)
  return {
    filename,
    mimeType,
    purpose: checkPurpose(fields.purpose),
    expiresAt: expiry(
      { anchor: fields['expires_after[anchor]'], seconds: fields['expires_after[seconds]'], inSeconds: fields.expires_in_seconds },
      createdAt,
    ),
  }
}
