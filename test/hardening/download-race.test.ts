// A download racing a delete either streams the whole file or answers 404 — never a 500,
// never a truncated body — and every answer carries x-request-id.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '100000', SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000' } })
})
afterAll(async () => {
  await gw.stop()
})

const SIZE = 2 * 1024 * 1024
const auth = () => ({ authorization: `Bearer ${gw.key}` })

test('20 trials of 20 downloads and 10 deletes at once on a 2 MB file: whole file or 404', async () => {
  const outcomes = new Map<string, number>()
  const body = new Uint8Array(SIZE).fill(120)
  for (let trial = 0; trial < 20; trial++) {
    const form = new FormData()
    form.append('purpose', 'user_data')
    form.append('file', new Blob([body]), 'big.bin')
    const up = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: auth(), body: form })
    expect(up.status).toBe(200)
    const id = ((await up.json()) as { id: string }).id
    const gets = Array.from({ length: 20 }, async () => {
      const res = await fetch(`${gw.url}/api/v1/files/${id}/content`, { headers: auth() })
      expect(res.headers.get('x-request-id')).toBeTruthy()
      if (res.status === 200) {
        expect((await res.arrayBuffer()).byteLength).toBe(SIZE)
        return 'whole'
      }
      expect(res.status).toBe(404)
      expect(((await res.json()) as { error: string }).error).toContain('No such file')
      return '404'
    })
    const dels = Array.from({ length: 10 }, async () => {
      const res = await fetch(`${gw.url}/api/v1/files/${id}`, { method: 'DELETE', headers: auth() })
      expect([200, 404]).toContain(res.status)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      await res.arrayBuffer()
      return `delete ${res.status}`
    })
    for (const o of await Promise.all([...gets, ...dels])) outcomes.set(o, (outcomes.get(o) ?? 0) + 1)
  }
  // exactly one delete wins each trial
  expect(outcomes.get('delete 200')).toBe(20)
  expect((outcomes.get('whole') ?? 0) + (outcomes.get('404') ?? 0)).toBe(400)
}, 60_000)

test('a 404 for a 10 KB file id does not echo the whole id', async () => {
  const id = 'file-' + 'x'.repeat(10_000)
  const res = await fetch(`${gw.url}/api/v1/files/${id}`, { headers: auth() })
  expect(res.status).toBe(404)
  expect((await res.text()).length).toBeLessThan(300)
})

test('an error only Bun sees (a body file gone before Bun opens it) still answers JSON {error} with an x-request-id', async () => {
  // Bun.serve's error() handler is the last resort outside the pipeline; the old lazy open
  // reached it. Hand the download route a file body whose path no longer exists.
  const blobs = gw.services.files.blobs as unknown as { get: (key: string) => Promise<unknown> }
  const real = blobs.get
  const up = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ content: 'gone', filename: 'g.txt' }) })
  const id = ((await up.json()) as { id: string }).id
  blobs.get = async () => ({ kind: 'stream', body: Bun.file(`${gw.dataDir}/no-such-blob`), size: 4 })
  try {
    const res = await fetch(`${gw.url}/api/v1/files/${id}/content`, { headers: auth() })
    expect(res.status).toBe(500)
    const rid = res.headers.get('x-request-id')
    expect(rid).toBeTruthy()
    const body = (await res.json()) as { error: string }
    expect(body.error).toContain(rid!)
  } finally {
    blobs.get = real
  }
})
