// resolveMedia on the IR, against a real gateway's files service with two keys: file ids
// resolve only with the caller's key and are inlined (PDF base64, text source, image),
// document URLs are fetched and embedded, image URLs stay URLs unless the target asks,
// refusals name the block's path, and a request with nothing to do comes back as itself.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { GenerationRequest, Part } from '../../src/ir/types.ts'
import { resolveMedia, type MediaTarget } from '../../src/media/resolve.ts'
import { PDF, PNG, TEXT, refusal, startMediaRig, type MediaRig } from './helpers.ts'

let rig: MediaRig
let pdfId: string
let textId: string
let pngId: string
beforeAll(async () => {
  rig = await startMediaRig()
  pdfId = await rig.upload(`data:application/pdf;base64,${PDF.toString('base64')}`, 'notes.pdf')
  textId = await rig.upload(TEXT, 'notes.txt')
  pngId = await rig.upload(`data:image/png;base64,${PNG.toString('base64')}`, 'dot.png')
})
afterAll(() => rig.stop())

const OPENAI: MediaTarget = { family: 'openai' }
const ANTHROPIC: MediaTarget = { family: 'anthropic' }
const file = (fileId: string): Extract<Part, { type: 'document' }> => ({ type: 'document', source: { kind: 'file', fileId } })
const req = (...content: Part[]): GenerationRequest => ({
  model: 'm', stream: false,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'user', content: [{ type: 'text', text: 'Summarise.' }, ...content] }],
})

describe('file ids, with the caller key', () => {
  for (const target of [OPENAI, ANTHROPIC]) {
    test(`${target.family}: PDF → base64 application/pdf, text → text source, image → image part; the input is not changed`, async () => {
      const r = req(file(pdfId), file(textId), { ...file(pngId), cacheControl: { type: 'ephemeral' } })
      const before = structuredClone(r)
      const out = await resolveMedia(r, rig.deps(rig.key1), target)
      expect(out.messages[1]!.content.slice(1)).toEqual([
        // for a GPT model the PDF keeps its stored name (its file part's filename)
        { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: PDF.toString('base64') }, ...(target.family === 'openai' ? { title: 'notes.pdf' } : {}) },
        { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: TEXT } },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') }, cacheControl: { type: 'ephemeral' } },
      ])
      expect(out.messages[0]).toBe(r.messages[0]!) // untouched messages are shared, not copied
      expect(r).toEqual(before)
    })
  }

  test("key 2 naming key 1's file, or anyone naming an unknown id: 400 naming the id and the block", async () => {
    expect(await refusal(resolveMedia(req(file(pdfId)), rig.deps(rig.key2), OPENAI))).toBe(`messages[1].content[1].source.file_id: no such file ${pdfId}`)
    expect(await refusal(resolveMedia(req(file('file-abc')), rig.deps(rig.key1), ANTHROPIC))).toBe('messages[1].content[1].source.file_id: no such file file-abc')
  })

  test('inside tool results and in the system parts, with their paths', async () => {
    const r: GenerationRequest = {
      model: 'm', stream: false,
      system: [{ type: 'text', text: 'sys' }, file(textId)],
      messages: [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { kind: 'file', fileId: pngId } }] }] }],
    }
    const out = await resolveMedia(r, rig.deps(rig.key1), ANTHROPIC)
    expect(out.system![1]).toEqual({ type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: TEXT } })
    expect((out.messages[0]!.content[0] as { content: Part[] }).content[1]).toEqual({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') } })
    expect(await refusal(resolveMedia(r, rig.deps(rig.key2), ANTHROPIC))).toMatch(/^(system\[1\]|messages\[0\]\.content\[0\]\.content\[1\])\.source\.file_id: no such file /)
    const onlyTool = { ...r, system: undefined }
    expect(await refusal(resolveMedia(onlyTool, rig.deps(rig.key2), ANTHROPIC))).toBe(`messages[0].content[0].content[1].source.file_id: no such file ${pngId}`)
  })

  test('an image block naming a PDF is a 400; a file over the size cap is a 400', async () => {
    expect(await refusal(resolveMedia(req({ type: 'image', source: { kind: 'file', fileId: pdfId } }), rig.deps(rig.key1), OPENAI))).toBe(
      'messages[1].content[1].source: expected an image, got a PDF',
    )
    expect(await refusal(resolveMedia(req(file(pdfId)), rig.deps(rig.key1, { maxBytes: 10 }), OPENAI))).toBe(
      `messages[1].content[1].source.file_id: file ${pdfId} is larger than 10 bytes`,
    )
  })
})

describe('URLs', () => {
  const url = (u: string): Part => ({ type: 'document', source: { kind: 'url', url: u } })
  test('document URLs are fetched and embedded for both families: PDF (also when served as octet-stream) and text', async () => {
    for (const target of [OPENAI, ANTHROPIC]) {
      const out = await resolveMedia(req(url(rig.url('/r.pdf')), url(rig.url('/download')), url(rig.url('/r.txt')), url(rig.url('/latin1.txt'))), rig.deps(rig.key1), target)
      expect(out.messages[1]!.content.slice(1).map((p) => (p as { source: unknown }).source)).toEqual([
        { kind: 'base64', mediaType: 'application/pdf', data: PDF.toString('base64') },
        { kind: 'base64', mediaType: 'application/pdf', data: PDF.toString('base64') },
        { kind: 'text', mediaType: 'text/plain', data: TEXT },
        { kind: 'text', mediaType: 'text/plain', data: 'café' },
      ])
    }
  })

  test('a refused or unusable document URL is a 400 naming the block', async () => {
    expect(await refusal(resolveMedia(req(url(rig.url('/to-metadata'))), rig.deps(rig.key1), OPENAI))).toStartWith('messages[1].content[1].source.url: refused: 169.254.169.254')
    expect(await refusal(resolveMedia(req(url('http://10.0.0.1/a.pdf')), rig.deps(rig.key1), ANTHROPIC))).toBe('messages[1].content[1].source.url: refused: 10.0.0.1 is a private address')
    expect(await refusal(resolveMedia(req(url(rig.url('/r.zip'))), rig.deps(rig.key1), OPENAI))).toContain('messages[1].content[1].source.url: application/zip content cannot be sent as a document')
    expect(await refusal(resolveMedia(req(url(rig.url('/missing'))), rig.deps(rig.key1), OPENAI))).toBe('messages[1].content[1].source.url: fetching the URL failed with HTTP 404')
  })

  test('image URLs stay URLs (no fetch: the request is the same object); fetched when the target asks', async () => {
    const r = req({ type: 'image', source: { kind: 'url', url: rig.url('/dot.png') }, detail: 'low' })
    for (const target of [OPENAI, ANTHROPIC]) expect(await resolveMedia(r, rig.deps(rig.key1), target)).toBe(r)
    const out = await resolveMedia(r, rig.deps(rig.key1), { family: 'openai', fetchImageUrls: true })
    expect(out.messages[1]!.content[1]).toEqual({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') }, detail: 'low' })
    expect(await refusal(resolveMedia(req({ type: 'image', source: { kind: 'url', url: rig.url('/r.txt') } }), rig.deps(rig.key1), { family: 'anthropic', fetchImageUrls: true }))).toBe(
      'messages[1].content[1].source: expected an image, got text',
    )
  })
})

test('a request with no file id or document URL is returned as is (base64 and text sources need nothing)', async () => {
  const r = req(
    { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' } },
    { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'x' } },
    { type: 'tool-result', toolCallId: 't', content: 'plain' },
  )
  expect(await resolveMedia(r, rig.deps(rig.key2), OPENAI)).toBe(r)
})
