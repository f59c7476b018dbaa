// One key may not have OpenAI read another key's stored items. On the pass-through path the
// upstream's store holds the items of every key of the operator's account, and an id given alone
// (`item_reference`, a reasoning item without its encrypted content) is read from it: such an id
// goes upstream only when it names an output item of a response the gateway stored for the same
// key; any other is refused as OpenAI refuses an id it does not know, before any upstream call.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { frames, startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let other: OpenAI
let otherKey: string
beforeAll(async () => {
  rig = await startResponsesRig()
  otherKey = (await rig.gw.services.keys.create({ name: 'another tenant' })).key
  other = new OpenAI({ apiKey: otherKey, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const F = (name: string) => `openai/responses/${name}`
const TEXT = fixtureJson(F('nonstream-text.json'))
const REASONING = fixtureJson(F('nonstream-reasoning-summary.json'))

/** A fresh pass-through reply stored for the rig's key, its upstream's ids renamed so no other test's reply has them. */
async function storedReply(of = TEXT) {
  const tag = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
  const json = JSON.parse(JSON.stringify(of).replaceAll(/(resp|msg|rs|ig|ci|cntr)_([0-9a-f]{12})/g, `$1_${tag}`))
  rig.up.script({ json: JSON.stringify(json) })
  const r = await rig.client.responses.create({ model: 'gpt-5.2', input: 'hello' })
  return r
}

const calls = () => rig.up.requests.length

describe('an id another key was given', () => {
  test("item_reference to another key's upstream item: a 404 naming it, as OpenAI's own wording; the upstream never asked", async () => {
    const mine = await storedReply()
    const id = mine.output[0]!.id!
    const before = calls()
    const err = await other.responses.create({ model: 'gpt-5.2', input: [{ type: 'item_reference', id }, { role: 'user', content: 'what did it say?' }] }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.NotFoundError)
    expect(err.status).toBe(404)
    expect(String(err.message)).toContain(`input[0]: Item with id '${id}' not found`)
    expect(calls()).toBe(before)
  })

  test('item_reference to an id no response of the gateway holds (learned elsewhere): the same 404, streamed or not', async () => {
    const before = calls()
    for (const stream of [false, true]) {
      const res = await rig.postResponses({ model: 'gpt-5.2', stream, input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_68b1b2c0aa1181939fb11dd2f5c2ae0a0c3b4f1d9e2a5b6c' }] })
      expect(res.status).toBe(404)
      expect(((await res.json()) as any).error).toContain("input[1]: Item with id 'msg_68b1b2c0aa1181939fb11dd2f5c2ae0a0c3b4f1d9e2a5b6c' not found")
    }
    expect(calls()).toBe(before)
  })

  test("a reasoning item given by its id alone (no encrypted_content), another key's: a 404; with its encrypted content it goes as before", async () => {
    const mine = await storedReply(REASONING)
    const rs = mine.output.find((o) => o.type === 'reasoning')!
    const before = calls()
    const res = await rig.postResponses({ model: 'gpt-5.2', input: [{ type: 'reasoning', id: rs.id, summary: [] }, { role: 'user', content: 'go on' }] }, { key: otherKey })
    expect(res.status).toBe(404)
    expect(((await res.json()) as any).error).toContain(`input[0]: Item with id '${rs.id}' not found`)
    expect(calls()).toBe(before)
    // the encrypted content is the item itself: nothing is read from a store
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const sealed = { type: 'reasoning', id: rs.id, summary: [], encrypted_content: (rs as any).encrypted_content }
    const ok = await rig.postResponses({ model: 'gpt-5.2', input: [sealed, { role: 'user', content: 'go on' }] }, { key: otherKey })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input[0]).toEqual(sealed)
  })

  test("an image_generation_call given by its id alone (multi-turn image editing, read from OpenAI's store), another key's: a 404; the key's own goes up", async () => {
    const withImage = { ...TEXT, output: [...TEXT.output, { type: 'image_generation_call', id: 'ig_68c2e8c26114819489dae5b59fceb7bf02e845978fbbb592', status: 'completed', result: 'aW1hZ2U=' }] }
    const mine = await storedReply(withImage)
    const ig = { type: 'image_generation_call', id: mine.output.find((o) => o.type === 'image_generation_call')!.id }
    const input = [{ role: 'user', content: 'make it blue' }, ig]
    const before = calls()
    const res = await rig.postResponses({ model: 'gpt-5.2', input }, { key: otherKey })
    expect(res.status).toBe(404)
    expect(((await res.json()) as any).error).toContain(`input[1]: Item with id '${ig.id}' not found`)
    expect(calls()).toBe(before)
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ok = await rig.postResponses({ model: 'gpt-5.2', input })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input).toEqual(input)
  })

  test("a code interpreter's container named by id (it holds the files of the key whose call made it), another key's: a 404; the key's own, or a new one, goes up", async () => {
    const ran = { type: 'code_interpreter_call', id: 'ci_68c2e8c26114819489dae5b59fceb7bf02e845978fbbb592', container_id: 'cntr_68c2e8c26114819489dae5b59fceb7bf02e845978fbbb592', code: 'print(1)', outputs: null, status: 'completed' }
    const mine = await storedReply({ ...TEXT, output: [ran, ...TEXT.output] })
    const container = (mine.output[0] as any).container_id as string
    const body = { model: 'gpt-5.2', input: 'open the file again', tools: [{ type: 'code_interpreter', container }] }
    const before = calls()
    const res = await rig.postResponses(body, { key: otherKey })
    expect(res.status).toBe(404)
    expect(((await res.json()) as any).error).toContain(`tools[0].container: Container with id '${container}' not found`)
    expect(calls()).toBe(before)
    for (const [key, tools] of [[rig.gw.key, body.tools], [otherKey, [{ type: 'code_interpreter', container: { type: 'auto' } }]]] as const) {
      rig.up.script({ json: fixture(F('nonstream-text.json')) })
      const ok = await rig.postResponses({ ...body, tools }, { key })
      expect(ok.status).toBe(200)
      expect(rig.up.requests.at(-1)!.json().tools).toEqual(tools)
    }
  })

  test("previous_response_id naming another key's upstream response: a 400, the upstream never asked; a conversation of the same name is the other key's own, new", async () => {
    const mine = await storedReply()
    const before = calls()
    const prev = await rig.postResponses({ model: 'gpt-5.2', input: 'go on', previous_response_id: mine.id }, { key: otherKey })
    expect(prev.status).toBe(400)
    expect(((await prev.json()) as any).error).toContain(`previous_response_id: no stored response "${mine.id}"`)
    expect(calls()).toBe(before)
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    expect((await rig.postResponses({ model: 'gpt-5.2', input: 'secret of the first key', conversation: 'shared-name' })).status).toBe(200)
    const theirs = await rig.postResponses({ model: 'gpt-5.2', input: 'what was said?', conversation: 'shared-name' }, { key: otherKey })
    expect(theirs.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.conversation).toBeUndefined()
    expect(sent.previous_response_id).toBeUndefined()
    expect(JSON.stringify(sent.input)).not.toContain('secret of the first key')
  })

  test('an mcp_approval_response answering a request neither in its input nor given to this key: a 404; with the request in the input it goes up', async () => {
    const request = { type: 'mcp_approval_request', id: 'mcpr_68b1b2c0aa1181939fb11dd2f5c2ae0a0c3b4f1d9e2a5b6c', server_label: 'deepwiki', name: 'ask_question', arguments: '{}' }
    const answer = { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }
    const before = calls()
    const res = await rig.postResponses({ model: 'gpt-5.2', input: [answer] }, { key: otherKey })
    expect(res.status).toBe(404)
    expect(((await res.json()) as any).error).toContain(`input[0]: Item with id '${request.id}' not found`)
    expect(calls()).toBe(before)
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ok = await rig.postResponses({ model: 'gpt-5.2', input: [request, answer] }, { key: otherKey })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input).toEqual([request, answer])
  })

  test('a deleted response gives its items back: a reference to one is then a 404', async () => {
    const mine = await storedReply()
    await rig.client.responses.delete(mine.id)
    const before = calls()
    const res = await rig.postResponses({ model: 'gpt-5.2', input: [{ type: 'item_reference', id: mine.output[0]!.id }] })
    expect(res.status).toBe(404)
    expect(calls()).toBe(before)
  })
})

describe("a key's own items still continue, through the SDK", () => {
  test('item_reference to its own upstream items (text and reasoning), as the AI SDK sends them with store on: upstream as they came', async () => {
    const mine = await storedReply(REASONING)
    const [rs, msg] = mine.output
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const input = [{ role: 'user' as const, content: 'hello' }, { type: 'item_reference' as const, id: rs!.id! }, { type: 'item_reference' as const, id: msg!.id! }, { role: 'user' as const, content: 'more' }]
    const r = await rig.client.responses.create({ model: 'gpt-5.2', input })
    expect(r.status).toBe('completed')
    expect(rig.up.requests.at(-1)!.json().input).toEqual(input)
    // and a reasoning item by its id alone, as older AI SDKs sent it
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const byId = await rig.postResponses({ model: 'gpt-5.2', input: [{ type: 'reasoning', id: rs!.id, summary: [] }, { role: 'user', content: 'more' }] })
    expect(byId.status).toBe(200)
  })

  test('a streamed reply: its items are the key\'s once the stream has ended, and only the key\'s', async () => {
    rig.up.script({ sse: fixture(F('stream-text.sse')) })
    const events = frames(await (await rig.postResponses({ model: 'gpt-5.2', input: 'hi', stream: true })).text())
    const done = events.at(-1)!.data.response
    const id = done.output[0].id
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await rig.client.responses.create({ model: 'gpt-5.2', input: [{ type: 'item_reference', id }, { role: 'user', content: 'more' }] })
    expect(r.status).toBe('completed')
    expect(rig.up.requests.at(-1)!.json().input[0]).toEqual({ type: 'item_reference', id })
    // the other key: not its item
    const err = await other.responses.create({ model: 'gpt-5.2', input: [{ type: 'item_reference', id }] }).catch((e) => e)
    expect(err.status).toBe(404)
  })

  test('previous_response_id of its own stored reply: the thread goes up with store: false, no id of OpenAI\'s store named', async () => {
    const mine = await storedReply()
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await rig.client.responses.create({ model: 'gpt-5.2', input: 'and then?', previous_response_id: mine.id })
    expect(r.previous_response_id).toBe(mine.id)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.previous_response_id).toBeUndefined()
    expect(sent.store).toBe(false)
    expect(sent.input.map((it: any) => it.id)).toEqual([undefined, undefined, undefined])
  })

  test('a thread that holds a reference (a turn sent with store on) continued by previous_response_id: the reference goes up with its id, not as an item_reference naming nothing', async () => {
    const mine = await storedReply()
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ref = { type: 'item_reference' as const, id: mine.output[0]!.id! }
    const second = await rig.client.responses.create({ model: 'gpt-5.2', input: [{ role: 'user', content: 'hello' }, ref, { role: 'user', content: 'more' }] })
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const third = await rig.client.responses.create({ model: 'gpt-5.2', input: 'and then?', previous_response_id: second.id })
    expect(third.status).toBe('completed')
    const sent = rig.up.requests.at(-1)!.json().input
    expect(sent.filter((it: any) => it.type === 'item_reference')).toEqual([ref])
  })

  test("a reasoning item by an id of the gateway's own form, alone: no store of OpenAI's holds it, so it is not asked after (the IR path leaves it out, as before)", async () => {
    const res = await rig.postResponses({ model: 'mock-gpt', input: [{ type: 'reasoning', id: 'rs_0123456789abcdef0123456789abcdef0001', summary: [] }, { role: 'user', content: 'go on' }] })
    expect(res.status).toBe(200)
  })

  test('store as the client gave it on a stateless turn (the operator\'s upstream keeps what it keeps)', async () => {
    for (const store of [false, true]) {
      rig.up.script({ json: fixture(F('nonstream-text.json')) })
      await rig.client.responses.create({ model: 'gpt-5.2', input: 'hi', store })
      expect(rig.up.requests.at(-1)!.json().store).toBe(store)
    }
  })
})
