// A conversation's items under many clients at once, and in the order PostgreSQL lists them:
// every turn's input and output added once, together; nothing left of a conversation deleted
// meanwhile; and items listed in the order they were added whatever the database's collation.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { onPostgres } from '../helpers/database.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'
import { conversationStoreOf } from '../../src/surfaces/responses/conversations/store.ts'

let rig: ResponsesRig
let client: OpenAI
beforeAll(async () => {
  rig = await startResponsesRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_MAX_CONCURRENT: '1000' })
  client = rig.client
})
afterAll(() => rig.stop())

const user = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text })
const textOf = (it: any) => (typeof it.content === 'string' ? it.content : (it.content ?? []).map((p: any) => p.text).join(''))
const sql = () => rig.gw.services.storage.sql
const all = async (id: string) => {
  const out: any[] = []
  for await (const it of client.conversations.items.list(id, { order: 'asc', limit: 100 })) out.push(it)
  return out
}
const orphans = async () =>
  (await sql().get<{ n: number }>('SELECT count(*) AS "n" FROM conversation_items i WHERE NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = i.conversation_id)'))!.n

test('50 turns at once in one conversation: each one that ran added once, its input and output side by side; one refused adds nothing', async () => {
  const conv = await client.conversations.create()
  const n = 50
  // a turn while another of the conversation runs is refused (409), as one by name is; the rest run
  const replies = await Promise.all(
    Array.from({ length: n }, (_, k) =>
      client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: `mock: text t${k}` }).then(
        (r) => ({ k, status: r.status as string | number }),
        (e) => ({ k, status: (e as { status: number }).status }),
      ),
    ),
  )
  const ran = replies.filter((r) => r.status === 'completed').map((r) => `t${r.k}`)
  expect(replies.every((r) => r.status === 'completed' || r.status === 409)).toBe(true)
  expect(ran.length).toBeGreaterThan(0)
  // and then one after another, every one runs
  for (const r of replies.filter((r) => r.status === 409)) {
    expect((await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: `mock: text t${r.k}` })).status).toBe('completed')
    ran.push(`t${r.k}`)
  }
  const items = await all(conv.id)
  expect(items.length).toBe(2 * n)
  const seen: string[] = []
  for (let at = 0; at < items.length; at += 2) {
    const asked = textOf(items[at]).replace('mock: text ', '')
    expect(items[at].role).toBe('user')
    // each turn's answer right after its question
    expect(textOf(items[at + 1])).toBe(asked)
    seen.push(asked)
  }
  expect(seen.toSorted()).toEqual(ran.toSorted())
}, 60_000)

test('items added at once under one id of the client: every add is kept, each item under an id of its own', async () => {
  const conv = await client.conversations.create()
  const results = await Promise.allSettled(Array.from({ length: 20 }, (_, k) => client.conversations.items.create(conv.id, { items: [{ ...user(`same ${k}`), id: 'msg_same' } as never] })))
  expect(results.map((r) => r.status)).toEqual(Array(20).fill('fulfilled'))
  const items = await all(conv.id)
  expect(items.length).toBe(20)
  expect(new Set(items.map((it) => it.id)).size).toBe(20)
}, 60_000)

test('a conversation deleted while items are added and turns run: nothing of it is left', async () => {
  for (let round = 0; round < 10; round++) {
    const conv = await client.conversations.create({ items: [user('first')] })
    const adds = Array.from({ length: 8 }, (_, k) =>
      k % 2 === 0
        ? client.conversations.items.create(conv.id, { items: [user(`add ${k}`), user(`more ${k}`)] }).catch(() => undefined)
        : client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: `mock: text r${k}` }).catch(() => undefined),
    )
    const gone = client.conversations.delete(conv.id)
    await Promise.all([...adds, gone])
  }
  expect(await orphans()).toBe(0)
}, 60_000)

test('items added as their conversation is deleted: each add is a 200 listing every item sent, or a 404; never a 200 listing none', async () => {
  // the delete lands between an add's finding the conversation and its writing the items (as it
  // did for about a third of the adds racing a delete on PostgreSQL)
  const store = conversationStoreOf(rig.gw.services)
  const keyId = (await rig.gw.services.keys.list()).find((k) => k.name === 'bootstrap')!.id
  const append = store.append
  const conv = await client.conversations.create()
  store.append = async (id, items) => {
    await store.delete(keyId, id)
    return append.call(store, id, items)
  }
  try {
    const e = (await client.conversations.items.create(conv.id, { items: [user('lost')] }).then(() => undefined, (err) => err)) as { status?: number; message?: string }
    expect(e?.status).toBe(404)
    expect(e?.message).toContain(`Conversation with id '${conv.id}' not found.`)
  } finally {
    store.append = append
  }
  // and under a real race every 200 lists what was sent
  for (let round = 0; round < 5; round++) {
    const c = await client.conversations.create()
    const adds = Array.from({ length: 20 }, (_, k) => client.conversations.items.create(c.id, { items: [user(`a${k}`), user(`b${k}`)] }).then((l) => l.data.length, (err) => (err as { status: number }).status))
    await Bun.sleep(round)
    await client.conversations.delete(c.id)
    for (const got of await Promise.all(adds)) expect([2, 404]).toContain(got)
  }
}, 60_000)

test('items are listed in the order they were added under a collation that orders digits as numbers (PostgreSQL)', async () => {
  if (onPostgres) {
    // a database made with such a collation orders the seq column so unless told not to
    await sql().run(`CREATE COLLATION IF NOT EXISTS numeric_order (provider = icu, locale = 'und-u-kn-true')`)
    await sql().run('ALTER TABLE conversation_items ALTER COLUMN seq TYPE text COLLATE numeric_order')
  }
  const texts = Array.from({ length: 20 }, (_, k) => `m${k}`)
  const conv = await client.conversations.create({ items: texts.slice(0, 12).map(user) })
  await client.conversations.items.create(conv.id, { items: texts.slice(12).map(user) })
  expect((await all(conv.id)).map(textOf)).toEqual(texts)
  expect((await client.conversations.items.list(conv.id, { limit: 100 })).data.map(textOf)).toEqual(texts.toReversed())
  // paged one at a time by `after`, each way
  const asc: string[] = []
  for await (const it of client.conversations.items.list(conv.id, { order: 'asc', limit: 1 })) asc.push(textOf(it))
  expect(asc).toEqual(texts)
  const desc: string[] = []
  for await (const it of client.conversations.items.list(conv.id, { order: 'desc', limit: 3 })) desc.push(textOf(it))
  expect(desc).toEqual(texts.toReversed())
  // and a turn in it sees them in that order
  const r = await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: 'mock: text last' })
  expect(r.status).toBe('completed')
  expect((await all(conv.id)).map(textOf).slice(0, 20)).toEqual(texts)
}, 60_000)
