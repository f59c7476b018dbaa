// What a gateway's blob store holds, read from the store itself, so that a test checks the
// same thing on the data dir's disk and on S3 (the shared-store run, SWITCHYARD_TEST_SHARED=1).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DiskBlobStore } from '../../src/files/disk-blob-store.ts'
import { S3BlobStore } from '../../src/files/s3-blob-store.ts'
import type { Gateway } from './server.ts'

/**
 * For a test whose subject is the disk store itself (file modes, temp files, a full disk):
 * its gateway keeps blobs in its data dir in every run. (The shared run's bucket arrives as
 * `S3_BUCKET`; a test's env wins over it.)
 */
export const DISK_BLOBS: Record<string, undefined> = { S3_BUCKET: undefined }

export function onDisk(g: Pick<Gateway, 'services'>): boolean {
  return g.services.files.blobs instanceof DiskBlobStore
}

/**
 * Everything the store holds, sorted: on disk every file under `blobs/` (unfinished temp
 * files included), on S3 every object in the bucket (an upload still in progress is no
 * object: S3 shows one only once it completes).
 */
export async function storedBlobs(g: Pick<Gateway, 'services' | 'dataDir'>): Promise<string[]> {
  const blobs = g.services.files.blobs
  if (blobs instanceof S3BlobStore) {
    const names: string[] = []
    let startAfter: string | undefined
    for (;;) {
      const page = await blobs.client.list({ maxKeys: 1000, startAfter })
      const contents = page.contents ?? []
      names.push(...contents.map((o) => o.key))
      if (!page.isTruncated || contents.length === 0) break
      startAfter = contents.at(-1)!.key
    }
    return names.sort()
  }
  if (!(blobs instanceof DiskBlobStore)) throw new Error('storedBlobs: a blob store this helper does not know')
  return filesUnder(join(g.dataDir, 'blobs'))
}

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort()
}

/** The blob key of a file record (read before the record goes, to look for its bytes after). */
export async function blobKeyOf(g: Pick<Gateway, 'services'>, fileId: string): Promise<string> {
  const row = await g.services.storage.sql.get<{ k: string }>('SELECT blob_key AS k FROM files WHERE id = ?', [fileId])
  if (!row) throw new Error(`blobKeyOf: no file ${fileId}`)
  return row.k
}

/** Whether a blob is still stored (through the store's own `stat`, on disk or S3). */
export async function hasBlob(g: Pick<Gateway, 'services'>, key: string): Promise<boolean> {
  return (await g.services.files.blobs.stat(key)) !== null
}
