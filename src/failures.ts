// What the gateway depends on failing (the file store, Redis, the database, an upstream), as
// the answers clients get. One table; the error renderer (http/onerror.ts) reads it and
// knows none of these itself, and so does the outer handler (front.ts).
import { RedisUnavailable } from './cluster/redis.ts'
import { isStoreDown, STORE_DOWN_MESSAGE } from './db/unavailable.ts'
import { BLOBS_DOWN_MESSAGE, BlobStoreUnavailable } from './files/blob-store.ts'
import type { KnownFailure } from './http/onerror.ts'
import { UpstreamError } from './ir/errors.ts'
import { sharedStoreDown } from './billing/admission.ts'
import { retryHeaders } from './http/retry-after.ts'

const RETRY = { 'retry-after': '1' }

export const KNOWN_FAILURES: readonly KnownFailure[] = [
  // first: its cause may be a refused connection, which would read as the database's
  (e) => (e instanceof BlobStoreUnavailable ? { status: 503, message: BLOBS_DOWN_MESSAGE, headers: RETRY, warn: 'blob store unavailable' } : undefined),
  (e) => (e instanceof RedisUnavailable ? sharedStoreDown(e) : undefined),
  (e) => (isStoreDown(e) ? { status: 503, message: STORE_DOWN_MESSAGE, headers: RETRY } : undefined),
  (e) => (e instanceof UpstreamError ? { status: e.status, message: e.message, headers: retryAfterOf(e) } : undefined),
]

/**
 * The upstream's Retry-After as it gave it; a 429 without one still says when to come back (the
 * gateway has already retried it), so that a client waits instead of guessing.
 */
function retryAfterOf(e: UpstreamError): Record<string, string> | undefined {
  if (e.retryAfter) return { 'retry-after': e.retryAfter }
  return e.status === 429 ? retryHeaders(1_000) : undefined
}
