import { describe, expect, test } from 'bun:test'
import { decodeContent, jsonUpload } from '../../src/files/json-upload.ts'
import { anthropicListQuery, openAIListQuery } from '../../src/files/list-params.ts'
import { contentDisposition, decodePageToken, encodePageToken, toAnthropicList, toOpenAIFile } from '../../src/files/shapes.ts'
import type { FileRecord } from '../../src/files/types.ts'
import { multipartMeta } from '../../src/files/upload-params.ts'
import { HttpError } from '../../src/http/errors.ts'

const T = 1_800_000_000_000

function fails(fn: () => unknown, status: number, message: RegExp) {
  let err: unknown
  try {
    fn()
  } catch (e) {
    err = e
  }
  expect(err).toBeInstanceOf(HttpError)
  expect((err as HttpError).status).toBe(status)
  expect((err as HttpError).message).toMatch(message)
}

describe('multipart upload metadata', () => {
  test('defaults: purpose user_data, type from the filename when the part has none, no expiry', () => {
    expect(multipartMeta({}, { filename: 'in.jsonl' }, T)).toEqual({ filename: 'in.jsonl', purpose: 'user_data', mimeType: 'application/jsonl', expiresAt: null })
    expect(multipartMeta({}, { filename: 'blob' }, T).mimeType).toBe('application/octet-stream')
    expect(multipartMeta({}, { filename: 'a.png', contentType: 'application/octet-stream' }, T).mimeType).toBe('image/png')
    expect(multipartMeta({}, { filename: 'a.bin', contentType: 'text/plain; charset=utf-8' }, T).mimeType).toBe('text/plain; charset=utf-8')
  })

  test('expires_after[anchor]/[seconds] and expires_in_seconds set the expiry', () => {
    const f = { filename: 'x' }
    expect(multipartMeta({ purpose: 'batch', 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '172800' }, f, T).expiresAt).toBe(T + 172_800_000)
    expect(multipartMeta({ expires_in_seconds: '60' }, f, T).expiresAt).toBe(T + 60_000)
  })

  const bad: [Record<string, string>, { filename?: string; contentType?: string }, RegExp][] = [
    [{ purpose: 'fun' }, { filename: 'x' }, /^purpose: must be one of assistants, batch/],
    [{ 'expires_after[anchor]': 'now', 'expires_after[seconds]': '3600' }, { filename: 'x' }, /^expires_after\[anchor\]: must be "created_at"/],
    [{ 'expires_after[anchor]': 'created_at' }, { filename: 'x' }, /^expires_after\[seconds\]: required/],
    [{ 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '10' }, { filename: 'x' }, /^expires_after\[seconds\]: must be an integer from 3600 to 2592000/],
    [{ 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '1.5' }, { filename: 'x' }, /^expires_after\[seconds\]/],
    [{ expires_in_seconds: '-1' }, { filename: 'x' }, /^expires_in_seconds: must be an integer/],
    [{}, { filename: 'evil\r\nname' }, /^file: filename: must not contain control characters/],
    [{}, { filename: 'x', contentType: 'text/plain\r\nSet-Cookie: a=b' }, /^file: Content-Type: must be a MIME type/],
  ]
  for (const [fields, part, message] of bad) {
    test(`400 ${message.source}`, () => fails(() => multipartMeta(fields, part, T), 400, message))
  }
})

describe('JSON uploads', () => {
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')

  test('a base64 data URL is decoded and typed by the URL', () => {
    const { meta, bytes } = jsonUpload({ content: `data:image/png;base64,${PNG.toString('base64')}`, filename: 'p.png', mime_type: 'text/plain' }, T)
    expect(Buffer.from(bytes).equals(PNG)).toBe(true)
    expect(meta.mimeType).toBe('image/png')
  })

  test('plain text is stored as UTF-8, typed by mime_type, then the name, then text/plain', () => {
    expect(Buffer.from(jsonUpload({ content: 'héllo', filename: 'a' }, T).bytes).toString()).toBe('héllo')
    expect(jsonUpload({ content: 'x', filename: 'a', mime_type: 'text/csv' }, T).meta.mimeType).toBe('text/csv')
    expect(jsonUpload({ content: '{}', filename: 'a.json' }, T).meta.mimeType).toBe('application/json')
    expect(jsonUpload({ content: 'x', filename: 'notes' }, T).meta.mimeType).toBe('text/plain')
  })

  test('a percent-encoded data URL and URL-safe base64', () => {
    expect(Buffer.from(decodeContent('data:text/plain,a%20b').bytes).toString()).toBe('a b')
    expect(Buffer.from(decodeContent('data:application/octet-stream;base64,-_8=').bytes)).toEqual(Buffer.from([0xfb, 0xff]))
  })

  test('expiry and purpose in JSON', () => {
    const { meta } = jsonUpload({ content: 'x', filename: 'a', purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } }, T)
    expect(meta).toMatchObject({ purpose: 'batch', expiresAt: T + 3_600_000 })
  })

  const bad: [unknown, RegExp][] = [
    [[], /^Request body must be a JSON object/],
    [{ filename: 'a' }, /^content: required/],
    [{ content: 'x' }, /^filename: must be a non-empty string/],
    [{ content: 'x', filename: 'a', extra: 1 }, /^Unknown field\(s\): extra/],
    [{ content: 'data:image/png;base64,@@@', filename: 'a' }, /^content: data URL is not valid base64/],
    [{ content: 'data:image/png;base64,AAAAA', filename: 'a' }, /^content: data URL is not valid base64/],
    [{ content: 'data:bad type;base64,AAAA', filename: 'a' }, /^content: data URL media type/],
    [{ content: 'x', filename: 'a', mime_type: 'nope' }, /^mime_type: must be a MIME type/],
    [{ content: 'x', filename: 'a', expires_after: 5 }, /^expires_after: must be an object/],
  ]
  for (const [body, message] of bad) {
    test(`400 ${message.source}`, () => fails(() => jsonUpload(body, T), 400, message))
  }
})

describe('list parameters', () => {
  const q = (s: string) => new URLSearchParams(s)
  test('defaults per family', () => {
    expect(openAIListQuery(q(''))).toEqual({ limit: 10000, after: undefined, purpose: undefined, order: 'desc' })
    expect(anthropicListQuery(q('beta=true'))).toMatchObject({ limit: 20, order: 'desc' })
  })
  test('limit bounds name the parameter and the range', () => {
    fails(() => openAIListQuery(q('limit=0')), 400, /^limit: must be an integer from 1 to 10000/)
    fails(() => openAIListQuery(q('limit=10001')), 400, /^limit: must be an integer from 1 to 10000/)
    fails(() => anthropicListQuery(q('limit=1001')), 400, /^limit: must be an integer from 1 to 1000/)
    fails(() => anthropicListQuery(q('limit=abc')), 400, /^limit:/)
    fails(() => openAIListQuery(q('order=up')), 400, /^order:/)
  })
  test('one Anthropic cursor at a time; page tokens carry their direction', () => {
    fails(() => anthropicListQuery(q('after_id=a&before_id=b')), 400, /after_id, before_id: give at most one/)
    fails(() => anthropicListQuery(q('page=nonsense')), 400, /^page: not a page token/)
    expect(anthropicListQuery(q(`page=${encodePageToken({ before: 'file_1' })}`))).toMatchObject({ before: 'file_1', after: undefined, cursorParam: 'page' })
    expect(decodePageToken(encodePageToken({ after: 'file-2' }))).toEqual({ after: 'file-2' })
  })
})

describe('wire shapes', () => {
  const rec: FileRecord = {
    id: 'file-1', apiKeyId: 'k', filename: 'a.txt', purpose: 'batch', bytes: 3, mimeType: 'text/plain',
    createdAt: T + 999, expiresAt: null, blobKey: 'ab/cd', sha256: null,
  }
  test('OpenAI: epoch seconds, no expires_at when none', () => {
    expect(toOpenAIFile(rec)).toEqual({ id: 'file-1', object: 'file', bytes: 3, created_at: 1_800_000_000, filename: 'a.txt', purpose: 'batch', status: 'processed', status_details: null })
    expect(toOpenAIFile({ ...rec, expiresAt: T + 3_600_000 }).expires_at).toBe(1_800_003_600)
  })
  test('Anthropic list: next_page only when there is more', () => {
    const more = toAnthropicList({ data: [rec], hasMore: true }, 'after')
    expect(more).toMatchObject({ has_more: true, first_id: 'file-1', last_id: 'file-1', data: [{ type: 'file', created_at: '2027-01-15T08:00:00.999Z', size_bytes: 3, mime_type: 'text/plain', downloadable: true }] })
    expect(decodePageToken(more.next_page!)).toEqual({ after: 'file-1' })
    expect(toAnthropicList({ data: [], hasMore: false }, 'after') as unknown).toEqual({ data: [], has_more: false, first_id: null, last_id: null, next_page: null })
  })
  test('Content-Disposition never carries a raw quote, CR/LF or non-ASCII', () => {
    expect(contentDisposition('a.txt')).toBe(`attachment; filename="a.txt"; filename*=UTF-8''a.txt`)
    const cd = contentDisposition('ré"sumé\\.pdf')
    expect(cd).toBe(`attachment; filename="r__sum__.pdf"; filename*=UTF-8''r%C3%A9%22sum%C3%A9%5C.pdf`)
    expect(/[^\x20-\x7e]/.test(cd)).toBe(false)
  })
})
