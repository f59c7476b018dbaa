// S3 away (a proxy in front of the test's s3rver is cut, then restored) or its bucket gone:
// what needed the bytes answers 503 with a JSON error and a request id, never a 500; what
// needs only the database still answers; service returns by itself with the store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freshBucket, s3SkipReason, TEST_S3_ENDPOINT } from '../helpers/s3.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { startTcpProxy, type Proxy } from '../helpers/tcp-proxy.ts'

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

describe.skipIf(!!skip)('S3 down and back', () => {
  let gw: Gateway
  let proxy: Proxy
  const auth = () => ({ authorization: `Bearer ${gw.key}` })
  const upload = (content: string, name = 'x.txt') =>
    fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ content, filename: name }) })
  const multipart = (size: number) => {
    const form = new FormData()
    form.append('purpose', 'user_data')
    form.append('file', new Blob([new Uint8Array(size).fill(98)]), 'big.bin')
    return fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: auth(), body: form })
  }
  const content = (id: string) => fetch(`${gw.url}/api/v1/files/${id}/content`, { headers: auth() })
  const list = async () => ((await (await fetch(`${gw.url}/api/v1/files`, { headers: auth() })).json()) as { data: { id: string; filename: string }[] }).data

  beforeAll(async () => {
    const s3 = new URL(TEST_S3_ENDPOINT!)
    // on an address of its own: a request for the proxy once went out on a kept-alive
    // connection to s3rver itself (opened by other tests' gateways), past the cut
    proxy = startTcpProxy(s3.hostname, Number(s3.port), '127.0.0.2')
    const { env } = await freshBucket()
    gw = await startGateway({ env: { ...NO_LIMITS, ...env, S3_ENDPOINT: `http://127.0.0.2:${proxy.port}` }, logLevel: 'silent' })
  })
  afterAll(async () => {
    proxy?.restore()
    await gw?.stop()
    proxy?.stop()
  })

  test('cut: uploads (JSON, and multipart past one part) and downloads are 503; listing needs no S3', async () => {
    const up = await upload('kept')
    expect(up.status).toBe(200)
    const kept = ((await up.json()) as { id: string }).id
    proxy.cut()
    await expectDown(await upload('lost', 'lost.txt'))
    await expectDown(await multipart(9 * 1024 * 1024))
    await expectDown(await content(kept))
    // nothing was recorded for the refused uploads; the kept file is still listed
    expect((await list()).map((f) => f.filename).sort()).toEqual(['x.txt'])
  }, 30_000)

  test('restored: the same requests succeed, with nothing left over from the cut', async () => {
    proxy.restore()
    const files = await list()
    expect(files).toHaveLength(1)
    const got = await content(files[0]!.id)
    expect(got.status).toBe(200)
    expect(await got.text()).toBe('kept')
    expect((await multipart(9 * 1024 * 1024)).status).toBe(200)
  }, 30_000)

  test('a bucket that does not exist: 503, not 500 and not a missing file', async () => {
    const g = await startGateway({ env: { ...NO_LIMITS, ...(await freshBucket()).env, S3_BUCKET: `sytest-gone-${crypto.randomUUID().slice(0, 8)}` }, logLevel: 'silent' })
    try {
      const res = await fetch(`${g.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'x', filename: 'x.txt' }) })
      await expectDown(res)
    } finally {
      await g.stop()
    }
  })
})
