// A code interpreter in auto mode makes a container, which OpenAI bills a session by its memory
// tier ($0.03 for 1 GB, the default, up to $1.92 for 64 GB), beside the model's tokens. Recorded
// as nothing, a key with credits ran containers no credit ever saw, and was held nothing for one.
// A container the key already has (named by id, or taken up again by auto mode) is not new and
// costs nothing more.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
})
afterAll(async () => {
  await rig.stop()
})

const catalog = buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' }))
/** The fixtures' usage (312 in, 41 out) at gpt-5.2's price. */
const tokens = () => catalog.cost(catalog.resolve('gpt-5.2')!, { inputTokens: 312, outputTokens: 41, cacheReadTokens: 0, cacheWriteTokens: 0 })!

const CONTAINER = 'cntr_68f1c0de9a8c8190b2c3d4e5f60718293a4b5c6d7e8f9012'
/** A recorded-shape reply (JSON or stream) whose call ran in a container no other test's reply names, under its own response id. */
function reply(name: string, id: string): { text: string; container: string } {
  const container = `cntr_${crypto.randomUUID().replaceAll('-', '')}`
  const text = fixture(`openai/responses/${name}`).replaceAll(CONTAINER, container).replaceAll('resp_68f1c0dd77f08190a1b2c3d4e5f60718293a4b5c6d7e8f90', id)
  return { text, container }
}
const auto = (memory_limit?: string) => [{ type: 'code_interpreter' as const, container: { type: 'auto' as const, ...(memory_limit ? { memory_limit } : {}) } as never }]

describe('a new container is billed a session at its memory tier', () => {
  test('JSON reply, 4 GB: the record counts $0.12 beside the tokens, and says where', async () => {
    const { text } = reply('nonstream-code-interpreter.handwritten.json', 'resp_container_4g')
    rig.up.script({ json: text })
    const r = await rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, tools: auto('4g') })
    const g = await rig.generation(r.id)
    expect(g.cost).toBeCloseTo(tokens() + 0.12, 12)
    expect(g.usage.code_interpreter_containers).toEqual({ '4g': 1 })
  })

  test('streamed reply, no memory_limit: 1 GB, $0.03', async () => {
    const { text } = reply('stream-code-interpreter.handwritten.sse', 'resp_container_stream')
    rig.up.script({ sse: text })
    const s = await rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, stream: true, tools: auto() })
    let id = ''
    for await (const e of s) if (e.type === 'response.completed') id = e.response.id
    const g = await rig.generation(id)
    expect(g.cost).toBeCloseTo(tokens() + 0.03, 12)
    expect(g.usage.code_interpreter_containers).toEqual({ '1g': 1 })
  })
})

test('a code interpreter handed over in an additional_tools item: the same', async () => {
  const { text } = reply('nonstream-code-interpreter.handwritten.json', 'resp_container_handed')
  rig.up.script({ json: text })
  const res = await fetch(`${rig.gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.client.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.2', store: false, input: [{ type: 'additional_tools', tools: auto('4g') }, { role: 'user', content: 'sqrt 2?' }] }),
  })
  expect(res.status).toBe(200)
  expect((await rig.generation('resp_container_handed')).cost).toBeCloseTo(tokens() + 0.12, 12)
})

describe('a container the key already has is not new', () => {
  test('named by id, or handed again in auto mode: the tokens alone', async () => {
    const first = reply('nonstream-code-interpreter.handwritten.json', 'resp_container_first')
    rig.up.script({ json: first.text })
    const r1 = await rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, tools: auto('16g') })
    expect((await rig.generation(r1.id)).cost).toBeCloseTo(tokens() + 0.48, 12)

    // by id: the reply's call ran in that container
    rig.up.script({ json: first.text.replaceAll('resp_container_first', 'resp_container_by_id') })
    const r2 = await rig.client.responses.create({ model: 'gpt-5.2', input: 'again', store: false, tools: [{ type: 'code_interpreter', container: first.container }] })
    const g2 = await rig.generation(r2.id)
    expect(g2.cost).toBeCloseTo(tokens(), 12)
    expect(g2.usage.code_interpreter_containers).toBeUndefined()

    // auto mode, taken up again by the upstream (the call names the key's container)
    rig.up.script({ json: first.text.replaceAll('resp_container_first', 'resp_container_again') })
    const r3 = await rig.client.responses.create({ model: 'gpt-5.2', input: 'and again', store: false, tools: auto('16g') })
    expect((await rig.generation(r3.id)).cost).toBeCloseTo(tokens(), 12)
  })
})

describe('held at admission', () => {
  /** What one Responses request holds on a funded key while the upstream answers it. */
  async function holdOf(body: Record<string, unknown>): Promise<number> {
    const { key, record } = await rig.gw.services.keys.create({ name: 'held', credits: 1000 })
    rig.up.script({ waitMs: 400, json: fixture('openai/responses/nonstream-text.json') })
    const pending = fetch(`${rig.gw.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    let usd = 0
    for (let i = 0; i < 100 && usd === 0; i++) {
      await Bun.sleep(10)
      const f = await rig.gw.services.billing.figures(record.id)
      usd = f ? f.reserved : rig.gw.services.billing.reserved(record.id)
    }
    expect((await pending).status).toBe(200)
    return usd
  }

  test('a code interpreter in auto mode holds one session of its tier', async () => {
    const body = { model: 'gpt-4o', input: 'Compute.', max_output_tokens: 100, store: false }
    const plain = await holdOf(body)
    const held = await holdOf({ ...body, tools: auto('64g') })
    expect(held - plain).toBeGreaterThanOrEqual(1.92)
    // what else it holds is the tool's own bytes as prompt
    expect(held - plain).toBeLessThan(1.92 + 0.01)
  })
})

// whether the key had a container is read before this reply's own grant of it is written: on a
// shared database, with requests at once, the grant's write (a turn later, on another of the
// pool's connections) could land before that read, and a new container was taken for an old one
test('many at once, each with a new container: every one is billed its session', async () => {
  const n = 40
  const made = Array.from({ length: n }, (_, i) => reply('nonstream-code-interpreter.handwritten.json', `resp_container_many_${i}_${crypto.randomUUID().slice(0, 8)}`))
  let next = 0
  rig.up.script(() => ({ json: made[next++ % n]!.text }))
  const rs = await Promise.all(made.map(() => rig.client.responses.create({ model: 'gpt-5.2', input: 'sqrt 2?', store: false, tools: auto('4g') })))
  for (const r of rs) expect((await rig.generation(r.id)).usage.code_interpreter_containers).toEqual({ '4g': 1 })
})
