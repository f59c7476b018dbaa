// A file id in a chat `file` part resolves through the files service with the caller's
// key, on the pass-through path (GPT) and the IR path (Claude): another key's id or an
// unknown one is a 400 naming it; an owned one is inlined, since upstreams cannot see the
// gateway's file ids.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

let rig: Rig
let key2: string
let fileId: string
const PDF = Buffer.from('%PDF-1.4\n%%EOF\n')

beforeAll(async () => {
  rig = await startRig()
  const res = await fetch(`${rig.gw.url}/api/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: `data:application/pdf;base64,${PDF.toString('base64')}`, filename: 'report.pdf' }),
  })
  fileId = ((await res.json()) as { id: string }).id
  key2 = (await rig.gw.services.keys.create({ name: 'key 2' })).key
})
afterAll(async () => {
  await rig.stop()
})

const ask = (key: string, model: string, id: string) =>
  fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, { type: 'file', file: { file_id: id } }] }] }),
  })

describe('chat file parts are owned', () => {
  for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
    test(`${model}: key 2 sending key 1's file id, or an unknown id, gets a 400 naming it and nothing goes upstream`, async () => {
      for (const [key, id] of [[key2, fileId], [rig.gw.key, 'file-doesnotexist']]) {
        const n = rig.up.requests.length
        const res = await ask(key!, model, id!)
        expect(res.status).toBe(400)
        expect(res.headers.get('x-request-id')).toBeTruthy()
        const msg = ((await res.json()) as { error: string }).error
        expect(msg).toContain('messages[0].content[1]')
        expect(msg).toContain(`no such file ${id}`)
        expect(rig.up.requests.length).toBe(n)
      }
    })
  }

  test("gpt-4o-mini (pass-through): the owner's file id is inlined as file_data", async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    expect((await ask(rig.gw.key, 'gpt-4o-mini', fileId)).status).toBe(200)
    const part = rig.up.requests.at(-1)!.json().messages[0].content[1]
    expect(part).toEqual({ type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` } })
  })

  test("claude-sonnet-4-5 (IR): the owner's file id is inlined as a base64 PDF document", async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    expect((await ask(rig.gw.key, 'claude-sonnet-4-5', fileId)).status).toBe(200)
    const block = rig.up.requests.at(-1)!.json().messages[0].content.find((b: any) => b.type === 'document')
    expect(block.source).toEqual({ type: 'base64', media_type: 'application/pdf', data: PDF.toString('base64') })
    expect(rig.up.requests.at(-1)!.headers['anthropic-beta'] ?? '').not.toContain('files-api')
  })
})
