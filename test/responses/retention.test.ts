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
  for (const id of [third.id, fourth.id]) await age(id, 31)
  await g.services.retention.prune()
  for (const id of [first.id, second.id, third.id, fourth.id]) expect(await kept(id)).toBe(false)
  expect(await kept(young.id)).toBe(true)
})

test('a turn in progress keeps the old response it continues, though nothing stored continues it yet', async () => {
  const old = await say('old')
  await threadStoreOf(g.services).flush()
  await age(old.id, 45)
  const threads = threadStoreOf(g.services)
  // what a continuation reads before it goes upstream
  const key = await g.services.keys.authenticate(g.key)
  await threads.history(key!.id, old.id, 'previous_response_id')
  await g.services.retention.prune()
  expect(await kept(old.id)).toBe(true)
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
    db.run('UPDATE stored_responses SET created_at = ?', [Date.now() - 31 * DAY])
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
