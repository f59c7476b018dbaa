// Blobs as files under `<dataDir>/blobs/<shard>/<random hex>`. A write goes to
// `.tmp/<random>.part` and is renamed into place when complete, so a crash mid-upload
// leaves only a temp file, which the next start removes. Keys are random and checked
// against one pattern before any path is built: nothing a client sends reaches a path.
import { chmodSync, mkdirSync } from 'node:fs'
import { link, mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { BlobRead, BlobStore, StoredBlob } from './blob-store.ts'

const KEY = /^[0-9a-f]{2}\/[0-9a-f]{32}$/
const TMP = '.tmp'
/** How long a download's own link to a blob outlives the start of the download. */
const VIEW_TTL_MS = 60_000

function randomHex(): string {
  return crypto.randomUUID().replaceAll('-', '')
}

export class DiskBlobStore implements BlobStore {
  private readonly tmpDir: string

  constructor(private readonly root: string, private readonly viewTtlMs = VIEW_TTL_MS) {
    this.tmpDir = join(root, TMP)
    mkdirSync(this.tmpDir, { recursive: true, mode: 0o700 })
    // a blob dir made by an older version may be 0755: closing the root closes every blob in it
    chmodSync(root, 0o700)
  }

  private pathOf(key: string): string | null {
    return KEY.test(key) ? join(this.root, key) : null
  }

  /**
   * Opens an upload's temp file, owner-only. A method of its own so a test can hand back a
   * handle whose writes fail as a full disk does (ENOSPC mid-upload).
   */
  openTemp(path: string): Promise<FileHandle> {
    return open(path, 'wx', 0o600)
  }

  async put(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<StoredBlob> {
    const name = randomHex()
    const tmp = join(this.tmpDir, `${name}.part`)
    const fh = await this.openTemp(tmp)
    const hasher = new Bun.CryptoHasher('sha256')
    let size = 0
    let closed = false
    try {
      for await (const chunk of source) {
        if (chunk.byteLength === 0) continue
        hasher.update(chunk)
        size += chunk.byteLength
        let off = 0
        while (off < chunk.byteLength) {
          const { bytesWritten } = await fh.write(chunk, off, chunk.byteLength - off)
          off += bytesWritten
        }
      }
      // the rename must not become visible before the data it names is on disk
      await fh.datasync()
      await fh.close()
      closed = true
      const key = `${name.slice(0, 2)}/${name}`
      await mkdir(join(this.root, name.slice(0, 2)), { recursive: true, mode: 0o700 })
      await rename(tmp, join(this.root, key))
      return { key, size, sha256: hasher.digest('hex') }
    } catch (e) {
      if (!closed) await fh.close().catch(() => {})
      await rm(tmp, { force: true }).catch(() => {})
      throw e
    }
  }

  async get(key: string): Promise<BlobRead | null> {
    const path = this.pathOf(key)
    if (!path) return null
    // The download gets a name of its own for the bytes (a hard link) before any status
    // line. A delete that races it unlinks the blob's name, not this one, so the download
    // sends the whole file; once the blob is gone, no link can be made and the answer is a
    // 404. Bun serves the link with sendfile and a Content-Length, and opens it as soon as
    // the body starts, so the link is removed a while later without harm.
    const view = join(this.tmpDir, `${randomHex()}.dl`)
    try {
      await link(path, view)
    } catch {
      return null
    }
    setTimeout(() => rm(view, { force: true }).catch(() => {}), this.viewTtlMs).unref?.()
    const st = await stat(view).catch(() => null)
    if (!st?.isFile()) return null
    return { kind: 'stream', body: Bun.file(view), size: st.size }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key)
    if (path) await rm(path, { force: true })
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const path = this.pathOf(key)
    if (!path) return null
    const st = await stat(path).catch(() => null)
    return st?.isFile() ? { size: st.size } : null
  }

  async sweep(isReferenced: (key: string) => boolean, olderThan: number) {
    let temp = 0
    let orphans = 0
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      const st = await stat(join(this.tmpDir, name)).catch(() => null)
      // an upload that began after start keeps writing, so its mtime stays recent
      if (!st || st.mtimeMs >= olderThan) continue
      await rm(join(this.tmpDir, name), { force: true, recursive: true })
      temp++
    }
    for (const shard of await readdir(this.root).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue
      for (const name of await readdir(join(this.root, shard)).catch(() => [] as string[])) {
        const key = `${shard}/${name}`
        if (!KEY.test(key) || isReferenced(key)) continue
        const st = await stat(join(this.root, key)).catch(() => null)
        // a blob renamed into place a moment ago may belong to an upload whose record
        // is being written right now
        if (!st || st.mtimeMs >= olderThan) continue
        await rm(join(this.root, key), { force: true })
        orphans++
      }
    }
    return { temp, orphans }
  }
}
