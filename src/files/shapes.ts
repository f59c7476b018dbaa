// A file record as each wire family shows it. Pure.
import type { FileRecord, ListPage } from './types.ts'

const sec = (ms: number) => Math.floor(ms / 1000)
const rfc3339 = (ms: number) => new Date(ms).toISOString()

export function toOpenAIFile(f: FileRecord) {
  return {
    id: f.id,
    object: 'file' as const,
    bytes: f.bytes,
    created_at: sec(f.createdAt),
    filename: f.filename,
    purpose: f.purpose,
    // bytes are stored whole before the record exists: there is no processing step
    status: 'processed' as const,
    status_details: null,
    ...(f.expiresAt !== null ? { expires_at: sec(f.expiresAt) } : {}),
  }
}

export function toOpenAIList(page: ListPage) {
  const data = page.data.map(toOpenAIFile)
  return {
    object: 'list' as const,
    data,
    has_more: page.hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  }
}

export const openAIDeleted = (id: string) => ({ id, object: 'file' as const, deleted: true })

export function toAnthropicFile(f: FileRecord) {
  return {
    id: f.id,
    type: 'file' as const,
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.bytes,
    created_at: rfc3339(f.createdAt),
    expires_at: f.expiresAt !== null ? rfc3339(f.expiresAt) : null,
    downloadable: true,
  }
}

/**
 * `next_page` is for the 1.x SDK, which pages with `?page=<token>` only; the token
 * carries the direction so that paging from a `before_id` keeps walking the same way.
 */
export function toAnthropicList(page: ListPage, direction: 'after' | 'before') {
  const data = page.data.map(toAnthropicFile)
  const first = data[0]?.id ?? null
  const last = data.at(-1)?.id ?? null
  const edge = direction === 'after' ? last : first
  return {
    data,
    has_more: page.hasMore,
    first_id: first,
    last_id: last,
    next_page: page.hasMore && edge ? encodePageToken(direction === 'after' ? { after: edge } : { before: edge }) : null,
  }
}

export const anthropicDeleted = (id: string) => ({ id, type: 'file_deleted' as const })

export type PageToken = { after: string } | { before: string }

export function encodePageToken(t: PageToken): string {
  return 'page_' + Buffer.from(JSON.stringify(t)).toString('base64url')
}

/** null when the token is not one this gateway issued. */
export function decodePageToken(token: string): PageToken | null {
  if (!token.startsWith('page_')) return null
  try {
    const t = JSON.parse(Buffer.from(token.slice(5), 'base64url').toString('utf8'))
    if (typeof t?.after === 'string') return { after: t.after }
    if (typeof t?.before === 'string') return { before: t.before }
  } catch {}
  return null
}

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%;]/g, '_')
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`
}
