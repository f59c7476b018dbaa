// Bytes → the source an upstream can take inline: a PDF as base64, text as a text source,
// an image as base64 with its media type. Anything else cannot be sent as a document.
import { badRequest } from '../http/errors.ts'
import type { MediaSource } from '../ir/types.ts'

const TEXT_TYPES = new Set(['application/json', 'application/xml', 'application/x-yaml', 'application/yaml', 'application/javascript', 'application/x-ndjson', 'application/jsonl'])
const TEXT_EXTENSIONS = /\.(txt|md|markdown|csv|tsv|json|jsonl|ndjson|xml|ya?ml|html?|log|py|ts|js|tsx|jsx|go|rs|java|c|h|cpp|rb|sh|sql|toml|ini)$/i

export type MediaKind = 'pdf' | 'text' | 'image'

export function mediaKind(mediaType: string, filename = ''): MediaKind | null {
  const t = mediaType.toLowerCase()
  if (t === 'application/pdf' || (t === '' || t === 'application/octet-stream') && /\.pdf$/i.test(filename)) return 'pdf'
  if (t.startsWith('image/')) return 'image'
  if (t.startsWith('text/') || TEXT_TYPES.has(t) || ((t === '' || t === 'application/octet-stream') && TEXT_EXTENSIONS.test(filename))) return 'text'
  return null
}

export function inlineSource(bytes: Uint8Array, mediaType: string, filename: string, at: string, want: 'document' | 'image'): MediaSource {
  const kind = mediaKind(mediaType, filename)
  if (want === 'image') {
    if (kind !== 'image') throw badRequest(`${at}: expected an image, got ${mediaType || 'an unknown type'}`)
    return { kind: 'base64', mediaType, data: Buffer.from(bytes).toString('base64') }
  }
  if (kind === 'pdf') return { kind: 'base64', mediaType: 'application/pdf', data: Buffer.from(bytes).toString('base64') }
  if (kind === 'text') return { kind: 'text', mediaType: 'text/plain', data: new TextDecoder().decode(bytes) }
  if (kind === 'image') return { kind: 'base64', mediaType, data: Buffer.from(bytes).toString('base64') }
  throw badRequest(`${at}: a ${mediaType || 'file of unknown type'} cannot be sent as a document (PDF, text or image)`)
}
