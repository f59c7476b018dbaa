// Stored responses are kept `responses.retention_days` after the newest turn of their thread:
// an old response no later one continues is removed, and a thread whose newest turn is recent
// is kept whole, however old its first turns. Driven through the openai SDK; rows are aged
// in the database, and the retention's pass is run with the clock it would see.
import OpenAI from 'openai'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { spawnGateway, startGateway, tempDir, cleanup, type Gateway } from '../helpers/server.ts'
import { threadStoreOf } from '../../src/surfaces/responses/surface.ts'

const DAY = 86_400_000
let g: Gateway
let client: OpenAI

beforeAll(async () => {
  g = await startGateway({ env: { SWITCHYARD_RESPONSES_RETENTION_DAYS: '30' } })
  client = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
  // the gateway's own pass a second after its start, over before the tests age rows and prune
  // them themselves (on a slow run it removed some of theirs first); the next is an hour away
  await Bun.sleep(1_100)
  await g.services.retention.prune()
})
afterAll(() => g.stop())

const say = (text: string, previous?: string) => client.responses.create({ model: 'mock-gpt', input: `mock: text ${text}`, previous_response_id: previous })

/** Dates a stored response `days` back, as if it had been made then. */
async function age(id: string, days: number) {
  const n = await g.services.storage.sql.run('UPDATE stored_responses SET created_at = ? WHERE id = ?', [Date.now() - days * DAY, id])
  expect(n).toBe(1)
}

const kept = async (id: string) => {
  try {
    await client.responses.retrieve(id)
    return true
  } catch (e) {
    expect((e as { status?: number }).status).toBe(404)
    return false
  }
}

test('an old response nothing continues is removed; an old one a recent turn continues is kept with its thread', async () => {
  const first = await say('one')
  const second = await say('two', first.id)
  const third = await say('three', second.id)
  const alone = await say('alone')
  const young = await say('young')
  await threadStoreOf(g.services).flush()
  for (const id of [first.id, second.id, alone.id]) await age(id, 40)

  await g.services.retention.prune()
  expect(await kept(alone.id)).toBe(false)
  expect(await kept(young.id)).toBe(true)
  // the thread's newest turn is recent: its first two turns stay, and it can be continued whole
  for (const id of [first.id, second.id, third.id]) expect(await kept(id)).toBe(true)
  const fourth = await client.responses.create({ model: 'mock-gpt', input: 'mock: echo', previous_response_id: third.id })
  expect(fourth.status).toBe('completed')

  // a continuation of the removed one is a 400 that says it may have expired
  const err = await say('again', alone.id).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.message).toContain('expired')

  // once the newest turn is old too, the whole thread goes, newest first, in one pass
  await threadStoreOf(g.services).flush()
  for (const id of [third.id, fourth.id]) await age(id, 32)
  await g.services.retention.prune()
  for (const id of [first.id, second.id, third.id, fourth.id]) expect(await kept(id)).toBe(false)
  expect(await kept(young.id)).toBe(true)
})

test('a response past the retention is never continued, pruned or not; one continued just before it is kept by its continuation', async () => {
  // past the retention, within the pruner's day of grace: still stored, no longer continued
  const expired = await say('expired')
  await threadStoreOf(g.services).flush()
  await age(expired.id, 30.1)
  const err = await say('again', expired.id).catch((e) => e)
  expect(err.status).toBe(400)
  expect(err.message).toContain('expired')
  // nor is an item of it referenced
  const ref = await client.responses.create({ model: 'mock-gpt', input: [{ type: 'item_reference', id: expired.output[0]!.id! }, { role: 'user', content: 'mock: text ok' }] } as never).catch((e) => e)
  expect(ref.status).toBe(400)
  expect(ref.message).toContain('expired')
  await g.services.retention.prune()
  expect(await kept(expired.id)).toBe(true)

  // continued an hour before the retention: the continuation keeps it, past the grace too
  const early = await say('early')
  await threadStoreOf(g.services).flush()
  await age(early.id, 29.9)
  const next = await say('next', early.id)
  await threadStoreOf(g.services).flush()
  await age(early.id, 40)
  await g.services.retention.prune()
  expect(await kept(early.id)).toBe(true)
  expect((await client.responses.create({ model: 'mock-gpt', input: 'mock: echo', previous_response_id: next.id })).status).toBe('completed')
})

test('a conversation whose last turn is past the retention begins again, whatever the pruner has done', async () => {
  const turn = (text: string) => client.responses.create({ model: 'mock-gpt', input: `mock: text ${text}`, conversation: 'idle-conv' } as never)
  const first = await turn('one')
  const second = await turn('two')
  expect(second.previous_response_id).toBe(first.id)
  await threadStoreOf(g.services).flush()
  for (const id of [first.id, second.id]) await age(id, 30.5)
  const third = await turn('three')
  expect(third.previous_response_id ?? null).toBeNull()
})

test('pages of two rows: every old response nothing continues goes, page after page, rows of one ms included; a young thread stays whole', async () => {
  const singles = []
  for (let i = 0; i < 7; i++) singles.push(await say(`single ${i}`))
  const head = await say('head')
  const tail = await say('tail', head.id)
  await threadStoreOf(g.services).flush()
  // three of them made in one ms: the page's order goes on by row id
  const at = Date.now() - 50 * DAY
  for (const [i, r] of singles.entries()) await g.services.storage.sql.run('UPDATE stored_responses SET created_at = ? WHERE id = ?', [i < 3 ? at : at + i, r.id])
  await age(head.id, 50)
  const step = threadStoreOf(g.services).pruner(Date.now() - 31 * DAY, 2)
  let removed = 0
  for (let r = await step(); ; r = await step()) {
    removed += r.deleted
    if (!r.more) break
  }
  expect(removed).toBe(7)
  for (const r of singles) expect(await kept(r.id)).toBe(false)
  expect(await kept(head.id)).toBe(true)
  expect(await kept(tail.id)).toBe(true)
})

test('a gateway removes expired responses by itself soon after it starts; 0 days keeps them', async () => {
  const dir = tempDir()
  try {
    const key = 'sk-sy-test-' + crypto.randomUUID().replaceAll('-', '')
    const env = { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_DATABASE_URL: '', DATABASE_URL: '' }
    let gw = await spawnGateway({ dataDir: dir, env })
    const c = () => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    const gone = await c().responses.create({ model: 'mock-gpt', input: 'mock: text old' })
    gw.kill()
    await gw.exited
    const db = new Database(join(dir, 'switchyard.db'))
    db.run('UPDATE stored_responses SET created_at = ?', [Date.now() - 32 * DAY])
    db.close()

    gw = await spawnGateway({ dataDir: dir, env: { ...env, SWITCHYARD_RESPONSES_RETENTION_DAYS: '0' } })
    await Bun.sleep(2_000)
    expect((await c().responses.retrieve(gone.id)).id).toBe(gone.id)
    gw.kill()
    await gw.exited

    gw = await spawnGateway({ dataDir: dir, env })
    let status = 200
    for (let i = 0; i < 100 && status === 200; i++) {
      await Bun.sleep(50)
      status = (await fetch(`${gw.url}/api/alpha/v1/responses/${gone.id}`, { headers: { authorization: `Bearer ${key}` } })).status
    }
    expect(status).toBe(404)
    gw.kill()
    await gw.exited
  } finally {
    cleanup(dir)
  }
})

test("a removed response's upstream item ids go with it: a key may no longer name them", async () => {
  const threads = threadStoreOf(g.services)
  const apiKeyId = (await g.services.storage.sql.get<{ id: string }>('SELECT id FROM api_keys LIMIT 1'))!.id
  const item = (n: number) => `msg_0b028a7a2aca8d68006942f4e484e08193afa69324a01f67${n}`
  const save = (id: string, n: number) => threads.save({ id, apiKeyId, model: 'gpt-5.2', status: 'completed', previousResponseId: null, previous: null, conversation: null, inputItems: [], outputItems: [{ type: 'message', id: item(n), role: 'assistant', content: [] }] })
  await save('resp_upstream_old', 1)
  await save('resp_upstream_young', 2)
  await threads.flush()
  expect(await threads.owned(apiKeyId, [item(1), item(2)])).toEqual(new Set([item(1), item(2)]))
  await age('resp_upstream_old', 40)
  // past the retention: not the key's to name, even before the pruner comes by
  expect(await threads.owned(apiKeyId, [item(1), item(2)])).toEqual(new Set([item(2)]))
  await g.services.retention.prune()
  const rows = await g.services.storage.sql.all<{ item_id: string }>('SELECT item_id FROM stored_items WHERE item_id IN (?, ?)', [item(1), item(2)])
  expect(rows.map((r) => r.item_id)).toEqual([item(2)])
})
