// The upload limit: refused up front from Content-Length, or the moment a streamed body
// crosses it, with nothing left in the blob store (disk or S3) or in the database.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { storedBlobs } from '../helpers/blobs.ts'
import { startFilesGateway, type FilesGateway } from './helpers.ts'

const LIMIT = 1024 * 1024
let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway({ env: { SWITCHYARD_MAX_UPLOAD_BYTES: String(LIMIT) } })
})
afterAll(() => gw.stop())

const B = 'limit-test-boundary'
const head = (name = 'big.bin') => Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`)
const tail = Buffer.from(`\r\n--${B}--\r\n`)

function post(body: BodyInit, extra: Record<string, string> = {}) {
  return fetch(`${gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': `multipart/form-data; boundary=${B}`, ...extra },
    body,
    // @ts-expect-error Bun/undici option for streamed request bodies
    duplex: 'half',
  })
}

async function nothingStored() {
  // the refusal is answered before the temp file is removed; give it a moment
  for (let i = 0; i < 50 && (await storedBlobs(gw)).length > 0; i++) await Bun.sleep(20)
  expect(await storedBlobs(gw)).toEqual([])
  expect(await gw.services.storage.sql.get('SELECT count(*) AS n FROM files')).toEqual({ n: 0 })
}

test('exactly the limit is accepted', async () => {
  const res = await post(new Blob([head(), new Uint8Array(LIMIT), tail]))
  expect(res.status).toBe(200)
  const f = await res.json()
  expect(f.bytes).toBe(LIMIT)
  await gw.openai().files.delete(f.id)
})

test('a declared Content-Length over the limit → 413 before the body is read', async () => {
  const res = await post(new Blob([head(), new Uint8Array(LIMIT + 200 * 1024), tail]))
  expect(res.status).toBe(413)
  expect(await res.json()).toEqual({ error: `File exceeds the upload limit of ${LIMIT} bytes` })
  await nothingStored()
})

test('a streamed body with no Content-Length → 413 as soon as the file crosses the limit', async () => {
  let sent = 0
  const chunk = new Uint8Array(64 * 1024).fill(7)
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(head())
    },
    async pull(c) {
      // up to 8 MiB, far more than the limit: the server must not wait for the end
      if (sent >= 8 * LIMIT) return c.close()
      sent += chunk.length
      c.enqueue(chunk)
      await Bun.sleep(1)
    },
  })
  const res = await post(body).catch((e: Error) => e)
  if (res instanceof Response) {
    expect(res.status).toBe(413)
    expect((await res.json()).error).toBe(`File exceeds the upload limit of ${LIMIT} bytes`)
  }
  expect(sent).toBeLessThan(8 * LIMIT)
  await nothingStored()
})

test('a JSON upload whose decoded content is over the limit → 413', async () => {
  const res = await fetch(`${gw.url}/api/beta/v1/files`, {
    method: 'POST',
    headers: { 'x-api-key': gw.key, 'content-type': 'application/json' },
    body: JSON.stringify({ content: `data:application/octet-stream;base64,${Buffer.alloc(LIMIT + 1).toString('base64')}`, filename: 'x.bin' }),
  })
  expect(res.status).toBe(413)
  expect((await res.json()).error).toBe(`File exceeds the upload limit of ${LIMIT} bytes`)
  await nothingStored()
})

test('a raw CR or LF inside a part header (a filename that breaks its line) is a 400, not a file stored under half its name', async () => {
  for (const name of ['a\nb.txt', 'a\rb.txt', 'a\r\nb.txt']) {
    const res = await post(new Blob([head(name), 'hello', tail]))
    expect(res.status).toBe(400)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(((await res.json()) as { error: string }).error).toContain('Multipart part headers are malformed')
  }
  await nothingStored()
})
