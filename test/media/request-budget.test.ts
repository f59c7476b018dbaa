// Each media source is bounded on its own (media.max_bytes); the sources of one request are
// bounded together too (media.max_request_bytes). Without the second, a request of a few KB
// naming one large file twenty times built a body of hundreds of MB, held the loop for
// seconds and grew the process by a GB, for a body no upstream takes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'
import { PDF } from './helpers.ts'

let rig: MessagesRig
let openai: OpenAI
let pdfId: string
// two of the PDF fit, three do not
const BUDGET = PDF.length * 2 + 10

beforeAll(async () => {
  rig = await startMessagesRig({ SWITCHYARD_MEDIA_MAX_REQUEST_BYTES: String(BUDGET) })
  openai = new OpenAI({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
  const res = await fetch(`${rig.gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: `data:application/pdf;base64,${PDF.toString('base64')}`, filename: 'notes.pdf' }) })
  pdfId = ((await res.json()) as { id: string }).id
})
afterAll(async () => {
  await rig.stop()
})

const docs = (n: number) => [{ role: 'user' as const, content: [...Array.from({ length: n }, () => ({ type: 'document', source: { type: 'file', file_id: pdfId } })), { type: 'text', text: 'Summarise.' }] as any }]
const files = (n: number) => [{ role: 'user' as const, content: [...Array.from({ length: n }, () => ({ type: 'file', file: { file_id: pdfId } })), { type: 'text', text: 'Summarise.' }] as any }]

describe('the media one request inlines, all its sources together', () => {
  for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
    test(`messages surface, ${model}: within the bound it goes; past it a 413 names a source, and nothing goes upstream`, async () => {
      rig.up.script({ json: fixture(model.startsWith('gpt') ? 'openai/chat/nonstream-text.json' : 'anthropic/messages/nonstream-text.json') })
      await rig.anthropic.messages.create({ model, max_tokens: 100, messages: docs(2) })
      const before = rig.up.requests.length
      const err = await rig.anthropic.messages.create({ model, max_tokens: 100, messages: docs(3) }).catch((e) => e)
      expect(err.status).toBe(413)
      expect(err.message).toMatch(/messages\[0\]\.content\[\d\]\.source\.file_id: the media this request inlines would pass \d+ bytes in all \(media\.max_request_bytes\)/)
      expect(err.headers.get('x-request-id')).toBeTruthy()
      expect(rig.up.requests.length).toBe(before)
    })
  }

  test('chat surface, pass-through to a GPT model: the same bound', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: files(2) })
    const err = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: files(3) }).catch((e) => e)
    expect(err.status).toBe(413)
    expect(err.message).toMatch(/messages\[0\]\.content\[\d\]\.file\.file_id: the media this request inlines would pass/)
  })

  test('responses surface: the same bound', async () => {
    const input = (n: number) => [{ role: 'user' as const, content: [...Array.from({ length: n }, () => ({ type: 'input_file' as const, file_id: pdfId })), { type: 'input_text' as const, text: 'Summarise.' }] }]
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    await openai.responses.create({ model: 'gpt-4o-mini', input: input(2) })
    const err = await openai.responses.create({ model: 'gpt-4o-mini', input: input(3) }).catch((e) => e)
    expect(err.status).toBe(413)
    expect(err.message).toMatch(/input\[0\]\.content\[\d\]\.file_id: the media this request inlines would pass/)
  })
})
