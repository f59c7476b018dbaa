// Documents and file ids through the messages surface (its media sources): a document block
// that references an uploaded file is read with the caller's key and inlined for both
// families (upstreams do not know the gateway's file ids); document URLs are fetched through
// the guard, and private addresses are refused with a 400 naming the block.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
let other: Anthropic
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')
const TEXT = 'The meeting moved to Thursday at 10:00.'
let pdfId: string
let textId: string

async function upload(key: string, content: string, filename: string): Promise<string> {
  const res = await fetch(`${rig.gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content, filename }) })
  expect(res.status).toBe(200)
  return ((await res.json()) as { id: string }).id
}

beforeAll(async () => {
  rig = await startMessagesRig()
  pdfId = await upload(rig.gw.key, `data:application/pdf;base64,${PDF.toString('base64')}`, 'notes.pdf')
  textId = await upload(rig.gw.key, TEXT, 'notes.txt')
  const { key } = await rig.gw.services.keys.create({ name: 'other' })
  other = new Anthropic({ apiKey: key, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const docMessage = (source: Record<string, unknown>) => [{ role: 'user' as const, content: [{ type: 'document', source }, { type: 'text', text: 'Summarise.' }] as any }]

describe('a document that references an uploaded file', () => {
  test('claude model, plain: the PDF is inlined as base64 and no file id goes upstream', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const r = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: docMessage({ type: 'file', file_id: pdfId }) })
    expect(r.type).toBe('message')
    const sent = rig.up.requests.at(-1)!
    expect(sent.body).not.toContain(pdfId)
    expect(sent.json().messages[0].content[0]).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF.toString('base64') } })
  })

  test('claude model, streamed: a text file becomes a text source', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: docMessage({ type: 'file', file_id: textId }) }).finalMessage()
    expect(final.role).toBe('assistant')
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0].source).toEqual({ type: 'text', media_type: 'text/plain', data: TEXT })
  })

  test('gpt model: the PDF goes as a chat file part with file_data, the text file as text', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, messages: docMessage({ type: 'file', file_id: pdfId }) })
    const parts = rig.up.requests.at(-1)!.json().messages[0].content
    // named as it was stored, not a made-up document.pdf
    expect(parts[0]).toEqual({ type: 'file', file: { filename: 'notes.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` } })
    rig.up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse') })
    const final = await rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, messages: docMessage({ type: 'file', file_id: textId }) }).finalMessage()
    expect(final.role).toBe('assistant')
    expect(rig.up.requests.at(-1)!.json().messages[0].content[0]).toEqual({ type: 'text', text: TEXT })
  })

  test("another key's file id, or an unknown one, is a 400 naming the block — as if the file did not exist", async () => {
    for (const [client, id] of [[other, pdfId], [rig.anthropic, 'file_doesnotexist']] as const) {
      for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
        const err = await client.messages.create({ model, max_tokens: 100, messages: docMessage({ type: 'file', file_id: id }) }).catch((e) => e)
        expect(err.status).toBe(400)
        expect(err.message).toContain('messages[0].content[0].source.file_id: no such file')
      }
    }
  })
})

describe('an unknown file id on the chat and responses surfaces', () => {
  // their items are not the IR's messages one for one (system messages leave them, a thread is
  // put before them): the error names the field where the request sent it
  const post = (path: string, body: unknown) => fetch(`${rig.gw.url}/api/alpha/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const refusal = async (r: Response) => [r.status, ((await r.json()) as { error: string }).error]
  test('the path is the one the client sent, for a Claude model (translated) and the mock', async () => {
    for (const model of ['claude-sonnet-4-5', 'mock-gpt']) {
      const chat = { model, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file: { file_id: 'file-nope' } }] }] }
      expect(await refusal(await post('chat/completions', chat))).toEqual([400, 'messages[1].content[1].file.file_id: no such file file-nope'])
      const responses = { model, instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', file_id: 'file-nope' }] }] }
      expect(await refusal(await post('responses', responses))).toEqual([400, 'input[0].content[1].file_id: no such file file-nope'])
      const doc = { model, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-nope' }] }] }
      expect(await refusal(await post('responses', doc))).toEqual([400, 'input[0].content[0].file_id: no such file file-nope'])
    }
  })
})

describe('an image file', () => {
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
  test('named in an image or a document block, it goes upstream as a base64 image block', async () => {
    const id = await upload(rig.gw.key, `data:image/png;base64,${PNG.toString('base64')}`, 'dot.png')
    for (const type of ['image', 'document']) {
      rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
      await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type, source: { type: 'file', file_id: id } } as any, { type: 'text', text: 'What is it?' }] }] })
      expect(rig.up.requests.at(-1)!.json().messages[0].content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } })
    }
  })
})

describe('document URLs', () => {
  test('a URL pointing at 127.0.0.1, 10.0.0.1, 169.254.169.254 or a name resolving to loopback is refused with 400, for both families', async () => {
    for (const url of ['http://127.0.0.1:1/a.pdf', 'http://10.0.0.1/a.pdf', 'http://169.254.169.254/latest/meta-data/', 'http://localhost/a.txt', 'http://[::1]/a.pdf']) {
      for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
        const n = rig.up.requests.length
        const res = await rig.postMessages({ model, max_tokens: 100, messages: docMessage({ type: 'url', url }) })
        expect(res.status).toBe(400)
        const msg = (await res.json()).error as string
        expect(msg).toStartWith('messages[0].content[0].source.url: refused')
        expect(rig.up.requests.length).toBe(n)
      }
    }
  })
})
