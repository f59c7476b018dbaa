// Gateway files named by id are read and inlined into the upstream request after admission, so
// the hold counts them by their stored size. Every copy the upstream is sent counts: a file named
// twice is sent twice, and a stored thread's history that names a file sends it again on each
// turn that continues it. Past the files looked up one by one, the rest count as the largest
// prompt any model takes. Only the places a file's bytes are sent count (input files, images,
// documents): the file ids a reply cites are the upstream's and never sent as files, and a thread
// citing many was held as the largest prompt. A hold below what the upstream bills lets a burst on a nearly spent
// key pass its credit by many requests.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { heldOnceTold } from '../helpers/burst.ts'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { URL_DOCUMENT_TOKENS } from '../../src/billing/prompt-bound.ts'
import { startResponsesRig, type ResponsesRig } from '../responses/e2e-helpers.ts'

// a dollar an input token: a hold in USD reads as the tokens it holds the prompt at
const YAML = `pricing:\n  overrides:\n    gpt-4.1: { input_mtok: 1000000, output_mtok: 1000000 }\n`

let rig: ResponsesRig
let key: string
let keyId: string
beforeAll(async () => {
  // no hold taken ahead of requests (shared stores): what is held is this request's alone
  rig = await startResponsesRig({ ...NO_LIMITS, SWITCHYARD_REDIS_TAKE_AHEAD: 'off', SWITCHYARD_DATABASE_TAKE_AHEAD: 'off' }, YAML)
  const made = await rig.gw.services.keys.create({ name: 'funded', credits: 1e9 })
  key = made.key
  keyId = made.record.id
})
afterAll(async () => {
  await rig.stop()
})

async function upload(bytes: number, name: string): Promise<string> {
  const form = new FormData()
  form.append('purpose', 'user_data')
  form.append('file', new File(['x'.repeat(bytes)], name, { type: 'text/plain' }))
  const r = await fetch(`${rig.gw.url}/api/alpha/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
  expect(r.status).toBe(200)
  return ((await r.json()) as { id: string }).id
}

/** What the request holds while its upstream takes its time (answering `json`), and the reply's id. */
async function heldFor(body: Record<string, unknown>, json: unknown = fixture('openai/responses/nonstream-text.json')): Promise<{ held: number; id: string }> {
  // the last request's hold is gone first (a shared store hears of its end a few ms later)
  expect(await heldOnceTold(rig.gw, keyId)).toBe(0)
  rig.up.script({ json, waitMs: 300 })
  const reply = rig.postResponses({ model: 'gpt-4.1', max_output_tokens: 16, ...body }, { key })
  let held = 0
  for (let i = 0; i < 100 && held === 0; i++) {
    await Bun.sleep(10)
    const f = await rig.gw.services.billing.figures(keyId)
    held = f ? f.reserved : rig.gw.services.billing.reserved(keyId)
  }
  const r = await reply
  expect(r.status).toBe(200)
  return { held, id: ((await r.json()) as { id: string }).id }
}

const fileParts = (ids: string[]) => [{ role: 'user', content: [...ids.map((file_id) => ({ type: 'input_file', file_id })), { type: 'input_text', text: 'read' }] }]

test("a turn that continues a thread whose history names a file is held for the file's size again", async () => {
  const id = await upload(200_000, 'history.txt')
  const first = await heldFor({ input: fileParts([id]) })
  expect(first.held).toBeGreaterThan(200_000)
  const again = await heldFor({ previous_response_id: first.id, input: 'and again' })
  // the upstream is sent the file once more, inlined from the history
  expect(JSON.stringify(rig.up.requests.at(-1)!.json()).length).toBeGreaterThan(200_000)
  expect(again.held).toBeGreaterThan(200_000)
})

test('a file named several times is held for every copy the upstream is sent', async () => {
  const id = await upload(10_000, 'repeated.txt')
  const { held } = await heldFor({ input: fileParts(Array.from({ length: 40 }, () => id)) })
  expect(JSON.stringify(rig.up.requests.at(-1)!.json()).length).toBeGreaterThan(400_000)
  expect(held).toBeGreaterThan(400_000)
})

test('more files than are looked up: the rest are held as the largest prompt any model takes', async () => {
  const ids = await Promise.all(Array.from({ length: 101 }, (_, i) => upload(10, `small-${i}.txt`)))
  const { held } = await heldFor({ input: fileParts(ids) })
  expect(held).toBeGreaterThan(URL_DOCUMENT_TOKENS)
}, 30_000)

test("a thread whose replies cite many files is held for its text alone: a citation's file id is never sent as the file", async () => {
  const reply = fixtureJson('openai/responses/nonstream-text.json')
  // a file search's answer cites more files than are looked up (ids of the upstream's vector store)
  reply.output[0].content[0].annotations = Array.from({ length: 120 }, (_, i) => ({ type: 'file_citation', file_id: `file-cited${i}`, filename: `cited-${i}.txt`, index: 0 }))
  const first = await heldFor({ input: 'what do my files say?' }, JSON.stringify(reply))
  expect(first.held).toBeLessThan(50_000)
  const again = await heldFor({ previous_response_id: first.id, input: 'and again' })
  expect(JSON.stringify(rig.up.requests.at(-1)!.json())).toContain('file-cited119')
  expect(again.held).toBeLessThan(50_000)
})

test('a file sent beside an earlier answer echoed with its citations is held for the file, the cited ids for nothing', async () => {
  const id = await upload(200_000, 'sent.txt')
  const cited = Array.from({ length: 120 }, (_, i) => ({ type: 'file_citation', file_id: `file-echoed${i}`, filename: `echoed-${i}.txt`, index: 0 }))
  const input = [
    { role: 'user', content: 'what do my files say?' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'They agree.', annotations: cited }] },
    ...fileParts([id]),
  ]
  const { held } = await heldFor({ input })
  expect(held).toBeGreaterThan(200_000)
  expect(held).toBeLessThan(URL_DOCUMENT_TOKENS)
})
