// S3 unreachable (an endpoint whose name does not resolve) or its bucket gone: what needs the bytes
// answers 503 with a JSON error and a request id, never a 500; what needs only the database
// still answers. Two gateways on one data dir and one bucket, the second with a dead endpoint:
// a file the first stored is listed by the second, whose download is the 503.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { freshBucket, s3SkipReason } from '../helpers/s3.ts'
import { startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const skip = s3SkipReason()
if (skip) console.warn(skip)

const NO_LIMITS = { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' }
const DOWN = 'Service unavailable: the file store (S3) did not answer; nothing was changed. Retry shortly'

async function expectDown(res: Response) {
  expect(res.status).toBe(503)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(res.headers.get('retry-after')).toBe('1')
  expect(await res.json()).toEqual({ error: DOWN })
}

const upload = (g: Gateway, content: string, name = 'x.txt') =>
  fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content, filename: name }) })

describe.skipIf(!!skip)('S3 unreachable, or its bucket gone', () => {
  let dataDir: string
  let up: Gateway
  let down: Gateway
  beforeAll(async () => {
    dataDir = tempDir()
    const { env } = await freshBucket()
    up = await startGateway({ dataDir, env: { ...NO_LIMITS, ...env }, logLevel: 'silent' })
    // The same bucket, by way of a name that never resolves (.invalid, RFC 2606). A port on
    // 127.0.0.1 where nothing listened was not enough: in full runs an upload through it was
    // sometimes stored (200) all the same, the cause not found.
    down = await startGateway({ dataDir, env: { ...NO_LIMITS, ...env, S3_ENDPOINT: 'http://s3-down.invalid:9000' }, logLevel: 'silent' })
    down.key = up.key
  })
  afterAll(async () => {
    await down?.stop()
    await up?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('uploads (JSON, and multipart past one part) and downloads are 503; listing needs no S3', async () => {
    const stored = await upload(up, 'kept')
    expect(stored.status).toBe(200)
    const kept = ((await stored.json()) as { id: string }).id

    await expectDown(await upload(down, 'lost', 'lost.txt'))
    const form = new FormData()
    form.append('purpose', 'user_data')
    form.append('file', new Blob([new Uint8Array(9 * 1024 * 1024).fill(98)]), 'big.bin')
    await expectDown(await fetch(`${down.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${down.key}` }, body: form }))
    await expectDown(await fetch(`${down.url}/api/v1/files/${kept}/content`, { headers: { authorization: `Bearer ${down.key}` } }))

    // nothing was recorded for the refused uploads; the stored file is listed by both
    for (const g of [up, down]) {
      const list = (await (await fetch(`${g.url}/api/v1/files`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { data: { filename: string }[] }
      expect(list.data.map((f) => f.filename)).toEqual(['x.txt'])
    }
    // and the bytes are whole where S3 answers
    expect(await (await fetch(`${up.url}/api/v1/files/${kept}/content`, { headers: { authorization: `Bearer ${up.key}` } })).text()).toBe('kept')
  }, 30_000)

  test('a bucket that does not exist: 503, not 500 and not a missing file', async () => {
    const g = await startGateway({ env: { ...NO_LIMITS, ...(await freshBucket()).env, S3_BUCKET: `sytest-gone-${crypto.randomUUID().slice(0, 8)}` }, logLevel: 'silent' })
    try {
      await expectDown(await upload(g, 'x'))
    } finally {
      await g.stop()
    }
  })
})
