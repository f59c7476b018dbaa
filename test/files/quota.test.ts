// A key's room for files (limits.key_file_bytes): an upload that would take its live files past
// it is a 413 naming the setting, however it comes (the SDK's multipart, a stream with no
// length, JSON, many at once), and nothing of it is kept; deleting files makes room again.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { toFile } from 'openai'
import { storedBlobs } from '../helpers/blobs.ts'
import { startFilesGateway, type FilesGateway } from './helpers.ts'

const QUOTA = 64 * 1024
let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway({ env: { SWITCHYARD_KEY_FILE_BYTES: String(QUOTA) } })
})
afterAll(() => gw.stop())

const bytesOf = (n: number) => new Uint8Array(n).fill(97)

async function keptBytes(key: string): Promise<number> {
  const r = await fetch(`${gw.url}/api/v1/files?limit=10000`, { headers: { authorization: `Bearer ${key}` } })
  const list = (await r.json()) as { data: { bytes: number }[] }
  return list.data.reduce((n, f) => n + f.bytes, 0)
}

/** The blob store holds exactly the bytes of the files listed, nothing of a refused upload. */
async function onlyListedBlobs() {
  const rows = (await gw.services.storage.sql.all('SELECT blob_key FROM files')) as { blob_key: string }[]
  let blobs = await storedBlobs(gw)
  for (let i = 0; i < 50 && blobs.length !== rows.length; i++) {
    await Bun.sleep(20)
    blobs = await storedBlobs(gw)
  }
  expect(blobs.length).toBe(rows.length)
}

test('uploads fill the room a key has; the one past it is a 413 naming the setting; a delete frees room', async () => {
  const key = (await gw.services.keys.create({ name: 'fills' })).key
  const oa = gw.openai('v1', key)
  const first = await oa.files.create({ file: await toFile(bytesOf(40 * 1024), 'a.jsonl'), purpose: 'batch' })
  expect(first.bytes).toBe(40 * 1024)
  const err = await oa.files.create({ file: await toFile(bytesOf(30 * 1024), 'b.jsonl'), purpose: 'batch' }).then(
    () => null,
    (e) => e as { status: number; error: unknown },
  )
  expect(err?.status).toBe(413)
  // the SDK's `error` is the body's
  expect(err?.error).toBe(
    `File exceeds the room left for this key's files: ${40 * 1024} of ${QUOTA} bytes are kept (limits.key_file_bytes); delete files it no longer needs, then upload again`,
  )
  // what is left fits, to the byte, through JSON too
  const json = await fetch(`${gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ filename: 'c.txt', content: 'a'.repeat(QUOTA - 40 * 1024 + 1) }),
  })
  expect(json.status).toBe(413)
  const exact = await fetch(`${gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ filename: 'c.txt', content: 'a'.repeat(QUOTA - 40 * 1024) }),
  })
  expect(exact.status).toBe(200)
  expect(await keptBytes(key)).toBe(QUOTA)
  // another key has a room of its own
  const other = await gw.openai('v1', gw.otherKey).files.create({ file: await toFile(bytesOf(30 * 1024), 'b.jsonl'), purpose: 'batch' })
  expect(other.bytes).toBe(30 * 1024)
  await gw.openai('v1', gw.otherKey).files.delete(other.id)
  // a delete makes room again
  await oa.files.delete(first.id)
  expect((await oa.files.create({ file: await toFile(bytesOf(30 * 1024), 'b.jsonl'), purpose: 'batch' })).bytes).toBe(30 * 1024)
  await onlyListedBlobs()
})

/** What the length-less stream below would send if the server read it to the end: 16 MiB. */
const STREAM_MAX = 256 * QUOTA

test('a stream with no length is cut the moment it crosses the room left, and nothing of it is kept', async () => {
  const key = (await gw.services.keys.create({ name: 'streams' })).key
  const B = 'quota-boundary'
  let sent = 0
  const chunk = bytesOf(16 * 1024)
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`))
    },
    pull(c) {
      // far past the room: the server must not wait for the end. Far past what loopback's socket
      // buffers hold too (several MiB): fetch fills them before the server's answer can come, so
      // a body of 4 MiB was at times sent whole on a busy machine though the server had cut it
      if (sent >= STREAM_MAX) return c.close()
      sent += chunk.length
      c.enqueue(chunk)
    },
  })
  const r = await fetch(`${gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${B}` },
    body,
    // @ts-expect-error Bun/undici option for streamed request bodies
    duplex: 'half',
  })
  expect(r.status).toBe(413)
  expect(((await r.json()) as { error: string }).error).toContain('limits.key_file_bytes')
  expect(sent).toBeLessThan(STREAM_MAX)
  expect(await keptBytes(key)).toBe(0)
  await onlyListedBlobs()
})

test('twenty uploads at once on one key keep no more than its room', async () => {
  const key = (await gw.services.keys.create({ name: 'burst' })).key
  const oa = gw.openai('v1', key)
  const size = 20 * 1024
  const results = await Promise.all(
    Array.from({ length: 20 }, async (_, i) =>
      oa.files.create({ file: await toFile(bytesOf(size), `f${i}.jsonl`), purpose: 'batch' }).then(
        () => 200,
        (e) => (e as { status: number }).status,
      ),
    ),
  )
  expect(results.filter((s) => s !== 200 && s !== 413)).toEqual([])
  const kept = await keptBytes(key)
  expect(kept).toBeLessThanOrEqual(QUOTA)
  // each answered 200 is kept, whole
  expect(results.filter((s) => s === 200).length * size).toBe(kept)
  await onlyListedBlobs()
})
