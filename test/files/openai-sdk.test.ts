// The openai SDK against the unified and alpha roots: what a user of files.create … delete sees.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { storedBlobs } from '../helpers/blobs.ts'
import { startFilesGateway, status, type FilesGateway } from './helpers.ts'

let gw: FilesGateway

beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

const JSONL = '{"custom_id":"1","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[]}}\n'

for (const root of ['v1', 'alpha/v1'] as const) {
  describe(`openai SDK on /api/${root}/files`, () => {
    test('create → retrieve → list → content → delete', async () => {
      const oa = gw.openai(root)
      const created = await oa.files.create({ file: await toFile(Buffer.from(JSONL), 'input.jsonl'), purpose: 'batch' })
      expect(created).toMatchObject({ object: 'file', bytes: JSONL.length, filename: 'input.jsonl', purpose: 'batch', status: 'processed' })
      expect(created.id).toMatch(/^file-[0-9a-f]{32}$/)
      expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(5)
      expect(created.expires_at).toBeUndefined()

      const { _request_id: _a, ...got } = (await oa.files.retrieve(created.id)) as OpenAI.FileObject & { _request_id?: string }
      const { _request_id: _b, ...made } = created as OpenAI.FileObject & { _request_id?: string }
      expect(got).toEqual(made)

      const listed = await oa.files.list()
      expect(listed.data.map((f) => f.id)).toContain(created.id)
      expect(listed.has_more).toBe(false)

      const res = await oa.files.content(created.id)
      expect(res.headers.get('content-type')).toBe('application/jsonl')
      expect(res.headers.get('content-length')).toBe(String(JSONL.length))
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="input.jsonl"; filename*=UTF-8''input.jsonl`)
      // whatever type an uploader named, a browser neither sniffs it nor runs it as a page of this origin
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBe('sandbox')
      expect(await res.text()).toBe(JSONL)

      const deleted = await oa.files.delete(created.id)
      expect({ id: deleted.id, object: deleted.object, deleted: deleted.deleted }).toEqual({ id: created.id, object: 'file', deleted: true })
      expect(await status(oa.files.retrieve(created.id))).toBe(404)
      expect(await status(oa.files.content(created.id))).toBe(404)
      expect(await status(oa.files.delete(created.id))).toBe(404)
      expect((await oa.files.list()).data.map((f) => f.id)).not.toContain(created.id)
    })
  })
}

describe('openai SDK: upload options', () => {
  test('the unified and alpha roots see the same files', async () => {
    const f = await gw.openai('v1').files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data' })
    expect((await gw.openai('alpha/v1').files.retrieve(f.id)).id).toBe(f.id)
  })

  test('expires_after is honoured: expires_at = created_at + seconds', async () => {
    const f = await gw.openai().files.create({
      file: await toFile(Buffer.from('x'), 'x.jsonl'),
      purpose: 'batch',
      expires_after: { anchor: 'created_at', seconds: 7200 },
    })
    expect(f.expires_at).toBe(f.created_at + 7200)
    expect((await gw.openai().files.retrieve(f.id)).expires_at).toBe(f.expires_at)
  })

  test('a part with its own Content-Type keeps it on download', async () => {
    const f = await gw.openai().files.create({ file: await toFile(Buffer.from('a,b\n'), 'data.bin', { type: 'text/csv' }), purpose: 'assistants' })
    const res = await gw.openai().files.content(f.id)
    expect(res.headers.get('content-type')).toBe('text/csv')
  })

  test('purpose is optional (user_data) when the client does not send one', async () => {
    const form = new FormData()
    form.append('file', new Blob(['hello']), 'hello.txt')
    const res = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: form })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ purpose: 'user_data', bytes: 5, filename: 'hello.txt' })
  })

  test('list filters by purpose and pages with the SDK', async () => {
    const oa = gw.openai()
    const evals: string[] = []
    for (let i = 0; i < 3; i++) evals.push((await oa.files.create({ file: await toFile(Buffer.from(`${i}`), `e${i}.txt`), purpose: 'evals' })).id)
    const seen: string[] = []
    for await (const f of oa.files.list({ purpose: 'evals', limit: 2 })) seen.push(f.id)
    expect(seen).toEqual(evals.reverse())
  })
})

describe('upload errors are 4xx that say what is wrong', () => {
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, ...headers }, body })
  const form = (fill: (f: FormData) => void) => {
    const f = new FormData()
    fill(f)
    return f
  }
  const cases: [string, () => Promise<Response>, number, RegExp][] = [
    ['unknown purpose', () => post(form((f) => (f.append('file', new Blob(['x']), 'x'), f.append('purpose', 'fun')))), 400, /^purpose: must be one of/],
    ['no file part', () => post(form((f) => f.append('purpose', 'batch'))), 400, /^file: required/],
    ['two file parts', () => post(form((f) => (f.append('file', new Blob(['x']), 'a'), f.append('file', new Blob(['y']), 'b')))), 400, /^file: give exactly one/],
    ['unknown field', () => post(form((f) => (f.append('file', new Blob(['x']), 'a'), f.append('colour', 'red')))), 400, /^Unknown form field: colour/],
    ['bad expiry', () => post(form((f) => (f.append('file', new Blob(['x']), 'a'), f.append('expires_after[anchor]', 'created_at'), f.append('expires_after[seconds]', '5')))), 400, /^expires_after\[seconds\]: must be an integer from 3600/],
    ['no boundary', () => post('x', { 'content-type': 'multipart/form-data' }), 400, /boundary/],
    ['garbage multipart', () => post('not multipart at all', { 'content-type': 'multipart/form-data; boundary=abc' }), 400, /^Malformed multipart body/],
    ['wrong content type', () => post('hello', { 'content-type': 'text/plain' }), 415, /^Content-Type: must be multipart\/form-data/],
    ['malformed JSON', () => post('{', { 'content-type': 'application/json' }), 400, /^Malformed JSON body/],
    ['JSON without filename', () => post(JSON.stringify({ content: 'x' }), { 'content-type': 'application/json' }), 400, /^filename:/],
  ]
  for (const [what, send, status, message] of cases) {
    test(`${what} → ${status}`, async () => {
      const res = await send()
      expect(res.status).toBe(status)
      expect((await res.json()).error).toMatch(message)
    })
  }

  test('no refused upload leaves bytes behind', async () => {
    const before = await storedBlobs(gw)
    await post(form((f) => (f.append('file', new Blob(['x'.repeat(1000)]), 'x'), f.append('purpose', 'fun'))))
    expect(await storedBlobs(gw)).toEqual(before)
  })

  test('the SDK surfaces the 404 of an unknown id as NotFoundError', async () => {
    const err = await gw.openai().files.retrieve('file-nope').catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.NotFoundError)
    expect(err.error).toBe('No such file: file-nope')
  })
})
