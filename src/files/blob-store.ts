// Where file bytes live. The local disk is the first backend; an object store (S3 via
// Bun's client) is the next one, which is why a read may answer with a redirect.

/**
 * The object store did not answer, or refused (S3 unreachable, its bucket gone, its
 * credentials refused): the request that needed it gets a 503 saying so, never a 500. The
 * store's own message stays in the log (`cause`), not in the answer.
 */
export class BlobStoreUnavailable extends Error {
  constructor(readonly cause: unknown) {
    super(`blob store unavailable: ${(cause as Error)?.message ?? String(cause)}`)
  }
}

export const BLOBS_DOWN_MESSAGE = 'Service unavailable: the file store (S3) did not answer; nothing was changed. Retry shortly'

export interface StoredBlob {
  key: string
  size: number
  /** Hex SHA-256 of the bytes, computed while they streamed in. */
  sha256: string
}

export type BlobRead =
  | { kind: 'stream'; body: ReadableStream<Uint8Array> | Blob; size: number }
  | { kind: 'redirect'; url: string }

export interface BlobStore {
  /**
   * Stores a stream. The blob becomes visible under its key only once every byte is
   * written; if `source` throws or the process dies, nothing is left under any key.
   * The source's own error is rethrown.
   */
  put(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<StoredBlob>
  /** null when there is no such blob. */
  get(key: string): Promise<BlobRead | null>
  /** Idempotent: deleting a missing blob is not an error. */
  delete(key: string): Promise<void>
  stat(key: string): Promise<{ size: number } | null>
  /**
   * Removes what a crash left behind: unfinished writes, and blobs older than
   * `olderThan` (epoch ms) for which `isReferenced` says no record exists.
   */
  sweep(isReferenced: (key: string) => boolean, olderThan: number): Promise<{ temp: number; orphans: number }>
}
