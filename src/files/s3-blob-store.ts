// Blobs in S3-compatible storage (`blobs.s3`), through Bun's S3Client, so that
// several gateways share file bytes and batch outputs. Names are `<prefix><shard>/<random
// hex>`, as on disk, checked against one pattern: nothing a client sends reaches a name.
//   - put: a multipart upload (`writer()`), fed as the upload streams in; S3 shows an object
//     only once the upload completes, so a failed or abandoned upload leaves nothing visible
//     (unfinished multipart parts are the bucket's lifecycle rule's to expire);
//   - get: the GET is opened before any status line goes out, so a blob deleted meanwhile is
//     a 404, never a 500, and one already streaming finishes (S3 serves the version it began);
//     or, with `redirect_downloads`, a short-lived presigned URL for the client to fetch.
import { S3Client } from 'bun'
import type { S3Settings } from '../config/load.ts'
import { BlobStoreUnavailable, type BlobRead, type BlobStore, type StoredBlob } from './blob-store.ts'

const KEY = /^[0-9a-f]{2}\/[0-9a-f]{32}$/
const PART_BYTES = 8 * 1024 * 1024
/**
 * Orphans (bytes with no record) are removed only when older than this before the sweep's
 * cutoff: another gateway on the same bucket and database may be writing the record of a
 * blob it has just stored.
 */
const ORPHAN_GRACE_MS = 60 * 60_000

/** A client of the configured bucket (the response cache keeps large bodies there too). */
export function s3Client(s: S3Settings): S3Client {
  return new S3Client({
    bucket: s.bucket,
    endpoint: s.endpoint,
    region: s.region,
    accessKeyId: s.accessKeyId,
    secretAccessKey: s.secretAccessKey,
    sessionToken: s.sessionToken,
    virtualHostedStyle: !s.pathStyle,
  })
}

function randomHex(): string {
  return crypto.randomUUID().replaceAll('-', '')
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client

  constructor(private readonly s: S3Settings) {
    this.client = s3Client(s)
  }

  private nameOf(key: string): string | null {
    return KEY.test(key) ? this.s.prefix + key : null
  }

  async put(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<StoredBlob> {
    const hex = randomHex()
    const key = `${hex.slice(0, 2)}/${hex}`
    const name = this.s.prefix + key
    const writer = this.client.file(name).writer({ partSize: PART_BYTES, queueSize: 2, retry: 3, type: 'application/octet-stream' })
    const hasher = new Bun.CryptoHasher('sha256')
    let size = 0
    // the upload's own errors (too large, malformed) go back as they are; S3's are a 503
    let sourceFailed = false
    const watched = (async function* () {
      try {
        yield* source
      } catch (e) {
        sourceFailed = true
        throw e
      }
    })()
    try {
      for await (const chunk of watched) {
        if (chunk.byteLength === 0) continue
        hasher.update(chunk)
        size += chunk.byteLength
        // a pending write means the parts in flight are full: wait, so memory stays bounded
        const n = writer.write(chunk)
        if (typeof n !== 'number') await n
      }
      await writer.end()
      // The file's record is written on the strength of this: an upload the writer reported
      // done but S3 does not hold (seen under load, with an endpoint that never answered)
      // would be a file accepted and lost. One HEAD makes sure.
      if (!(await this.client.exists(name))) throw new Error(`S3 PUT ${key}: the object is not there after the upload`)
    } catch (e) {
      // ending with an error aborts the multipart upload; a small upload sent whole may exist
      await Promise.resolve(writer.end(e as Error)).catch(() => {})
      await this.client.delete(name).catch(() => {})
      throw sourceFailed ? e : new BlobStoreUnavailable(e)
    }
    return { key, size, sha256: hasher.digest('hex') }
  }

  async get(key: string): Promise<BlobRead | null> {
    const name = this.nameOf(key)
    if (!name) return null
    if (this.s.redirectDownloads) {
      if (!(await unavailableOn(this.client.exists(name)))) return null
      return { kind: 'redirect', url: this.client.presign(name, { method: 'GET', expiresIn: this.s.presignTtlS }) }
    }
    // a signed GET of our own: its status is known before the client's response begins
    const res = await unavailableOn(fetch(this.client.presign(name, { method: 'GET', expiresIn: 60 })))
    if (res.status === 404) {
      // the object, or the whole bucket? Only the first is a missing file. (A short XML body.)
      if (/NoSuchBucket/.test(await res.text().catch(() => ''))) throw new BlobStoreUnavailable(new Error(`S3 GET ${key}: no such bucket`))
      return null
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel()
      throw new BlobStoreUnavailable(new Error(`S3 GET ${key}: HTTP ${res.status}`))
    }
    return { kind: 'stream', body: res.body, size: Number(res.headers.get('content-length') ?? 0) }
  }

  async delete(key: string): Promise<void> {
    const name = this.nameOf(key)
    if (!name) return
    try {
      await this.client.delete(name)
    } catch (e) {
      if (!isMissing(e)) throw new BlobStoreUnavailable(e)
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const name = this.nameOf(key)
    if (!name) return null
    try {
      return { size: (await this.client.stat(name)).size }
    } catch (e) {
      if (isMissing(e)) return null
      throw new BlobStoreUnavailable(e)
    }
  }

  async sweep(isReferenced: (key: string) => boolean, olderThan: number) {
    let orphans = 0
    const cutoff = olderThan - ORPHAN_GRACE_MS
    let startAfter: string | undefined
    for (;;) {
      const page = await this.client.list({ prefix: this.s.prefix, maxKeys: 1000, startAfter })
      const contents = page.contents ?? []
      for (const o of contents) {
        const key = o.key.slice(this.s.prefix.length)
        if (!KEY.test(key) || isReferenced(key)) continue
        const at = o.lastModified ? Date.parse(String(o.lastModified)) : Date.now()
        if (!(at < cutoff)) continue
        await this.delete(key)
        orphans++
      }
      if (!page.isTruncated || contents.length === 0) break
      startAfter = contents.at(-1)!.key
    }
    // unfinished uploads are invisible multipart uploads, not objects: nothing to remove here
    return { temp: 0, orphans }
  }
}

function unavailableOn<T>(p: Promise<T>): Promise<T> {
  return p.catch((e) => {
    throw new BlobStoreUnavailable(e)
  })
}

function isMissing(e: unknown): boolean {
  const x = e as { code?: string; name?: string; message?: string }
  return x?.code === 'NoSuchKey' || x?.name === 'NoSuchKey' || /NoSuchKey|not found|404/i.test(String(x?.message))
}
