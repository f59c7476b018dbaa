// The smaller hardening items — admin routes rate limited, multipart filenames with
// escaped quotes, owner-only files on disk, disk full as 507, the IP limiter's memory bound.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { MemoryStore } from '../../src/auth/ratelimit.ts'
import type { DiskBlobStore } from '../../src/files/disk-blob-store.ts'
import { DISK_BLOBS } from '../helpers/blobs.ts'
import { onPostgres } from '../helpers/database.ts'
import { countKeys } from '../helpers/redis.ts'
import { startGateway, tempDir, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: 'admin-secret-token', SWITCHYARD_IP_RPM: '40' } })
})
afterAll(async () => {
  await gw.stop()
})

describe('admin tokens, filenames, data dir modes, a full disk, the IP limiter', () => {
  test('wrong admin tokens count toward the IP limit: 429 once it is spent', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 45; i++) {
      const res = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer wrong-${i}` } })
      statuses.push(res.status)
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
    expect(statuses.slice(0, 40).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true)
  })

  test('a multipart filename with an escaped quote is kept whole', async () => {
    // a fresh gateway: the one above has spent its IP budget; its blobs on disk in every run,
    // whose modes are checked below
    const g = await startGateway({ env: DISK_BLOBS })
    try {
      const boundary = 'sy-boundary-1'
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a\\"b.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`
      const res = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { filename: string }).filename).toBe('a"b.txt')

      // the data dir, the database and the blobs are the owner's alone
      const mode = (p: string) => statSync(p).mode & 0o777
      expect(mode(g.dataDir)).toBe(0o700)
      // (the SQLite file; on PostgreSQL there is none)
      if (g.services.storage.file) expect(mode(g.services.storage.file)).toBe(0o600)
      expect(mode(join(g.dataDir, 'blobs'))).toBe(0o700)
      if (existsSync(join(g.dataDir, 'switchyard.db-wal'))) expect(mode(join(g.dataDir, 'switchyard.db-wal'))).toBe(0o600)
      // the uploaded blob and its shard
      const shard = readdirSync(join(g.dataDir, 'blobs')).find((n) => n !== '.tmp')!
      expect(mode(join(g.dataDir, 'blobs', shard))).toBe(0o700)
      for (const b of readdirSync(join(g.dataDir, 'blobs', shard))) expect(mode(join(g.dataDir, 'blobs', shard, b))).toBe(0o600)

      // disk full during an upload: 507, nothing kept
      const blobs = (g.services.files as unknown as { blobs: { put: unknown } }).blobs
      blobs.put = async () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
      }
      const full = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'x', filename: 'x.txt' }) })
      expect(full.status).toBe(507)
      expect(((await full.json()) as { error: string }).error).toContain('Insufficient storage')
      const list = (await (await fetch(`${g.url}/api/v1/files`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { data: unknown[] }
      expect(list.data).toHaveLength(1)
    } finally {
      await g.stop()
    }
  })

  test('disk full in the middle of a streamed upload: 507 {error} with a request id, no temp file, no record', async () => {
    // the disk store is under test: on disk in the shared-store run too
    const g = await startGateway({ env: DISK_BLOBS })
    try {
      // The real blob store, whose temp file's writes fail as a full disk does once the
      // first chunk is on disk: the store's own clean-up is what is under test.
      const blobs = g.services.files.blobs as DiskBlobStore
      const realOpen = blobs.openTemp.bind(blobs)
      let failed = 0
      blobs.openTemp = async (path: string) => {
        const fh = await realOpen(path)
        const realWrite = fh.write.bind(fh) as (...a: unknown[]) => Promise<unknown>
        let writes = 0
        ;(fh as unknown as { write: unknown }).write = async (...a: unknown[]) => {
          if (writes++ >= 1) {
            failed++
            throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 })
          }
          return realWrite(...a)
        }
        return fh
      }
      const form = new FormData()
      form.append('purpose', 'user_data')
      form.append('file', new Blob([new Uint8Array(4 * 1024 * 1024).fill(97)]), 'big.txt')
      const res = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}` }, body: form })
      expect(res.status).toBe(507)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(((await res.json()) as { error: string }).error).toContain('nothing was kept')
      expect(failed).toBe(1)
      // nothing kept: no temp file, no blob, no record
      expect(readdirSync(join(g.dataDir, 'blobs', '.tmp')).filter((n) => n.endsWith('.part'))).toEqual([])
      expect(readdirSync(join(g.dataDir, 'blobs')).filter((n) => n !== '.tmp')).toEqual([])
      const list = (await (await fetch(`${g.url}/api/v1/files`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { data: unknown[] }
      expect(list.data).toHaveLength(0)
      // once there is room again, the same upload is stored
      blobs.openTemp = realOpen
      const again = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}` }, body: form })
      expect(again.status).toBe(200)
    } finally {
      await g.stop()
    }
  })

  test('a data dir the gateway makes is 0700; one the operator made keeps its mode, and what goes in it is owner-only', async () => {
    const parent = tempDir()
    const old = process.umask(0o022)
    try {
      const made = join(parent, 'made', 'data')
      const shared = join(parent, 'shared')
      mkdirSync(shared, { mode: 0o755 })
      for (const dir of [made, shared]) {
        // blobs on disk in every run: the blobs dir is one of what goes in the data dir
        const g = await startGateway({ dataDir: dir, env: DISK_BLOBS })
        try {
          const up = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'x', filename: 'x.txt' }) })
          expect(up.status).toBe(200)
        } finally {
          await g.stop()
        }
        const mode = (p: string) => statSync(p).mode & 0o777
        expect(mode(dir)).toBe(dir === made ? 0o700 : 0o755)
        // the SQLite file (on PostgreSQL there is none in the data dir)
        if (!onPostgres) expect(mode(join(dir, 'switchyard.db'))).toBe(0o600)
        expect(mode(join(dir, 'blobs'))).toBe(0o700)
      }
    } finally {
      process.umask(old)
      rmSync(parent, { recursive: true, force: true })
    }
  })

  test('the IP limiter holds a bounded number of buckets, and a bucket seen once costs a few bytes', () => {
    const store = new MemoryStore(1_000)
    const now = Date.now()
    for (let i = 0; i < 40_000; i++) store.hit(`ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 3000, 60_000, now)
    expect(store.size).toBeLessThanOrEqual(1_000)
    // the limit itself still holds exactly for a busy bucket
    let allowed = 0
    for (let i = 0; i < 3100; i++) {
      // as the limiter does: ask, then count the hit only when allowed
      if (!store.peek('ip:busy', 3000, 60_000, now + 1).allowed) continue
      store.hit('ip:busy', 3000, 60_000, now + 1)
      allowed++
    }
    expect(allowed).toBe(3000)
  })

  test("a flood of new addresses never evicts a key's window (that would reset its limit)", () => {
    const store = new MemoryStore(100)
    const now = Date.now()
    for (let i = 0; i < 5; i++) store.hit('k:key_1', 5, 60_000, now)
    for (let i = 0; i < 10_000; i++) store.hit(`ip:10.0.${(i >> 8) & 255}.${i & 255}`, 100, 60_000, now)
    expect(store.peek('k:key_1', 5, 60_000, now + 1).allowed).toBe(false)
  })
})

test('40,000 distinct X-Forwarded-For addresses through a trusted proxy hold a few MB, not hundreds', async () => {
  // before: each address kept a ring sized to the IP limit (600 × 8 bytes), 225 MB for 40,000
  const g = await startGateway({ env: { SWITCHYARD_TRUSTED_PROXIES: '127.0.0.1', SWITCHYARD_IP_RPM: '600' } })
  try {
    Bun.gc(true)
    const before = heapStats().heapSize
    for (let batch = 0; batch < 400; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const n = batch * 100 + i
          const res = await fetch(`${g.url}/api/v1/models`, { headers: { 'x-forwarded-for': `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}` } })
          await res.arrayBuffer()
          if (res.status !== 401) throw new Error(`address ${n}: ${res.status}`)
        }),
      )
    }
    Bun.gc(true)
    const grown = heapStats().heapSize - before
    // every address got a bucket of its own: in this process's memory store, or, in the
    // shared-store run, a sorted set in Redis (then the heap above holds none of them)
    const redis = g.services.config.redis
    const buckets = redis ? await countKeys(`${redis.prefix}rl:ip:*`) : (g.services.limiter.store as MemoryStore).size
    expect(buckets).toBeGreaterThanOrEqual(40_000)
    expect(grown).toBeLessThan(40 * 1024 * 1024)
  } finally {
    await g.stop()
  }
}, 30_000)
