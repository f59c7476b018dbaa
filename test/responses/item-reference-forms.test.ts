// An item reference as the official SDK declares it: `{ id }` with `type: "item_reference"`, a
// `type` of null, or no `type` at all. Each is the same reference: a key's own stored item goes
// on, another key's is the 404 OpenAI gives an id it does not know, before any upstream call.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let other: OpenAI
beforeAll(async () => {
  rig = await startResponsesRig()
  other = new OpenAI({ apiKey: (await rig.gw.services.keys.create({ name: 'another tenant' })).key, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(() => rig.stop())

async function storedMessageId(): Promise<string> {
  const tag = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
  rig.up.script({ json: fixture('openai/responses/nonstream-text.json').replaceAll(/(resp|msg)_([0-9a-f]{12})/g, `$1_${tag}`) })
  return (await rig.client.responses.create({ model: 'gpt-5.2', input: 'hello' })).output[0]!.id!
}

for (const [form, ref] of [['a null type', (id: string) => ({ type: null, id })], ['no type', (id: string) => ({ id })]] as const) {
  test(`an item reference with ${form}: the key's own item goes upstream as it came`, async () => {
    const id = await storedMessageId()
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    const r = await rig.client.responses.create({ model: 'gpt-5.2', input: [{ role: 'user', content: 'hello' }, ref(id), { role: 'user', content: 'more' }] })
    expect(r.status).toBe('completed')
    expect(rig.up.requests.at(-1)!.json().input[1]).toEqual(ref(id))
  })

  test(`an item reference with ${form} to another key's item: a 404 naming it, the upstream never asked`, async () => {
    const id = await storedMessageId()
    const before = rig.up.requests.length
    const err = await other.responses.create({ model: 'gpt-5.2', input: [ref(id), { role: 'user', content: 'what did it say?' }] }).catch((e) => e)
    expect(err.status).toBe(404)
    expect(String(err.message)).toContain(`input[0]: Item with id '${id}' not found`)
    expect(rig.up.requests.length).toBe(before)
  })
}
