// Document URLs end to end, fetched and embedded for both families. The document server
// runs on 127.0.0.1, so this rig's resolver allow-lists that one address (the policy is
// injectable); every other private class stays refused, on every redirect hop.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'
import { createMediaResolver } from '../../src/media/resolve.ts'

const PDF = Buffer.from('%PDF-1.4\n%%EOF\n')
const TEXT = 'Quarterly numbers: up 4%.'
let rig: MessagesRig
let docs: ReturnType<typeof Bun.serve>
const at = (p: string) => `http://127.0.0.1:${docs.port}${p}`

beforeAll(async () => {
  docs = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const p = new URL(req.url).pathname
      if (p === '/r.pdf') return new Response(PDF, { headers: { 'content-type': 'application/pdf' } })
      if (p === '/r.txt') return new Response(TEXT, { headers: { 'content-type': 'text/plain; charset=utf-8' } })
      if (p === '/r.bin') return new Response(new Uint8Array([1, 2, 3]), { headers: { 'content-type': 'application/zip' } })
      if (p === '/to-metadata') return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
      return new Response('no', { status: 404 })
    },
  })
  rig = await startMessagesRig()
  rig.gw.services.media = createMediaResolver({
    files: rig.gw.services.files,
    policy: { allowPrivate: false, maxBytes: 1 << 20, timeoutMs: 2000, allowAddresses: new Set(['127.0.0.1']) },
  })
})
afterAll(async () => {
  await rig.stop()
  docs.stop(true)
})

const doc = (url: string) => [{ role: 'user' as const, content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'Summarise.' }] as any }]

describe('document URLs, fetched and embedded', () => {
  test('claude model (pass-through): a PDF URL goes as base64, a text URL as a text source', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: doc(at('/r.pdf')) })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0].source).toEqual({ type: 'base64', media_type: 'application/pdf', data: PDF.toString('base64') })
    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: doc(at('/r.txt')) }).finalMessage()
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0].source).toEqual({ type: 'text', media_type: 'text/plain', data: TEXT })
  })

  test('gpt model (IR): a PDF URL goes as a file part with file_data, a text URL as text', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, messages: doc(at('/r.pdf')) })
    const part = rig.up.requests.at(-1)!.json().messages[0].content[0]
    expect(part.type).toBe('file')
    expect(part.file.file_data).toBe(`data:application/pdf;base64,${PDF.toString('base64')}`)
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, messages: doc(at('/r.txt')) })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0]).toEqual({ type: 'text', text: TEXT })
  })

  test('a redirect to the metadata address, a private address, a non-document type: 400 naming the block, nothing upstream', async () => {
    for (const [url, why] of [[at('/to-metadata'), '169.254.169.254'], ['http://10.0.0.1/a.pdf', '10.0.0.1 is a private address'], [at('/r.bin'), 'cannot be sent as a document'], [at('/missing'), 'HTTP 404']]) {
      for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
        const n = rig.up.requests.length
        const res = await rig.postMessages({ model, max_tokens: 100, messages: doc(url!) })
        expect(res.status).toBe(400)
        const msg = ((await res.json()) as { error: string }).error
        expect(msg).toStartWith('messages[0].content[0].source.url: ')
        expect(msg).toContain(why!)
        expect(rig.up.requests.length).toBe(n)
      }
    }
  })

  test('image URLs are left as URLs', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const img = { type: 'image', source: { type: 'url', url: 'http://10.0.0.1/cat.png' } }
    await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [img as any, { type: 'text', text: 'What is it?' }] }] })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0]).toEqual(img)
  })
})
