// A database of the version before stored_items: the responses it stored were given to their
// keys all the same, and a client in the middle of a conversation (the AI SDK with store on
// sends an item_reference for each earlier item) goes on after the upgrade as it did before it.
import { afterAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { undoMigrationsFrom } from '../helpers/undo-migrations.ts'
import { fixture, startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'

const dataDir = tempDir('switchyard-items-upgrade-')
const up = await startFakeUpstream()
afterAll(async () => {
  await up.stop()
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const env = { OPENAI_API_KEY: 'sk-upstream-openai-secret', OPENAI_BASE_URL: up.url }
const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_stored_items'))!
const client = (url: string, key: string) => new OpenAI({ apiKey: key, baseURL: `${url}/api/alpha/v1`, maxRetries: 0 })

test("items of responses stored before the upgrade are still their key's to name; another key's are not", async () => {
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const mine = await first.services.keys.create({ name: 'mid-conversation' })
  const theirs = await first.services.keys.create({ name: 'another tenant' })
  up.script({ json: fixture('openai/responses/nonstream-reasoning-summary.json') })
  const earlier = await client(first.url, mine.key).responses.create({ model: 'gpt-5.2', input: 'hello' })
  await first.stop()

  // the database as the version before left it: no stored_items, no record of its migration (nor
  // of any later one, whose tables go too: they are made again at start)
  const db = await openDatabaseOf(dataDir)
  await undoMigrationsFrom(db.sql, migrations, added)
  await db.close()

  const second = await startGateway({ dataDir, env, logLevel: 'silent' })
  try {
    const input = [{ role: 'user' as const, content: 'hello' }, ...earlier.output.map((o) => ({ type: 'item_reference' as const, id: o.id! })), { role: 'user' as const, content: 'more' }]
    up.script({ json: fixture('openai/responses/nonstream-text.json') })
    const r = await client(second.url, mine.key).responses.create({ model: 'gpt-5.2', input })
    expect(r.status).toBe('completed')
    expect(up.requests.at(-1)!.json().input).toEqual(input)
    const calls = up.requests.length
    const err = await client(second.url, theirs.key).responses.create({ model: 'gpt-5.2', input }).catch((e) => e)
    expect(err.status).toBe(404)
    expect(up.requests.length).toBe(calls)
  } finally {
    await second.stop()
  }
}, 60_000)
