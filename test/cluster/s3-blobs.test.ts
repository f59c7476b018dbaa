// Several instances: file bytes and batch outputs in S3-compatible storage (s3rver here), shared by two
// gateways on one database: uploaded through one, listed, downloaded and deleted through the
// other, with the official `openai` SDK. Nothing lands in the data dir's blobs.
import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import { freshBucket, s3SkipReason } from '../helpers/s3.ts'
import { startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const skip = s3SkipReason()
if (skip) console.warn(skip)

const NO_LIMITS = { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' }
let gws: Gateway[] = []
let dataDir = ''
afterEach(async () => {
  for (const g of gws) await g.stop()
  gws = []
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  dataDir = ''
})

async function pair(extra: Record<string, string> = {}) {
  const b = await freshBucket()
  dataDir = tempDir()
  for (let i = 0; i < 2; i++) gws.push(await startGateway({ dataDir, env: { ...NO_LIMITS, ...b.env, ...extra } }))
  const key = (await gws[0]!.services.keys.create({ name: 's3' })).key
  const sdk = (g: Gateway) => new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
  return { ...b, key, a: gws[0]!, b: gws[1]!, sdk }
}

/** Blob files in a data dir (the disk store's shards), to show nothing went there. */
function diskBlobs(dir: string): string[] {
  try {
    return readdirSync(join(dir, 'blobs')).filter((n) => /^[0-9a-f]{2}$/.test(n))
  } catch {
    return []
  }
}

async function objects(client: Bun.S3Client): Promise<{ key: string; size?: number }[]> {
  return ((await client.list({ maxKeys: 1000 })).contents ?? []) as { key: string; size?: number }[]
}

describe.skipIf(!!skip)('blobs in S3, two gateways', () => {
  test('uploaded through one, listed, downloaded and deleted through the other', async () => {
    const { a, b, sdk, client } = await pair()
    const bytes = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 7) % 251)
    const up = await sdk(a).files.create({ file: new File([bytes], 'data.bin'), purpose: 'user_data' })
    expect(up.bytes).toBe(bytes.byteLength)
    // the bytes are in the bucket, not in the data dir
    const objs = await objects(client)
    expect(objs).toHaveLength(1)
    expect(objs[0]!.size).toBe(bytes.byteLength)
    expect(diskBlobs(dataDir)).toEqual([])

    const listed = await sdk(b).files.list()
    expect(listed.data.map((f) => f.id)).toContain(up.id)
    const got = new Uint8Array(await (await sdk(b).files.content(up.id)).arrayBuffer())
    expect(got.byteLength).toBe(bytes.byteLength)
    expect(Bun.hash(got)).toBe(Bun.hash(bytes))

    const del = await sdk(b).files.delete(up.id)
    expect(del.deleted).toBe(true)
    expect(await sdk(a).files.retrieve(up.id).then(() => 200, (e) => e.status)).toBe(404)
    expect(await objects(client)).toEqual([])
  }, 30_000)

  test('a 24 MiB upload streams into a multipart upload and back out whole', async () => {
    const { a, b, sdk, client } = await pair()
    const size = 24 * 1024 * 1024
    const bytes = new Uint8Array(size).map((_, i) => (i >> 10) & 255)
    const up = await sdk(a).files.create({ file: new File([bytes], 'big.bin'), purpose: 'user_data' })
    expect(up.bytes).toBe(size)
    expect((await objects(client))[0]!.size).toBe(size)
    const res = await fetch(`${b.url}/api/v1/files/${up.id}/content`, { headers: { authorization: `Bearer ${(sdk(b) as any).apiKey}` } })
    expect(res.status).toBe(200)
    // streamed as it comes from S3: chunked (Bun sends a stream body without a length)
    const length = res.headers.get('content-length')
    if (length !== null) expect(Number(length)).toBe(size)
    const got = new Uint8Array(await res.arrayBuffer())
    expect(Bun.hash(got)).toBe(Bun.hash(bytes))
  }, 30_000)

  test("a batch's output file is written to S3 by the instance that ran it and read through the other", async () => {
    const { a, b, sdk, client } = await pair()
    const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ custom_id: `r-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text ok' }] } }))
    const input = await sdk(a).files.create({ file: new File([lines.join('\n')], 'batch.jsonl'), purpose: 'batch' })
    const created = await sdk(a).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    let done = created
    for (let i = 0; i < 500 && done.status !== 'completed'; i++) {
      await Bun.sleep(20)
      done = await sdk(b).batches.retrieve(created.id)
    }
    expect(done.status).toBe('completed')
    expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 })
    const out = (await (await sdk(b).files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(out.map((l) => l.custom_id).sort()).toEqual(['r-0', 'r-1', 'r-2', 'r-3', 'r-4'])
    for (const l of out) expect(l.response.status_code).toBe(200)
    // input and output both in the bucket; nothing on disk
    expect((await objects(client)).length).toBe(2)
    expect(diskBlobs(dataDir)).toEqual([])
  }, 30_000)

  test('redirect_downloads: content answers a redirect to a short-lived presigned URL, which the SDK follows', async () => {
    const { a, b, sdk } = await pair({ SWITCHYARD_S3_REDIRECT_DOWNLOADS: 'true' })
    const up = await sdk(a).files.create({ file: new File(['hello from s3\n'], 'hi.txt'), purpose: 'user_data' })
    const res = await fetch(`${b.url}/api/v1/files/${up.id}/content`, { headers: { authorization: `Bearer ${(sdk(b) as any).apiKey}` }, redirect: 'manual' })
    expect([302, 307]).toContain(res.status)
    const location = res.headers.get('location')!
    expect(location).toContain('X-Amz-Expires=300')
    expect(location).toContain('X-Amz-Signature=')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(await (await fetch(location)).text()).toBe('hello from s3\n')
    expect(await (await sdk(b).files.content(up.id)).text()).toBe('hello from s3\n')
    // deleted: a 404, no redirect to nothing
    await sdk(a).files.delete(up.id)
    const gone = await fetch(`${b.url}/api/v1/files/${up.id}/content`, { headers: { authorization: `Bearer ${(sdk(b) as any).apiKey}` }, redirect: 'manual' })
    expect(gone.status).toBe(404)
  }, 30_000)

  test('a delete racing downloads (on both instances): the whole file or a 404, never a 500 or a cut body', async () => {
    const { a, b, key } = await pair()
    const SIZE = 2 * 1024 * 1024
    const body = new Uint8Array(SIZE).fill(120)
    const seen = new Map<string, number>()
    for (let trial = 0; trial < 8; trial++) {
      const form = new FormData()
      form.append('purpose', 'user_data')
      form.append('file', new Blob([body]), 'race.bin')
      const up = await fetch(`${a.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
      expect(up.status).toBe(200)
      const id = ((await up.json()) as { id: string }).id
      const gets = Array.from({ length: 12 }, async (_, i) => {
        const res = await fetch(`${(i % 2 ? a : b).url}/api/v1/files/${id}/content`, { headers: { authorization: `Bearer ${key}` } })
        expect(res.headers.get('x-request-id')).toBeTruthy()
        if (res.status === 200) {
          expect((await res.arrayBuffer()).byteLength).toBe(SIZE)
          return 'whole'
        }
        expect(res.status).toBe(404)
        expect(((await res.json()) as { error: string }).error).toContain('No such file')
        return '404'
      })
      const dels = Array.from({ length: 4 }, async (_, i) => {
        const res = await fetch(`${(i % 2 ? b : a).url}/api/v1/files/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } })
        expect([200, 404]).toContain(res.status)
        await res.arrayBuffer()
        return `delete ${res.status}`
      })
      for (const o of await Promise.all([...gets, ...dels])) seen.set(o, (seen.get(o) ?? 0) + 1)
    }
    expect(seen.get('delete 200')).toBe(8)
    expect((seen.get('whole') ?? 0) + (seen.get('404') ?? 0)).toBe(96)
  }, 60_000)
})
