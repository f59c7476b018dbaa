// Bytes → a source an upstream takes inline: a PDF as base64 `application/pdf`, text as a
// text source, an image as base64 with its media type. What the bytes are is decided by
// their first bytes where a format has a signature (a server that says octet-stream, or
// text/html for a PDF, is common), then by the declared type, then by the file name, and
// last by whether the bytes are valid UTF-8 without NULs. Anything else is a 400.
import { badRequest } from '../http/errors.ts'
import type { MediaSource } from '../ir/types.ts'

export type MediaKind = 'pdf' | 'text' | 'image'

const TEXT_TYPES = new Set([
  'application/json', 'application/ld+json', 'application/x-ndjson', 'application/jsonl', 'application/xml',
  'application/yaml', 'application/x-yaml', 'application/toml', 'application/javascript', 'application/x-sh',
  'application/sql', 'application/csv', 'application/markdown',
])
const TEXT_NAMES = /\.(txt|text|md|markdown|csv|tsv|json|jsonl|ndjson|xml|ya?ml|toml|ini|cfg|html?|log|py|ts|tsx|js|jsx|go|rs|java|c|h|cc|cpp|hpp|rb|sh|sql|css)$/i

/** The image formats both upstreams take (Anthropic's list; OpenAI's is these and more). */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const

/** Image formats the upstreams take, by their signatures. */
export function sniffImage(b: Uint8Array): string | null {
  const at = (i: number, ...xs: number[]) => xs.every((x, k) => b[i + k] === x)
  if (at(0, 0x89, 0x50, 0x4e, 0x47)) return 'image/png'
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'image/gif'
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp'
  return null
}

export const isPdf = (b: Uint8Array) => b[0] === 0x25 && b[1] === 0x50 && b[2] === 0x44 && b[3] === 0x46 && b[4] === 0x2d // %PDF-

/**
 * Decoded text, or null when the bytes are not text. Declared text is decoded leniently
 * (a stray invalid byte becomes U+FFFD); undeclared bytes must be valid UTF-8 without NULs.
 */
function asText(b: Uint8Array, declared: boolean, charset = 'utf-8'): string | null {
  let label = declared ? charset : 'utf-8'
  try {
    new TextDecoder(label)
  } catch {
    label = 'utf-8' // a charset this runtime does not know
  }
  try {
    const s = new TextDecoder(label, { fatal: !declared }).decode(b)
    return declared || !s.includes('\u0000') ? s : null
  } catch {
    return null
  }
}

export interface Inlined {
  kind: MediaKind
  source: MediaSource
}

/**
 * What `bytes` are, as an inline source. `mediaType` is what the file record or the server
 * declared; `name` a file name or URL path; `at` names the block for the 400.
 */
export function inlineBytes(bytes: Uint8Array, mediaType: string, name: string, at: string, charset?: string): Inlined {
  const declared = mediaType.toLowerCase().split(';')[0]!.trim()
  const base64 = () => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  if (isPdf(bytes)) return { kind: 'pdf', source: { kind: 'base64', mediaType: 'application/pdf', data: base64() } }
  const image = sniffImage(bytes)
  if (image) return { kind: 'image', source: { kind: 'base64', mediaType: image, data: base64() } }
  if (declared === 'application/pdf') throw badRequest(`${at}: declared as a PDF, but the content is not one`)
  // a format the upstreams take, whose bytes are not one (a Content-Type that lied), or one they do not take
  if ((IMAGE_TYPES as readonly string[]).includes(declared)) throw badRequest(`${at}: declared as ${declared}, but the content is not a PNG, JPEG, GIF or WebP image`)
  if (declared.startsWith('image/')) throw badRequest(`${at}: ${declared} is not an image format the upstreams take (PNG, JPEG, GIF, WebP)`)
  const texty = declared.startsWith('text/') || TEXT_TYPES.has(declared) || declared.endsWith('+json') || declared.endsWith('+xml') || TEXT_NAMES.test(name)
  const text = asText(bytes, texty, charset)
  if (text !== null && (texty || declared === '' || declared === 'application/octet-stream')) {
    return { kind: 'text', source: { kind: 'text', mediaType: 'text/plain', data: text } }
  }
  throw badRequest(`${at}: ${declared ? `${declared.slice(0, 80)} content` : 'content of an unknown type'} cannot be sent as a document (PDF, text or image)`)
}
