// A generation record says what its cost counts beyond the token columns: Anthropic's cache
// writes made to last an hour, audio tokens in and out, web and file searches, the tokens of the
// Responses image tool's model. It kept none of them, so a record of a reply that searched the web
// or drew an image showed a cost its tokens did not explain. A reply with none of them keeps
// nothing more (its column stays null) and shows nothing more. Batch items' records too.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
})
afterAll(() => rig.stop())

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
const EXTRAS = ['cache_write_1h_tokens', 'audio_input_tokens', 'audio_output_tokens', 'web_searches', 'file_searches', 'image_tool']

/** The extras a record shows, by name (those it lacks left out). */
const extrasOf = (g: any) => Object.fromEntries(EXTRAS.filter((k) => k in g.usage).map((k) => [k, g.usage[k]]))

/** What the record's row stores beyond the token columns. */
async function storedExtras(replyId: string): Promise<string | null> {
  await rig.gw.services.recorder.flush()
  const row = await rig.gw.services.storage.sql.get<{ x: string | null }>('SELECT usage_extras AS x FROM generations WHERE reply_id = ?', [replyId])
  return row!.x
}

test('a reply with none of them: the record shows none and stores nothing more', async () => {
  up().script({ json: fixture('openai/chat/nonstream-text.json') })
  const r = await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask })
  const g = await rig.generation(r.id)
  expect(extrasOf(g)).toEqual({})
  expect(g.usage.prompt_tokens).toBeGreaterThan(0)
  expect(await storedExtras(r.id)).toBeNull()
})

test("Anthropic's hour-long cache writes, JSON and streamed", async () => {
  const reply = fixtureJson('anthropic/messages/nonstream-cache-read-and-write.json')
  reply.id = 'msg_extras_1h'
  reply.usage.cache_creation = { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: reply.usage.cache_creation_input_tokens - 300 }
  up().script({ json: JSON.stringify(reply) })
  const m = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
  const g = await rig.generation(m.id)
  expect(extrasOf(g)).toEqual({ cache_write_1h_tokens: 300 })
  expect(g.usage.cache_creation_input_tokens).toBe(reply.usage.cache_creation_input_tokens)

  const sse = fixture('anthropic/messages/stream-cache-write.sse').replace(
    /"cache_creation_input_tokens":(\d+)/,
    (_m, n) => `"cache_creation_input_tokens":${n},"cache_creation":{"ephemeral_1h_input_tokens":${n},"ephemeral_5m_input_tokens":0}`,
  )
  const written = Number(/"cache_creation_input_tokens":(\d+)/.exec(sse)![1])
  up().script({ sse })
  const s = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask }).finalMessage()
  expect(extrasOf(await rig.generation(s.id))).toEqual({ cache_write_1h_tokens: written })
})

test("Claude's web searches, streamed, and its searches' cost beside its tokens'", async () => {
  up().script({ sse: fixture('anthropic/messages/stream-web-search.handwritten.sse') })
  const m = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any }).finalMessage()
  const g = await rig.generation(m.id)
  expect(extrasOf(g)).toEqual({ web_searches: 1 })
  // the search is $0.01 of the cost: what the tokens do not explain
  const tokensAlone = rig.gw.services.catalog.cost(rig.gw.services.catalog.resolve('claude-sonnet-4-5')!, { inputTokens: g.usage.prompt_tokens, outputTokens: g.usage.completion_tokens, cacheReadTokens: 0, cacheWriteTokens: 0 })!
  expect(g.cost - tokensAlone).toBeCloseTo(0.01, 9)
})

test("OpenAI's audio tokens, in and out", async () => {
  const audio = fixtureJson('openai/chat/nonstream-text.json')
  Object.assign(audio, { id: 'chatcmpl-extras-audio', model: 'gpt-audio', usage: { prompt_tokens: 1500, completion_tokens: 2500, total_tokens: 4000, prompt_tokens_details: { cached_tokens: 100, audio_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 2000 } } })
  up().script({ json: JSON.stringify(audio) })
  const r = await rig.client.chat.completions.create({ model: 'gpt-audio', messages: ask })
  expect(extrasOf(await rig.generation(r.id))).toEqual({ audio_input_tokens: 1000, audio_output_tokens: 2000 })
})

test("the Responses API's web and file searches and its image tool's tokens, in the lookup and in the listing", async () => {
  const base = fixtureJson('openai/responses/nonstream-text.json')
  const reply = { ...base, id: 'resp_extras_tools', model: 'gpt-5' }
  reply.output = [
    { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather paris' } },
    { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'paris forecast' } },
    { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['weather'], results: null },
    { id: 'ig_1', type: 'image_generation_call', status: 'completed', quality: 'high', size: '1024x1024', output_format: 'png', result: 'iVBORw0KGgo=', revised_prompt: 'A cat.' },
    ...base.output,
  ]
  reply.tools = [{ type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' }]
  reply.tool_usage = { image_gen: { input_tokens: 50, input_tokens_details: { image_tokens: 10, text_tokens: 40 }, output_tokens: 4160, total_tokens: 4210 }, web_search: { num_requests: 2 } }
  up().script({ json: JSON.stringify(reply) })
  const r = await rig.client.responses.create({ model: 'gpt-5', input: 'Weather, and draw it.', tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1024' } as never], store: false })
  const g = await rig.generation(r.id)
  const expected = {
    web_searches: 2,
    file_searches: 1,
    image_tool: { model: 'gpt-image-1', input_tokens: 50, image_input_tokens: 10, cached_tokens: 0, cached_image_tokens: 0, output_tokens: 4160, image_output_tokens: 4160 },
  }
  expect(extrasOf(g)).toEqual(expected)
  const listed = (await (await fetch(`${rig.gw.url}/api/v1/generations?limit=200`, { headers: { authorization: `Bearer ${rig.gw.key}` } })).json()) as { data: any[] }
  expect(extrasOf(listed.data.find((d) => d.id === r.id))).toEqual(expected)
})

test("a batch item's record keeps them as an interactive request's does", async () => {
  up().script((req) => {
    const body = req.json()
    const usage = { input_tokens: 6039, output_tokens: 20, server_tool_use: { web_search_requests: 3 } }
    return { json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage } }
  })
  const batch = await rig.anthropic.messages.batches.create({
    requests: [{ custom_id: 'searched', params: { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any, messages: ask } }],
  })
  for (let i = 0; i < 1000 && (await rig.anthropic.messages.batches.retrieve(batch.id)).processing_status !== 'ended'; i++) await Bun.sleep(15)
  await rig.gw.services.recorder.flush()
  const listed = (await (await fetch(`${rig.gw.url}/api/v1/generations?limit=200`, { headers: { authorization: `Bearer ${rig.gw.key}` } })).json()) as { data: any[] }
  const records = listed.data.filter((d) => d.batch_id === batch.id)
  expect(records.map(extrasOf)).toEqual([{ web_searches: 3 }])
})

const up = () => rig.up
