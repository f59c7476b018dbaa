// OpenAI's Conversations API through the gateway, driven by the official openai client: a
// client that makes a conversation first (`client.conversations.create()`, the Agents SDK's
// OpenAIConversationsSession) got a 404 and could not work through it. A conversation and its
// items are its key's alone; a responses turn in one sees its items and adds its own to it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let client: OpenAI
let other: OpenAI
let otherKey: string
beforeAll(async () => {
  // many calls in a second: past one key's default burst
  rig = await startResponsesRig({ SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_KEY_BURST_RPS: '100000', SWITCHYARD_IP_RPM: '100000' })
  client = rig.client
  otherKey = (await rig.gw.services.keys.create({ name: 'another tenant' })).key
  other = new OpenAI({ apiKey: otherKey, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(() => rig.stop())

const status = (p: Promise<unknown>) => p.then(() => 200, (e) => (e as { status?: number }).status)
const errorOf = async (p: Promise<unknown>) => {
  const e = (await p.then(() => undefined, (err) => err)) as { status?: number; message?: string } | undefined
  return { status: e?.status, message: String(e?.message ?? '') }
}
const user = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text })
const textOf = (c: any) => (typeof c === 'string' ? c : (c ?? []).map((p: any) => p.text).join(''))
const texts = (items: any[]) => items.map((it) => `${it.role ?? it.type}: ${textOf(it.content)}`)

describe('conversations and their items', () => {
  test('create, retrieve, update, delete: the wire shapes of OpenAI', async () => {
    const conv = await client.conversations.create({ metadata: { topic: 'demo' }, items: [user('hello')] })
    expect(conv.id).toMatch(/^conv_[0-9a-f]{48}$/)
    expect(conv.object).toBe('conversation')
    expect(conv.metadata).toEqual({ topic: 'demo' })
    expect(Math.abs(conv.created_at - Date.now() / 1000)).toBeLessThan(60)
    expect(await client.conversations.retrieve(conv.id)).toEqual(conv)
    // the unified root has the same routes
    const unified = new OpenAI({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/v1`, maxRetries: 0 })
    expect(await unified.conversations.retrieve(conv.id)).toEqual(conv)
    const updated = await client.conversations.update(conv.id, { metadata: { topic: 'other', n: '2' } })
    expect(updated).toEqual({ ...conv, metadata: { topic: 'other', n: '2' } })
    // made with no body at all, as `conversations.create()` sends it
    const bare = await client.conversations.create()
    expect(bare.metadata).toEqual({})
    expect(await client.conversations.delete(conv.id)).toEqual({ id: conv.id, object: 'conversation.deleted', deleted: true })
    expect(await status(client.conversations.retrieve(conv.id))).toBe(404)
    expect(await status(client.conversations.items.list(conv.id))).toBe(404)
    expect(await status(client.conversations.delete(conv.id))).toBe(404)
  })

  test('items: added with ids, listed newest first by default, paged by after, one retrieved and deleted', async () => {
    const conv = await client.conversations.create({ items: [user('one'), { role: 'assistant', content: 'two' } as never] })
    const added = await client.conversations.items.create(conv.id, { items: [user('three'), { type: 'function_call_output', call_id: 'call_1', output: 'four' } as never] })
    expect(added.object).toBe('list')
    expect(added.data.map((it) => it.type)).toEqual(['message', 'function_call_output'])
    expect(added.first_id).toBe(added.data[0]!.id as string)
    expect(added.last_id).toBe(added.data[1]!.id as string)

    const desc = await client.conversations.items.list(conv.id)
    expect(desc.data.map((it) => it.type)).toEqual(['function_call_output', 'message', 'message', 'message'])
    expect(desc.has_more).toBe(false)
    const asc = await client.conversations.items.list(conv.id, { order: 'asc' })
    expect(asc.data[0]).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'one' }] })
    expect(asc.data[1]).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'two' }] })
    const page = await client.conversations.items.list(conv.id, { order: 'asc', limit: 2 })
    expect(page.data.length).toBe(2)
    expect(page.has_more).toBe(true)
    // the SDK's iterator follows `after`: every item once, in order
    const all: string[] = []
    for await (const it of client.conversations.items.list(conv.id, { order: 'asc', limit: 1 })) all.push(it.id!)
    expect(all).toEqual(asc.data.map((it) => it.id!))

    const one = await client.conversations.items.retrieve(added.data[0]!.id!, { conversation_id: conv.id })
    expect(one).toEqual(added.data[0]!)
    const after = await client.conversations.items.delete(added.data[0]!.id!, { conversation_id: conv.id })
    expect(after).toEqual(conv)
    expect(await status(client.conversations.items.retrieve(added.data[0]!.id!, { conversation_id: conv.id }))).toBe(404)
    expect((await client.conversations.items.list(conv.id)).data.length).toBe(3)

    // an id names one item of a conversation: an item sent again under an id it holds gets a new one
    const kept = asc.data[0]!.id as string
    const again = await client.conversations.items.create(conv.id, { items: [{ ...user('one again'), id: kept } as never] })
    expect(again.data[0]!.id).not.toBe(kept)
    expect(await client.conversations.items.retrieve(kept, { conversation_id: conv.id })).toMatchObject({ content: [{ text: 'one' }] })
  })

  test('an item id no item route could name (empty, or longer than 256 characters) is given a new one, so the item can be retrieved and deleted', async () => {
    const ids = ['', 'x'.repeat(257), 'x'.repeat(20_000)]
    const conv = await client.conversations.create({ items: ids.slice(0, 1).map((id) => ({ ...user('first'), id }) as never) })
    const added = await client.conversations.items.create(conv.id, { items: ids.slice(1).map((id, k) => ({ ...user(`next ${k}`), id }) as never) })
    // and a stored turn's input item under such an id, added to the conversation with its output
    await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: [{ ...user('mock: text turn'), id: '' } as never] })
    const items = (await client.conversations.items.list(conv.id, { order: 'asc' })).data
    expect(items.length).toBe(5)
    expect(added.data.map((it) => it.id)).toEqual(items.slice(1, 3).map((it) => it.id))
    for (const it of items) {
      expect(it.id!.length).toBeGreaterThan(0)
      expect(it.id!.length).toBeLessThanOrEqual(256)
      expect(await client.conversations.items.retrieve(it.id!, { conversation_id: conv.id })).toEqual(it)
      await client.conversations.items.delete(it.id!, { conversation_id: conv.id })
    }
    expect((await client.conversations.items.list(conv.id)).data).toEqual([])
  })

  test('bad input is a 400 naming the field', async () => {
    const conv = await client.conversations.create()
    // each made when it is awaited: a refusal is never left unhandled meanwhile
    const cases: [() => Promise<unknown>, string][] = [
      [() => client.conversations.create({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }), 'metadata:'],
      [() => client.conversations.create({ metadata: { a: 1 } as never }), 'metadata.a:'],
      [() => client.conversations.create({ items: 'hi' as never }), 'items:'],
      [() => client.conversations.create({ items: Array.from({ length: 21 }, () => user('x')) }), 'items:'],
      [() => client.conversations.create({ items: [{ type: 'nope' }] as never }), 'items[0].type:'],
      [() => client.conversations.create({ nope: 1 } as never), 'nope:'],
      [() => client.conversations.update(conv.id, {} as never), 'metadata:'],
      [() => client.conversations.items.create(conv.id, {} as never), 'items:'],
      [() => client.conversations.items.create(conv.id, { items: [{ role: 'robot', content: 'x' }] as never }), 'items[0].role:'],
      // kept, it would go to an OpenAI model with every later turn, and be refused there
      [() => client.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: 'y' }] }] as never }), 'items[0].content[0].annotations:'],
      [() => client.conversations.items.list(conv.id, { limit: 0 }), 'limit:'],
      [() => client.conversations.items.list(conv.id, { limit: 101 }), 'limit:'],
      [() => client.conversations.items.list(conv.id, { order: 'up' as never }), 'order:'],
      [() => client.conversations.items.list(conv.id, { after: 'msg_nope' }), 'after:'],
    ]
    for (const [call, field] of cases) {
      const e = await errorOf(call())
      expect({ field, status: e.status }).toEqual({ field, status: 400 })
      expect(e.message).toContain(field)
    }
  })

  test("another key's conversation is a 404 on every route, and in a responses turn; the owner's is untouched", async () => {
    const conv = await client.conversations.create({ metadata: { who: 'first' }, items: [user('secret')] })
    const [item] = (await client.conversations.items.list(conv.id)).data
    for (const call of [
      () => other.conversations.retrieve(conv.id),
      () => other.conversations.update(conv.id, { metadata: { who: 'second' } }),
      () => other.conversations.delete(conv.id),
      () => other.conversations.items.list(conv.id),
      () => other.conversations.items.create(conv.id, { items: [user('mine now')] }),
      () => other.conversations.items.retrieve(item!.id!, { conversation_id: conv.id }),
      () => other.conversations.items.delete(item!.id!, { conversation_id: conv.id }),
      () => other.responses.create({ model: 'mock-gpt', conversation: conv.id, input: 'what was said?' }),
    ]) {
      expect(await status(call())).toBe(404)
    }
    expect(await client.conversations.retrieve(conv.id)).toEqual(conv)
    expect(texts((await client.conversations.items.list(conv.id)).data)).toEqual(['user: secret'])
  })
})

describe("items of another key's", () => {
  /** A reply stored for `openai` through the pass-through path, its output item under an id of OpenAI's no other test was given. */
  const upstreamReply = async (openai: OpenAI) => {
    const reply = fixtureJson('openai/responses/nonstream-text.json')
    reply.output[0].id = `msg_${crypto.randomUUID().replaceAll('-', '')}`
    rig.up.script({ json: reply })
    return openai.responses.create({ model: 'gpt-5.2', input: 'hi' })
  }

  test('an item_reference added to a conversation must name an item this key was given: every turn in it sends it for OpenAI to read', async () => {
    const theirs = (await upstreamReply(other)).output[0]!.id!
    const ref = { type: 'item_reference', id: theirs } as never
    const conv = await client.conversations.create()
    for (const call of [() => client.conversations.create({ items: [ref] }), () => client.conversations.items.create(conv.id, { items: [user('x'), ref] })]) {
      const e = await errorOf(call())
      expect(e.status).toBe(404)
      expect(e.message).toContain('items[')
    }
    expect((await client.conversations.items.list(conv.id)).data).toEqual([])
    // so no turn in it sends another key's item to be read from OpenAI's store
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    await client.responses.create({ model: 'gpt-5.2', conversation: conv.id, input: 'what did they say?' })
    expect(JSON.stringify(rig.up.requests.at(-1)!.json().input)).not.toContain(theirs)

    // the key's own: one OpenAI gave it (the gateway stored its reply) and one of the gateway's replies are that item
    const mine = (await upstreamReply(client)).output[0]!.id!
    const own = (await client.responses.create({ model: 'mock-gpt', input: 'mock: text kept' })).output[0]!.id!
    const added = await client.conversations.items.create(conv.id, { items: [{ type: 'item_reference', id: mine }, { type: 'item_reference', id: own }] as never })
    expect(added.data[0]).toMatchObject({ type: 'message', id: mine, role: 'assistant', content: [{ text: 'The capital of France is Paris.' }] })
    expect(added.data[1]).toMatchObject({ type: 'message', role: 'assistant', content: [{ text: 'kept' }] })
  })

  // a conversation is kept until deleted, the replies it was given items of are not (deleted,
  // or past responses.retention_days), and a turn in a conversation went to OpenAI with store
  // false: a reference kept as such would have named an item OpenAI never stored, or no longer
  // has, in every later turn (a 404 upstream each time; on a Claude model the item left out)
  test('an item_reference to an item OpenAI gave this key is added as that item: later turns send it whole, after its reply is gone too', async () => {
    const a = await client.conversations.create()
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    const turn = await client.responses.create({ model: 'gpt-5.2', conversation: a.id, input: 'capital?' })
    const said = turn.output[0]!.id!
    const ref = { type: 'item_reference', id: said } as never
    const b = await client.conversations.create({ items: [ref] })
    const c = await client.conversations.create()
    // and in a turn's own input, which the conversation keeps too
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    await client.responses.create({ model: 'gpt-5.2', conversation: c.id, input: [ref, user('go on')] })
    expect(texts(rig.up.requests.at(-1)!.json().input)).toEqual(['assistant: The capital of France is Paris.', 'user: go on'])
    await client.responses.delete(turn.id)
    for (const conv of [b, c]) {
      const listed = await client.conversations.items.list(conv.id, { order: 'asc' })
      expect(listed.data[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ text: 'The capital of France is Paris.' }] })
      rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
      await client.responses.create({ model: 'gpt-5.2', conversation: conv.id, input: 'more?' })
      const sent = rig.up.requests.at(-1)!.json().input
      expect(JSON.stringify(sent)).not.toContain('item_reference')
      expect(texts(sent)[0]).toBe('assistant: The capital of France is Paris.')
    }
    // a reference that names no item this key was given is still refused
    const gone = await errorOf(client.conversations.create({ items: [{ type: 'item_reference', id: `msg_${'e'.repeat(32)}` } as never] }))
    expect(gone.status).toBe(404)
  })

  test("an item id of another key's conversation is no item of this one: retrieve and delete are a 404, after a 400", async () => {
    const mine = await client.conversations.create({ items: [user('mine')] })
    const theirs = await other.conversations.create({ items: [user('theirs')] })
    const [their] = (await other.conversations.items.list(theirs.id)).data
    expect(await status(client.conversations.items.retrieve(their!.id!, { conversation_id: mine.id }))).toBe(404)
    expect(await status(client.conversations.items.delete(their!.id!, { conversation_id: mine.id }))).toBe(404)
    expect(await status(client.conversations.items.list(mine.id, { after: their!.id! }))).toBe(400)
    expect(texts((await other.conversations.items.list(theirs.id)).data)).toEqual(['user: theirs'])
  })
})

describe('responses turns in a conversation', () => {
  test('a GPT model (pass-through): the upstream gets the items added first, and each turn is added to the conversation', async () => {
    const conv = await client.conversations.create({ items: [user('my name is Ada')] })
    await client.conversations.items.create(conv.id, { items: [user('I live in Paris')] })
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    const first = await client.responses.create({ model: 'gpt-5.2', conversation: conv.id, input: 'what is the capital?' })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.conversation).toBeUndefined()
    expect(sent.store).toBe(false)
    expect(texts(sent.input)).toEqual(['user: my name is Ada', 'user: I live in Paris', 'user: what is the capital?'])

    const listed = await client.conversations.items.list(conv.id, { order: 'asc' })
    expect(texts(listed.data)).toEqual(['user: my name is Ada', 'user: I live in Paris', 'user: what is the capital?', 'assistant: The capital of France is Paris.'])
    // the output item is listed under the id the client saw in the response
    expect(listed.data[3]!.id).toBe(first.output[0]!.id!)

    // the next turn sees every earlier one
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    await client.responses.create({ model: 'gpt-5.2', conversation: { id: conv.id }, input: 'and of Italy?' })
    expect(texts(rig.up.requests.at(-1)!.json().input.slice(0, 4))).toEqual(['user: my name is Ada', 'user: I live in Paris', 'user: what is the capital?', 'assistant: The capital of France is Paris.'])
    expect((await client.conversations.items.list(conv.id)).data.length).toBe(6)
  })

  test('a Claude model (translated): the Anthropic request holds the items added first; a streamed turn is added too', async () => {
    const conv = await client.conversations.create({ items: [user('remember: the word is heron')] })
    await client.conversations.items.create(conv.id, { items: [{ role: 'assistant', content: 'noted' } as never] })
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await client.responses.create({ model: 'claude-sonnet-4-5', conversation: conv.id, input: 'what is the word?' })
    const sent = rig.up.requests.at(-1)!.json()
    expect(texts(sent.messages)).toEqual(['user: remember: the word is heron', 'assistant: noted', 'user: what is the word?'])

    rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') })
    const stream = await client.responses.create({ model: 'claude-sonnet-4-5', conversation: conv.id, input: 'again?', stream: true })
    let done: any
    // (the recorded stream ends at its max_tokens: an incomplete response, stored and added as a completed one is)
    for await (const ev of stream) if (ev.type === 'response.completed' || ev.type === 'response.incomplete') done = ev.response
    expect(done.status).toBe('incomplete')
    expect(rig.up.requests.at(-1)!.json().messages.length).toBe(5)
    const listed = await client.conversations.items.list(conv.id, { order: 'asc' })
    expect(texts(listed.data).slice(0, 5)).toEqual(['user: remember: the word is heron', 'assistant: noted', 'user: what is the word?', 'assistant: The capital of France is Paris.', 'user: again?'])
    expect(listed.data.length).toBe(6)
    expect(listed.data[5]!.id).toBe(done.output.at(-1).id)
  })

  test('the mock models: a turn counts the items added before it; store: false adds nothing; an unknown conv_ id is a 404', async () => {
    for (const model of ['mock-gpt', 'mock-claude']) {
      const conv = await client.conversations.create()
      const alone = await client.responses.create({ model, input: 'mock: text hi' })
      await client.conversations.items.create(conv.id, { items: [user('a long earlier message '.repeat(20))] })
      const r = await client.responses.create({ model, conversation: conv.id, input: 'mock: text hi' })
      expect(r.output_text).toBe('hi')
      expect(r.usage!.input_tokens).toBeGreaterThan(alone.usage!.input_tokens + 50)
      expect((await client.conversations.items.list(conv.id)).data.length).toBe(3)
      await client.responses.create({ model, conversation: conv.id, input: 'mock: text unstored', store: false })
      expect((await client.conversations.items.list(conv.id)).data.length).toBe(3)
    }
    const unknown = await errorOf(client.responses.create({ model: 'mock-gpt', conversation: `conv_${'0'.repeat(48)}`, input: 'hi' }))
    expect(unknown.status).toBe(404)
    expect(unknown.message).toContain('conversation:')
  })

  test('the response says the conversation it ran in, as OpenAI\'s does: JSON and stream, pass-through and translated, and when retrieved', async () => {
    const conv = await client.conversations.create()
    const said = { id: conv.id }
    const runs: [string, () => void, boolean][] = [
      ['gpt-5.2', () => rig.up.script({ json: fixture('openai/responses/nonstream-text.json') }), false],
      ['gpt-5.2', () => rig.up.script({ sse: fixture('openai/responses/stream-text.sse') }), true],
      ['claude-sonnet-4-5', () => rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') }), false],
      ['claude-sonnet-4-5', () => rig.up.script({ sse: fixture('anthropic/messages/stream-text.sse') }), true],
    ]
    for (const [model, script, stream] of runs) {
      script()
      let id: string
      if (stream) {
        const events: any[] = []
        for await (const ev of await client.responses.create({ model, conversation: conv.id, input: 'hi', stream: true })) events.push(ev)
        const opening = events.filter((ev) => ev.type === 'response.created' || ev.type === 'response.in_progress')
        expect(opening.length).toBeGreaterThan(0)
        expect({ model, opening: opening.map((ev) => ev.response.conversation) }).toEqual({ model, opening: opening.map(() => said) })
        const last = events.findLast((ev) => ev.type === 'response.completed' || ev.type === 'response.incomplete')
        expect({ model, last: last.response.conversation }).toEqual({ model, last: said })
        id = last.response.id
      } else {
        const r = await client.responses.create({ model, conversation: conv.id, input: 'hi' })
        expect({ model, conversation: r.conversation }).toEqual({ model, conversation: said })
        id = r.id
      }
      expect({ model, stream, retrieved: (await client.responses.retrieve(id)).conversation }).toEqual({ model, stream, retrieved: said })
    }
    // a turn in none says none
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    expect((await client.responses.create({ model: 'gpt-5.2', input: 'hi' })).conversation ?? null).toBeNull()
  })

  test("a turn's input_items are its own input, as OpenAI lists them, not the conversation before it", async () => {
    const conv = await client.conversations.create({ items: [user('earlier')] })
    await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: 'mock: text one' })
    const second = await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: [user('mock: text two'), user('and three')] })
    const listed = await client.responses.inputItems.list(second.id, { order: 'asc' })
    expect(texts(listed.data)).toEqual(['user: mock: text two', 'user: and three'])
    expect((await client.conversations.items.list(conv.id)).data.length).toBe(6)
  })

  test('a conversation by a name of its own is still the gateway thread of that name', async () => {
    const name = `named-${crypto.randomUUID()}`
    await client.responses.create({ model: 'mock-gpt', conversation: name, input: 'mock: text one' })
    const alone = await client.responses.create({ model: 'mock-gpt', input: 'mock: text two' })
    const r = await client.responses.create({ model: 'mock-gpt', conversation: name, input: 'mock: text two' })
    expect(r.usage!.input_tokens).toBeGreaterThan(alone.usage!.input_tokens)
    expect(await status(client.conversations.retrieve(name))).toBe(404)
  })
})

test('a conversation past responses.max_thread_bytes is refused naming the limit, and one item deleted lets it go on', async () => {
  const { NO_LIMITS } = await import('../batches/helpers.ts')
  const { startGateway } = await import('../helpers/server.ts')
  const g = await startGateway({ env: NO_LIMITS, yaml: 'responses:\n  max_thread_bytes: 50000\n' })
  try {
    const openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
    const big = await openai.conversations.create({ items: [user(`one ${'w '.repeat(15_000)}`), user(`two ${'w '.repeat(15_000)}`)] })
    const over = await errorOf(openai.responses.create({ model: 'mock-gpt', conversation: big.id, input: 'mock: text more' }))
    expect(over.status).toBe(400)
    expect(over.message).toContain('responses.max_thread_bytes')
    const first = (await openai.conversations.items.list(big.id, { order: 'asc' })).data[0]!
    await openai.conversations.items.delete(first.id!, { conversation_id: big.id })
    expect((await openai.responses.create({ model: 'mock-gpt', conversation: big.id, input: 'mock: text more' })).status).toBe('completed')
  } finally {
    await g.stop()
  }
})
