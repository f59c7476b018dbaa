// The pass-through bodies: a chat body's file-id parts and a messages body's file-id media
// and document URLs are inlined with the caller's key (another key's id is a 400 naming
// it), everything else goes as the client sent it, the input is never changed, and a body
// with nothing to do is returned as the very same object.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { resolveChatBodyFiles } from '../../src/surfaces/chat/media.ts'
import { resolveMessagesBodyMedia } from '../../src/surfaces/messages/media.ts'
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

const b64 = (b: Buffer) => b.toString('base64')

describe('resolveChatBodyFiles', () => {
  const chat = (...parts: unknown[]) => ({
    model: 'gpt-4o-mini',
    temperature: 0.2,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Read these.' }, ...parts] }],
  })

  test('PDF → file_data with the stored name, text → a text part, image → image_url; other fields and parts as sent; input unchanged', async () => {
    const body = chat(
      { type: 'file', file: { file_id: pdfId } },
      { type: 'file', file: { file_id: textId, filename: 'minutes.txt' }, cache_control: { type: 'ephemeral' } },
      { type: 'file', file: { file_id: pngId } },
      { type: 'file', file: { filename: 'x.pdf', file_data: `data:application/pdf;base64,${b64(PDF)}` } },
    )
    const before = structuredClone(body)
    const out: any = await resolveChatBodyFiles(body, rig.deps(rig.key1))
    expect(out.messages[1]!.content).toEqual([
      { type: 'text', text: 'Read these.' },
      { type: 'file', file: { filename: 'notes.pdf', file_data: `data:application/pdf;base64,${b64(PDF)}` } },
      { type: 'text', text: `minutes.txt\n\n${TEXT}`, cache_control: { type: 'ephemeral' } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      { type: 'file', file: { filename: 'x.pdf', file_data: `data:application/pdf;base64,${b64(PDF)}` } },
    ])
    expect(out.temperature).toBe(0.2)
    expect(out.messages[0]).toBe(body.messages[0]!)
    expect(body).toEqual(before)
  })

  test("key 2 sending key 1's file id, or an unknown id, gets a 400 naming it", async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'file', file: { file_id: pdfId } }] }] }
    expect(await refusal(resolveChatBodyFiles(body, rig.deps(rig.key2)))).toBe(`messages[1].content[0].file.file_id: no such file ${pdfId}`)
    body.messages[1]!.content = [{ type: 'file', file: { file_id: 'file-abc' } }]
    expect(await refusal(resolveChatBodyFiles(body, rig.deps(rig.key1)))).toBe('messages[1].content[0].file.file_id: no such file file-abc')
  })

  test('a body without file ids is returned as the same object', async () => {
    const body = chat({ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } })
    expect(await resolveChatBodyFiles(body, rig.deps(rig.key2))).toBe(body)
    const plain = { model: 'm', messages: [{ role: 'user', content: 'hello' }] }
    expect(await resolveChatBodyFiles(plain, rig.deps(rig.key2))).toBe(plain)
  })
})

describe('resolveMessagesBodyMedia', () => {
  const doc = (source: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'document', source, ...extra })

  test('file ids in messages, tool_result content and system blocks are inlined; image URLs untouched; input unchanged', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: [{ type: 'text', text: 'sys' }, doc({ type: 'file', file_id: textId }, { title: 'Minutes' })],
      messages: [
        { role: 'user', content: [doc({ type: 'file', file_id: pdfId }, { citations: { enabled: true } }), { type: 'image', source: { type: 'file', file_id: pngId } }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'look', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'found' }, doc({ type: 'file', file_id: pngId }, { title: 'Dot', cache_control: { type: 'ephemeral' } })] }] },
      ],
    }
    const before = structuredClone(body)
    const out: any = await resolveMessagesBodyMedia(body, rig.deps(rig.key1))
    expect(out.system).toEqual([{ type: 'text', text: 'sys' }, doc({ type: 'text', media_type: 'text/plain', data: TEXT }, { title: 'Minutes' })])
    expect(out.messages[0]!.content).toEqual([
      doc({ type: 'base64', media_type: 'application/pdf', data: b64(PDF) }, { citations: { enabled: true } }),
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(PNG) } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    ])
    expect(out.messages[1]).toBe(body.messages[1]!)
    // an image named as a document goes as an image block (documents take no images)
    expect((out.messages[2]!.content[0] as { content: unknown[] }).content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(PNG) }, cache_control: { type: 'ephemeral' } })
    expect(body).toEqual(before)
  })

  test('document URLs are fetched and embedded: PDF as base64, text inline', async () => {
    const body = { model: 'c', messages: [{ role: 'user', content: [doc({ type: 'url', url: rig.url('/r.pdf') }), doc({ type: 'url', url: rig.url('/r.txt') })] }] }
    const out: any = await resolveMessagesBodyMedia(body, rig.deps(rig.key1))
    expect(out.messages[0]!.content).toEqual([doc({ type: 'base64', media_type: 'application/pdf', data: b64(PDF) }), doc({ type: 'text', media_type: 'text/plain', data: TEXT })])
  })

  test('refusals name the block: another key, unknown id, private URL, a redirect to metadata, in system and tool results', async () => {
    const msgs = (block: unknown) => ({ model: 'c', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, block] }] })
    expect(await refusal(resolveMessagesBodyMedia(msgs(doc({ type: 'file', file_id: pdfId })), rig.deps(rig.key2)))).toBe(`messages[0].content[1].source.file_id: no such file ${pdfId}`)
    expect(await refusal(resolveMessagesBodyMedia(msgs({ type: 'image', source: { type: 'file', file_id: 'file_nope' } }), rig.deps(rig.key1)))).toBe('messages[0].content[1].source.file_id: no such file file_nope')
    expect(await refusal(resolveMessagesBodyMedia(msgs(doc({ type: 'url', url: 'http://10.0.0.1/a.pdf' })), rig.deps(rig.key1)))).toBe('messages[0].content[1].source.url: refused: 10.0.0.1 is a private address')
    expect(await refusal(resolveMessagesBodyMedia(msgs(doc({ type: 'url', url: rig.url('/to-metadata') })), rig.deps(rig.key1)))).toStartWith('messages[0].content[1].source.url: refused: 169.254.169.254 is a linkLocal address')
    expect(await refusal(resolveMessagesBodyMedia({ model: 'c', system: [doc({ type: 'file', file_id: pdfId })], messages: [] }, rig.deps(rig.key2)))).toBe(`system[0].source.file_id: no such file ${pdfId}`)
    const tool = msgs({ type: 'tool_result', tool_use_id: 't', content: [doc({ type: 'url', url: 'http://[::1]/x' })] })
    expect(await refusal(resolveMessagesBodyMedia(tool, rig.deps(rig.key1)))).toBe('messages[0].content[1].content[0].source.url: refused: ::1 is a loopback address')
    expect(await refusal(resolveMessagesBodyMedia(msgs({ type: 'image', source: { type: 'file', file_id: textId } }), rig.deps(rig.key1)))).toBe('messages[0].content[1].source: expected an image, got text')
  })

  test('fetchImageUrls: image URLs fetched too (for an upstream that cannot take them)', async () => {
    const body = { model: 'c', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: rig.url('/dot.png') } }] }] }
    expect(await resolveMessagesBodyMedia(body, rig.deps(rig.key1))).toBe(body)
    const out: any = await resolveMessagesBodyMedia(body, rig.deps(rig.key1), { fetchImageUrls: true })
    expect(out.messages[0]!.content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(PNG) } })
  })

  test('a body with no file ids or document URLs is returned as the same object', async () => {
    const body = {
      model: 'c', system: 'plain system',
      messages: [{ role: 'user', content: [doc({ type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }), doc({ type: 'text', media_type: 'text/plain', data: 'x' }), { type: 'tool_result', tool_use_id: 't', content: 'ok' }] }, { role: 'user', content: 'hi' }],
    }
    expect(await resolveMessagesBodyMedia(body, rig.deps(rig.key2))).toBe(body)
  })
})
