import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DiskBlobStore } from '../../src/files/disk-blob-store.ts'
import { cleanup, tempDir } from '../helpers/server.ts'
import { filesUnder } from './helpers.ts'

let dirs: string[] = []
afterEach(() => {
  dirs.forEach(cleanup)
  dirs = []
})
function store(viewTtlMs?: number) {
  const dir = tempDir('switchyard-blobs-')
  dirs.push(dir)
  return { dir, blobs: new DiskBlobStore(dir, viewTtlMs) }
}

async function* chunks(n: number, size: number) {
  for (let i = 0; i < n; i++) yield new Uint8Array(size).fill(i)
}

describe('DiskBlobStore', () => {
  test('put streams to a random key; get, stat, delete', async () => {
    // a download's own link to the bytes lives 50 ms here
    const { dir, blobs } = store(50)
    const b = await blobs.put(chunks(4, 1000))
    expect(b.key).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{32}$/)
    expect(b.size).toBe(4000)
    const expected = new Uint8Array(4000).map((_, i) => Math.floor(i / 1000))
    expect(b.sha256).toBe(new Bun.CryptoHasher('sha256').update(expected).digest('hex'))
    expect(await blobs.stat(b.key)).toEqual({ size: 4000 })
    const r = await blobs.get(b.key)
    expect(r?.kind).toBe('stream')
    if (r?.kind === 'stream') expect(new Uint8Array(await new Response(r.body).arrayBuffer())).toEqual(expected)
    expect((await filesUnder(dir)).filter((f) => !f.endsWith('.dl'))).toEqual([b.key])
    await Bun.sleep(120)
    expect(await filesUnder(dir)).toEqual([b.key])
    await blobs.delete(b.key)
    await blobs.delete(b.key)
    expect(await blobs.get(b.key)).toBeNull()
    expect(await blobs.stat(b.key)).toBeNull()
  })

  test('a blob deleted after get() still reads whole through the download it was given', async () => {
    const { blobs } = store()
    const b = await blobs.put(chunks(8, 64 * 1024))
    const r = await blobs.get(b.key)
    await blobs.delete(b.key)
    expect(r?.kind).toBe('stream')
    if (r?.kind === 'stream') expect((await new Response(r.body).arrayBuffer()).byteLength).toBe(8 * 64 * 1024)
    expect(await blobs.get(b.key)).toBeNull()
  })

  test('a source that fails mid-way leaves no temp file and no blob', async () => {
    const { dir, blobs } = store()
    async function* failing() {
      yield new Uint8Array(10)
      throw new Error('client went away')
    }
    await expect(blobs.put(failing())).rejects.toThrow('client went away')
    expect(await filesUnder(dir)).toEqual([])
  })

  test('keys that are not its own never become paths', async () => {
    const { dir, blobs } = store()
    writeFileSync(join(dir, 'secret'), 'x')
    for (const key of ['../secret', 'secret', '/etc/passwd', 'ab/../../secret', 'AB/' + 'a'.repeat(32)]) {
      expect(await blobs.get(key)).toBeNull()
      expect(await blobs.stat(key)).toBeNull()
      await blobs.delete(key)
    }
    expect(existsSync(join(dir, 'secret'))).toBe(true)
  })

  test('sweep removes stale temp files and unreferenced old blobs, and keeps the rest', async () => {
    const { dir, blobs } = store()
    const kept = await blobs.put(chunks(1, 10))
    const orphan = await blobs.put(chunks(1, 10))
    const fresh = await blobs.put(chunks(1, 10))
    writeFileSync(join(dir, '.tmp', 'dead.part'), 'half an upload')
    writeFileSync(join(dir, '.tmp', 'live.part'), 'an upload in progress')
    const old = new Date(Date.now() - 60_000)
    for (const p of [kept.key, orphan.key].map((k) => join(dir, k)).concat(join(dir, '.tmp', 'dead.part'))) utimesSync(p, old, old)
    mkdirSync(join(dir, 'zz'))
    const referenced = new Set([kept.key])
    const r = await blobs.sweep((k) => referenced.has(k), Date.now() - 1000)
    expect(r).toEqual({ temp: 1, orphans: 1 })
    expect(await filesUnder(dir)).toEqual(['.tmp/live.part', fresh.key, kept.key].sort())
  })
})
