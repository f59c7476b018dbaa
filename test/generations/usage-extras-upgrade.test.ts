// A database from before records kept the priced extras of their usage (generations.usage_extras),
// holding records: the gateway migrates it at start, a record stored before reads as it did (its
// cost as stored, no extras guessed), and the next reply's record says its searches.
import { afterAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres } from '../helpers/database.ts'
import { fixture, startFakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { upgradedGateway } from '../helpers/undo-migrations.ts'

const dataDir = tempDir('switchyard-usage-extras-upgrade-')
const up = await startFakeUpstream()
afterAll(async () => {
  await up.stop()
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_generation_usage_extras'))!

const searched = (id: string) => ({ sse: fixture('anthropic/messages/stream-web-search.handwritten.sse').replace(/"id":"msg_[A-Za-z0-9]+"/, `"id":"${id}"`) })
const ask = (anthropic: Anthropic) =>
  anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any }).finalMessage()

test('a record stored before the column reads as before; the next one says its searches', async () => {
  expect(added).toBeDefined()
  const env = upstreamEnv(up)
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const { key } = await first.services.keys.create({ name: 'from before' })
  up.script(searched('msg_extras_before'))
  await ask(new Anthropic({ apiKey: key, baseURL: `${first.url}/api/beta`, maxRetries: 0 }))
  await first.stop()

  // the database as the version before left it: no column, no record of its migration
  const second = await upgradedGateway(dataDir, env, migrations, added)
  try {
    up.script(searched('msg_extras_after'))
    await ask(new Anthropic({ apiKey: key, baseURL: `${second.url}/api/beta`, maxRetries: 0 }))
    const list = (await (await fetch(`${second.url}/api/v1/generations`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: any[] }
    expect(list.data.map((g) => [g.id, g.usage.web_searches])).toEqual([
      ['msg_extras_after', 1],
      ['msg_extras_before', undefined],
    ])
    // the same reply, priced alike before and after: only what the record shows differs
    expect(list.data[1].cost).toBeGreaterThan(0)
    expect(list.data[1].cost).toBe(list.data[0].cost)
  } finally {
    await second.stop()
  }
}, 60_000)
