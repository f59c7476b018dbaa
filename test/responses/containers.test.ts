// A code interpreter's container lives in the operator's OpenAI account, which every key
// shares, and holds the files of the key whose call made it: a request may name one by id only
// when a reply of this gateway handed it to the same key (a code_interpreter_call's
// container_id), whether that reply was stored or not, streamed or not. Another key's is a 404
// naming the field, before any upstream call, as OpenAI answers a container it does not know.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let other: OpenAI
beforeAll(async () => {
  rig = await startResponsesRig()
  const otherKey = (await rig.gw.services.keys.create({ name: 'another tenant' })).key
  other = new OpenAI({ apiKey: otherKey, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const F = (name: string) => `openai/responses/${name}`
const CONTAINER = 'cntr_68f1c0de9a8c8190b2c3d4e5f60718293a4b5c6d7e8f9012'
/** A reply's text with a container id no other test's reply has. */
function fresh(text: string): { text: string; container: string } {
  const container = `cntr_${crypto.randomUUID().replaceAll('-', '')}`
  return { text: text.replaceAll(CONTAINER, container), container }
}
const calls = () => rig.up.requests.length
const tools = (container: unknown) => [{ type: 'code_interpreter' as const, container: container as string }]

/** Key A runs code (store off: nothing is stored), and is handed the container its call ran in. */
async function containerOfA(stream: boolean): Promise<string> {
  if (stream) {
    const { text, container } = fresh(fixture(F('stream-code-interpreter.handwritten.sse')))
    rig.up.script({ sse: text })
    const s = await rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, stream: true, tools: tools({ type: 'auto' }) })
    const seen = new Set<string>()
    for await (const ev of s) if (ev.type === 'response.output_item.added' && ev.item.type === 'code_interpreter_call') seen.add(ev.item.container_id)
    expect([...seen]).toEqual([container])
    return container
  }
  const { text, container } = fresh(fixture(F('nonstream-code-interpreter.handwritten.json')))
  rig.up.script({ json: text })
  const r = await rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, tools: tools({ type: 'auto' }) })
  const call = r.output.find((it) => it.type === 'code_interpreter_call')
  expect(call && 'container_id' in call ? call.container_id : undefined).toBe(container)
  return container
}

describe('a container handed to one key', () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'JSON'} reply, store off: another key naming it gets a 404 and the upstream is never asked; the key it was handed to reuses it, store off too`, async () => {
      const container = await containerOfA(stream)
      const before = calls()
      const err = await other.responses.create({ model: 'gpt-5.2', input: 'read my file', tools: tools(container) }).catch((e) => e)
      expect(err).toBeInstanceOf(OpenAI.NotFoundError)
      expect(String(err.message)).toContain(`tools[0].container: Container with id '${container}' not found`)
      // named in tools handed over inside the input, the same
      const res = await fetch(`${rig.gw.url}/api/alpha/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.2', input: [{ type: 'additional_tools', tools: tools(container) }, { role: 'user', content: 'run it' }] }),
      })
      expect(res.status).toBe(404)
      expect(((await res.json()) as any).error).toContain(`input[0].tools[0].container: Container with id '${container}' not found`)
      expect(calls()).toBe(before)

      for (const store of [false, true]) {
        rig.up.script({ json: fixture(F('nonstream-text.json')) })
        const ok = await rig.client.responses.create({ model: 'gpt-5.2', input: 'open the file again', store, tools: tools(container) })
        expect(ok.status).toBe('completed')
        expect(rig.up.requests.at(-1)!.json().tools).toEqual(tools(container))
      }
    })
  }

  test("a new container ({ type: 'auto' }) needs no grant; a container id no reply handed out is a 404", async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ok = await other.responses.create({ model: 'gpt-5.2', input: 'hi', tools: tools({ type: 'auto' }) })
    expect(ok.status).toBe('completed')
    const err = await other.responses.create({ model: 'gpt-5.2', input: 'hi', tools: tools('cntr_learnt_elsewhere_0123456789') }).catch((e) => e)
    expect(err.status).toBe(404)
  })

  test('a grant past its expiry opens nothing, and the retention removes it', async () => {
    const grants = rig.gw.services.containers!
    const key = [...(await rig.gw.services.keys.list())].find((k) => k.name !== 'another tenant')!
    const container = `cntr_${crypto.randomUUID().replaceAll('-', '')}`
    grants.grant(key.id, container, Date.now() - 1_000)
    await grants.flush()
    // stored (read at once: the gateway's own retention, on its timer, may remove it any moment now)
    expect((await grants.given(key.id, [container], 0)).has(container)).toBe(true)
    const err = await rig.client.responses.create({ model: 'gpt-5.2', input: 'hi', tools: tools(container) }).catch((e) => e)
    expect(err.status).toBe(404)
    await rig.gw.services.retention.prune()
    expect((await grants.given(key.id, [container], 0)).has(container)).toBe(false)
  })
})
