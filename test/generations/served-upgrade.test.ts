// A database from before records kept how a reply was served (generations.service_tier, speed,
// inference_geo), holding records: the gateway migrates it at start, the records stored before
// read with the three as null (never guessed), and the next reply's record says them.
import { afterAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { upgradedGateway } from '../helpers/undo-migrations.ts'

const dataDir = tempDir('switchyard-served-upgrade-')
const up = await startFakeUpstream()
afterAll(async () => {
  await up.stop()
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_generation_served'))!

const reply = (id: string, tier: string) => ({ json: { ...fixtureJson('openai/chat/nonstream-text.json'), id, service_tier: tier } })

test('records stored before the columns read as not said; the next one says its tier', async () => {
  expect(added).toBeDefined()
  const env = upstreamEnv(up)
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const { key } = await first.services.keys.create({ name: 'from before' })
  up.script(reply('chatcmpl-before', 'flex'))
  await new OpenAI({ apiKey: key, baseURL: `${first.url}/api/alpha/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
  await first.stop()

  // the database as the version before left it: no columns, no record of their migration
  const second = await upgradedGateway(dataDir, env, migrations, added)
  try {
    up.script(reply('chatcmpl-after', 'priority'))
    await new OpenAI({ apiKey: key, baseURL: `${second.url}/api/alpha/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
    const list = (await (await fetch(`${second.url}/api/v1/generations`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Record<string, unknown>[] }
    const said = list.data.map((g) => [g.id, g.service_tier, g.speed, g.inference_geo])
    expect(said).toEqual([
      ['chatcmpl-after', 'priority', null, null],
      ['chatcmpl-before', null, null, null],
    ])
  } finally {
    await second.stop()
  }
}, 60_000)
