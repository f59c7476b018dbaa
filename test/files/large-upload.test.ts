// A 64 MiB multipart upload streamed from a generator comes back byte for byte. (The
// 500 MiB run with memory figures is scripts/bench/upload.ts.)
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { multipartUpload, streamDigest } from '../../scripts/bench/upload.ts'
import { onDisk } from '../helpers/blobs.ts'
import { startFilesGateway, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

const SIZE = 64 * 1024 * 1024

test('64 MiB streamed up and down: identical SHA-256, on both families', async () => {
  const up = multipartUpload(SIZE, { filename: 'big.bin', purpose: 'batch' })
  const res = await fetch(`${gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': up.contentType },
    body: up.stream,
    // @ts-expect-error streamed request body
    duplex: 'half',
  })
  expect(res.status).toBe(200)
  const f = await res.json()
  expect(f).toMatchObject({ bytes: SIZE, filename: 'big.bin', purpose: 'batch' })
  const expected = up.sha256()
  // the record keeps the digest computed while the bytes streamed in
  expect((await gw.services.files.get((await gw.services.keys.list()).find((k) => k.name === 'bootstrap')!.id, f.id))?.sha256).toBe(expected)

  const dl = await gw.openai().files.content(f.id)
  // From disk the length goes out as Content-Length. A download streamed from S3 goes out
  // chunked: Bun drops a handler's Content-Length from a streamed body (oven-sh/bun#10507,
  // docs/scale-out.md); a length it does send must still be the right one.
  if (onDisk(gw)) expect(dl.headers.get('content-length')).toBe(String(SIZE))
  else expect([String(SIZE), null]).toContain(dl.headers.get('content-length'))
  expect(await streamDigest(dl.body!)).toEqual({ sha256: expected, bytes: SIZE })

  const beta = await gw.anthropic().beta.files.download(f.id)
  expect((await streamDigest(beta.body!)).sha256).toBe(expected)
}, 60_000)
