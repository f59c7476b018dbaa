// The @anthropic-ai/sdk beta files API against /api/beta, with Bearer (what the SDK sends)
// and with x-api-key (what @ai-sdk/anthropic and curl users send).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic, { toFile } from '@anthropic-ai/sdk'
import { BETA, startFilesGateway, status, xApiKeyFetch, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

const clients: [string, () => Anthropic][] = [
  ['Bearer', () => gw.anthropic()],
  ['x-api-key', () => new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0, fetch: xApiKeyFetch() })],
]

for (const [auth, client] of clients) {
  describe(`anthropic SDK beta.files with ${auth}`, () => {
    test('upload → retrieveMetadata → list → download → delete', async () => {
      const an = client()
      const text = 'The quick brown fox.\n'
      const up = await an.beta.files.upload({ file: await toFile(Buffer.from(text), 'fox.txt', { type: 'text/plain' }), betas: [BETA] })
      // Bun's File adds the charset to the part's Content-Type; the part's type is kept as sent
      expect(up).toMatchObject({ type: 'file', filename: 'fox.txt', mime_type: 'text/plain;charset=utf-8', size_bytes: text.length, downloadable: true, expires_at: null })
      expect(up.id).toMatch(/^file_[0-9a-f]{32}$/)
      expect(Math.abs(Date.parse(up.created_at) - Date.now())).toBeLessThan(5000)
      expect(up.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)

      const meta = await an.beta.files.retrieveMetadata(up.id, { betas: [BETA] })
      expect(meta).toMatchObject({ id: up.id, filename: 'fox.txt', size_bytes: text.length, mime_type: up.mime_type })

      const ids: string[] = []
      for await (const f of an.beta.files.list({ betas: [BETA] })) ids.push(f.id)
      expect(ids).toContain(up.id)

      const res = await an.beta.files.download(up.id, { betas: [BETA] })
      expect(res.headers.get('content-type')).toBe(up.mime_type)
      expect(res.headers.get('content-length')).toBe(String(text.length))
      expect(res.headers.get('content-disposition')).toContain('filename="fox.txt"')
      expect(await res.text()).toBe(text)

      const del = await an.beta.files.delete(up.id, { betas: [BETA] })
      expect({ id: del.id, type: del.type }).toEqual({ id: up.id, type: 'file_deleted' })
      expect(await status(an.beta.files.retrieveMetadata(up.id))).toBe(404)
      expect(await status(an.beta.files.download(up.id))).toBe(404)
      expect(await status(an.beta.files.delete(up.id))).toBe(404)
    })
  })
}

describe('beta files: headers and options', () => {
  test('anthropic-version / anthropic-beta and beta-version / beta-beta are all optional', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'anthropic-version': '2023-06-01' },
      { 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA },
      { 'beta-version': '2023-06-01', 'beta-beta': BETA },
    ]
    for (const extra of variants) {
      const form = new FormData()
      form.append('file', new Blob(['hi'], { type: 'text/plain' }), 'hi.txt')
      const res = await fetch(`${gw.url}/api/beta/v1/files`, { method: 'POST', headers: { 'x-api-key': gw.key, ...extra }, body: form })
      expect(res.status).toBe(200)
      const id = (await res.json()).id
      const get = await fetch(`${gw.url}/api/beta/v1/files/${id}`, { headers: { 'x-api-key': gw.key, ...extra } })
      expect(get.status).toBe(200)
    }
  })

  test('x-api-key is refused on the unified root (Bearer only there)', async () => {
    const res = await fetch(`${gw.url}/api/v1/files`, { headers: { 'x-api-key': gw.key } })
    expect(res.status).toBe(401)
  })

  test('expires_in_seconds is honoured', async () => {
    const an = gw.anthropic()
    const up = await an.beta.files.upload({ file: await toFile(Buffer.from('x'), 'x.txt'), expires_in_seconds: 600, betas: [BETA] })
    expect(Date.parse(up.expires_at!) - Date.parse(up.created_at)).toBe(600_000)
  })

  test('a file uploaded through the OpenAI surface is visible on the beta root (one store)', async () => {
    const f = await gw.openai().files.create({ file: await toFile(Buffer.from('{}'), 'x.json'), purpose: 'user_data' })
    const meta = await gw.anthropic().beta.files.retrieveMetadata(f.id)
    expect(meta).toMatchObject({ id: f.id, mime_type: 'application/json', size_bytes: 2 })
  })
})
