// A database from before the hourly rollup summed what else the costs count (hour cache writes,
// audio tokens, web and file searches, the image tool's tokens), holding records that have
// them: the gateway migrates it at start, and the hours it had rolled up already count them from
// the records stored then, so a report over them says what the records say, not 0.
import { afterAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres } from '../helpers/database.ts'
import { fixture, fixtureJson, startFakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { upgradedGateway } from '../helpers/undo-migrations.ts'

const dataDir = tempDir('switchyard-usage-extras-rollup-upgrade-')
const up = await startFakeUpstream()
afterAll(async () => {
  await up.stop()
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_usage_hourly_extras'))
const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]

// OpenAI's audio tokens in and out
const audio = { ...fixtureJson('openai/chat/nonstream-text.json'), id: 'chatcmpl-up-audio', model: 'gpt-audio', usage: { prompt_tokens: 1500, completion_tokens: 2500, total_tokens: 4000, prompt_tokens_details: { cached_tokens: 100, audio_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 2000 } } }

// the Responses API's web and file searches and its image tool's tokens
function tools() {
  const base = fixtureJson('openai/responses/nonstream-text.json')
  return {
    ...base,
    id: 'resp_up_tools',
    model: 'gpt-5',
    output: [
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather paris' } },
      { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'paris forecast' } },
      { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['weather'], results: null },
      { id: 'ig_1', type: 'image_generation_call', status: 'completed', quality: 'high', size: '1024x1024', output_format: 'png', result: 'iVBORw0KGgo=', revised_prompt: 'A cat.' },
      ...base.output,
    ],
    tools: [{ type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' }],
    tool_usage: { image_gen: { input_tokens: 50, input_tokens_details: { image_tokens: 10, text_tokens: 40 }, output_tokens: 4160, total_tokens: 4210 }, web_search: { num_requests: 2 } },
  }
}

// Anthropic's hour-long cache writes and a web search
function claude() {
  const reply = fixtureJson('anthropic/messages/nonstream-cache-read-and-write.json')
  reply.id = 'msg_up_1h'
  reply.usage.cache_creation = { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: reply.usage.cache_creation_input_tokens - 300 }
  reply.usage.server_tool_use = { web_search_requests: 1 }
  return reply
}

test('hours rolled up before the extras were summed report the sums their records hold', async () => {
  expect(added).toBeDefined()
  const env = upstreamEnv(up)
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const { key } = await first.services.keys.create({ name: 'from before' })
  const openai = new OpenAI({ apiKey: key, baseURL: `${first.url}/api/alpha/v1`, maxRetries: 0 })
  up.script({ json: JSON.stringify(audio) })
  await openai.chat.completions.create({ model: 'gpt-audio', messages: ask })
  up.script({ json: JSON.stringify(tools()) })
  await openai.responses.create({ model: 'gpt-5', input: 'Weather, and draw it.', tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' } as never], store: false })
  up.script({ json: JSON.stringify(claude()) })
  await new Anthropic({ apiKey: key, baseURL: `${first.url}/api/beta`, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
  // a reply with none of them: its record keeps nothing more, and adds nothing to the sums
  up.script({ json: fixture('openai/chat/nonstream-text.json') })
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: ask })
  await first.stop()

  // the database as the version before left it: no columns, no record of their migration
  const second = await upgradedGateway(dataDir, env, migrations, added!)
  try {
    const report = async (query = '') => (await (await fetch(`${second.url}/api/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any
    const none = { input_cache_write_1h_tokens: 0, input_audio_tokens: 0, output_audio_tokens: 0, web_search_requests: 0, file_search_requests: 0, image_tool_tokens: 0 }
    const byModel = {
      'gpt-audio': { ...none, input_audio_tokens: 1000, output_audio_tokens: 2000 },
      'gpt-5': { ...none, web_search_requests: 2, file_search_requests: 1, image_tool_tokens: 50 + 4160 },
      'claude-sonnet-4-5': { ...none, input_cache_write_1h_tokens: 300, web_search_requests: 1 },
      'gpt-4o-mini': none,
    }
    const all = { input_cache_write_1h_tokens: 300, input_audio_tokens: 1000, output_audio_tokens: 2000, web_search_requests: 3, file_search_requests: 1, image_tool_tokens: 4210 }
    // a window ending now: the hour of the requests is read from the rollup the migration filled
    const now = await report()
    expect(now.totals).toMatchObject({ total_requests: 4, ...all })
    for (const [model, sums] of Object.entries(byModel)) expect([model, now.top_models.find((m: any) => m.model === model)]).toMatchObject([model, { requests: 1, ...sums }])
    expect(now.series.filter((p: any) => p.requests > 0).reduce((n: number, p: any) => n + p.web_search_requests, 0)).toBe(3)
    // the same by day, with a model filter
    expect((await report('?timeframe=7d&granularity=day&model=gpt-5')).totals).toMatchObject({ total_requests: 1, ...byModel['gpt-5'] })
  } finally {
    await second.stop()
  }
}, 60_000)
