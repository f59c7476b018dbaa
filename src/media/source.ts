// One media source's bytes, inlined: a file id read with the CALLER's key (the same owner
// check as the file routes, so another key's id is indistinguishable from a missing one),
// or a URL fetched through the guard.
import type { ApiKey } from '../http/context.ts'
import type { FilesService } from '../files/service.ts'
import { badRequest, HttpError } from '../http/errors.ts'
import { guardedFetch, type FetchPolicy } from './fetch.ts'
import { inlineBytes, type Inlined } from './inline.ts'

/** What resolving media needs, per request. */
export interface MediaDeps {
  files: Pick<FilesService, 'resolveForKey' | 'bytes'>
  /** The caller's key: file ids resolve only to this key's files. */
  key: ApiKey
  policy: FetchPolicy
  /** The client's signal: a disconnect stops fetches in flight. */
  signal?: AbortSignal
  /** Bytes the request may still inline, all its sources together (set per request by inScope). */
  budget?: { left: number }
}

/** Ids echoed in errors are cut, as generations do (a 10 KB id must not make a 10 KB error). */
export const clip = (s: string) => (s.length > 64 ? s.slice(0, 64) + '…' : s)

export interface InlinedFile extends Inlined {
  filename: string
}

/** The caller's file `fileId`, inlined. `at` is the path of the id in the request. */
export async function inlineFile(fileId: string, deps: MediaDeps, at: string): Promise<InlinedFile> {
  const rec = await deps.files.resolveForKey(fileId, deps.key)
  if (!rec) throw badRequest(`${at}: no such file ${clip(fileId)}`)
  if (rec.bytes > deps.policy.maxBytes) throw badRequest(`${at}: file ${clip(fileId)} is larger than ${deps.policy.maxBytes} bytes`)
  // taken before the read: the same large file named twenty times is refused at the second
  spend(deps, rec.bytes, at)
  // null: deleted between the lookup and the read, which to the caller is the same thing;
  // a storage failure is this request's 400 naming the block, never an unexplained 500
  const bytes = await deps.files.bytes(rec).catch(() => null)
  if (!bytes) throw badRequest(`${at}: no such file ${clip(fileId)}`)
  return { ...inlineBytes(bytes, rec.mimeType, rec.filename, at), filename: rec.filename }
}

/** The document or image at `url`, fetched through the guard. `at` is the path of the URL. */
export async function inlineUrl(url: string, deps: MediaDeps, at: string): Promise<Inlined> {
  const got = await guardedFetch(url, deps.policy, at, deps.signal)
  spend(deps, got.bytes.length, at)
  return inlineBytes(got.bytes, got.mediaType, got.url.pathname, at, got.charset)
}

/**
 * `n` bytes of the request's budget, or a 413 naming the source that would pass it: each source
 * is bounded on its own, and without a bound on them together a request of a few KB naming one
 * large file many times built a body of hundreds of MB, which no upstream takes.
 */
function spend(deps: MediaDeps, n: number, at: string): void {
  const b = deps.budget
  if (!b) return
  if (n > b.left) throw new HttpError(413, `${at}: the media this request inlines would pass ${deps.policy.maxRequestBytes} bytes in all (media.max_request_bytes)`)
  b.left -= n
}

/** At most `n` of the returned function's jobs run at once (a request may name many URLs). */
export function limiter(n: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  return async (job) => {
    while (running >= n) await new Promise<void>((r) => waiting.push(r))
    running++
    try {
      return await job()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

/** How many sources of one request are fetched or read at once. */
const PARALLEL = 4

export interface Scope {
  deps: MediaDeps
  run: <T>(job: () => Promise<T>) => Promise<T>
}

/**
 * Runs one request's resolution: sources in parallel (at most PARALLEL at a time), and the
 * first failure cancels the fetches still in flight, since the request is refused anyway.
 */
export async function inScope<T>(deps: MediaDeps, fn: (s: Scope) => Promise<T>): Promise<T> {
  const stop = new AbortController()
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal
  try {
    const budget = deps.policy.maxRequestBytes === undefined ? undefined : { left: deps.policy.maxRequestBytes }
    return await fn({ deps: { ...deps, signal, budget }, run: limiter(PARALLEL) })
  } catch (e) {
    stop.abort()
    throw e
  }
}
