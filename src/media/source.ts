// One media source resolved: a file id read with the caller's key and inlined, a document
// URL fetched through the guard and embedded; anything else as it was.
import type { ApiKey } from '../auth/context.ts'
import type { FilesService } from '../files/service.ts'
import { badRequest } from '../http/errors.ts'
import type { MediaSource } from '../ir/types.ts'
import { guardedFetch, type FetchPolicy } from './fetch.ts'
import { inlineSource } from './inline.ts'

export interface MediaDeps {
  files: FilesService
  policy: FetchPolicy
}

/** An inlined source holding an image (a document block that must become an image block). */
export const isImage = (s: MediaSource): boolean => s.kind === 'base64' && s.mediaType.startsWith('image/')

export const clip = (s: string) => (s.length > 64 ? s.slice(0, 64) + '…' : s)

/** One source's bytes, inlined; `want` says what the block is. */
export async function resolveSource(src: MediaSource, want: 'document' | 'image', key: ApiKey, deps: MediaDeps, at: string): Promise<MediaSource> {
  if (src.kind === 'file') {
    const rec = deps.files.resolveForKey(src.fileId, key)
    if (!rec) throw badRequest(`${at}.file_id: no such file ${clip(src.fileId)}`)
    if (rec.bytes > deps.policy.maxBytes) throw badRequest(`${at}.file_id: ${clip(src.fileId)} is larger than ${deps.policy.maxBytes} bytes`)
    // a storage failure is the request's 400 naming the block, never an unexplained 500
    const bytes = await deps.files.bytes(rec).catch(() => null)
    if (!bytes) throw badRequest(`${at}.file_id: no such file ${clip(src.fileId)}`)
    return inlineSource(bytes, rec.mimeType, rec.filename, `${at}.file_id`, want)
  }
  if (src.kind === 'url' && want === 'document') {
    const got = await guardedFetch(src.url, deps.policy, `${at}.url`)
    return inlineSource(got.bytes, got.mediaType, new URL(src.url).pathname, `${at}.url`, 'document')
  }
  return src
}

