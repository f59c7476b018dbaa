// A file uploaded as a base64 data URL downloads as the raw bytes with
// the URL's Content-Type.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { BETA, startFilesGateway, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

// a 1×1 red PNG
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==',
  'base64',
)

async function uploadJson(root: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${gw.url}${root}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  expect(res.status).toBe(200)
  return res.json()
}

test('beta: PNG data URL in JSON → raw PNG bytes with Content-Type image/png', async () => {
  const meta = await uploadJson(
    '/api/beta/v1/files',
    { content: `data:image/png;base64,${PNG.toString('base64')}`, filename: 'dot.png', mime_type: 'image/png' },
    { 'x-api-key': gw.key, 'anthropic-beta': BETA },
  )
  expect(meta).toMatchObject({ type: 'file', mime_type: 'image/png', size_bytes: PNG.length, filename: 'dot.png' })
  const dl = await gw.anthropic().beta.files.download(meta.id)
  expect(dl.headers.get('content-type')).toBe('image/png')
  expect(dl.headers.get('content-length')).toBe(String(PNG.length))
  const bytes = Buffer.from(await dl.arrayBuffer())
  expect(bytes.equals(PNG)).toBe(true)
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
})

test('unified: the same through the openai SDK, and the URL type wins over a wrong mime_type', async () => {
  const f = await uploadJson(
    '/api/v1/files',
    { content: `data:image/png;base64,${PNG.toString('base64')}`, filename: 'dot', mime_type: 'text/plain', purpose: 'vision' },
    { authorization: `Bearer ${gw.key}` },
  )
  expect(f).toMatchObject({ object: 'file', bytes: PNG.length, purpose: 'vision' })
  const res = await gw.openai().files.content(f.id)
  expect(res.headers.get('content-type')).toBe('image/png')
  expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true)
})

test('plain-text JSON content is stored as its UTF-8 bytes', async () => {
  const f = await uploadJson('/api/alpha/v1/files', { content: 'ünïcode ✓', filename: 'u.txt' }, { authorization: `Bearer ${gw.key}` })
  const res = await gw.openai('alpha/v1').files.content(f.id)
  expect(res.headers.get('content-type')).toBe('text/plain')
  expect(await res.text()).toBe('ünïcode ✓')
})
