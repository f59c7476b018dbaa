// A database from before the hourly rollup kept the parts of its tokens (cache reads, cache
// writes, reasoning): the gateway migrates it at start, and the hours it had rolled up already
// count their parts from the records stored then, so a report over them says what the records
// say, not 0.
import { afterAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres } from '../helpers/database.ts'
import { fixtureJson, startFakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { upgradedGateway } from '../helpers/undo-migrations.ts'

const dataDir = tempDir('switchyard-usage-details-upgrade-')
const up = await startFakeUpstream()
afterAll(async () => {
  await up.stop()
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_usage_details'))

const reply = (id: string, cached: number, written: number, reasoning: number) => ({
  json: {
    ...fixtureJson('openai/chat/nonstream-text.json'),
    id,
    model: 'gpt-5.6-sol',
    usage: { prompt_tokens: 10_000, completion_tokens: 100, total_tokens: 10_100, prompt_tokens_details: { cached_tokens: cached, cache_write_tokens: written }, completion_tokens_details: { reasoning_tokens: reasoning } },
  },
})

test('hours rolled up before the parts were kept report the parts their records hold', async () => {
  expect(added).toBeDefined()
  const env = upstreamEnv(up)
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const { key } = await first.services.keys.create({ name: 'from before' })
  const client = new OpenAI({ apiKey: key, baseURL: `${first.url}/api/alpha/v1`, maxRetries: 0 })
  up.script(reply('chatcmpl-before-1', 2000, 6000, 40))
  await client.chat.completions.create({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'Hi.' }] })
  up.script(reply('chatcmpl-before-2', 500, 0, 7))
  await client.chat.completions.create({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'Hi again.' }] })
  await first.stop()

  // the database as the version before left it: no columns, no record of their migration
  const second = await upgradedGateway(dataDir, env, migrations, added!)
  try {
    // a window ending now: the hour of the requests is read from the rollup
    const report = (await (await fetch(`${second.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as any
    const parts = { input_cached_tokens: 2500, input_cache_write_tokens: 6000, reasoning_tokens: 47 }
    expect(report.totals).toMatchObject({ total_requests: 2, input_tokens: 20_000, ...parts })
    expect(report.top_models).toMatchObject([{ model: 'gpt-5.6-sol', requests: 2, ...parts }])
    expect(report.series.filter((p: any) => p.requests > 0)).toMatchObject([{ requests: 2, ...parts }])
  } finally {
    await second.stop()
  }
}, 60_000)
