// What an upstream bills beside the four token buckets is billed here too: Anthropic's cache
// writes made to last an hour (at 1.6× the 5-minute price), web searches (Anthropic's server
// tool and OpenAI's web_search_call, $10 a thousand), OpenAI's audio tokens, and OpenAI's
// processing tiers (priority at a premium, flex at half). Each was billed as plain tokens, or not
// at all, so a key could run up searches, or priority tokens, no one paid for.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
// claude-sonnet-4-5 below 200k prompt tokens, USD per million: input 3, output 15, cache read
// 0.3, 5-minute write 3.75, hour write 6; a web search $0.01 (the price library's figures)
const sonnet = (u: { input: number; output: number; read?: number; write5m?: number; write1h?: number; searches?: number }) =>
  (u.input * 3 + u.output * 15 + (u.read ?? 0) * 0.3 + (u.write5m ?? 0) * 3.75 + (u.write1h ?? 0) * 6) / 1e6 + (u.searches ?? 0) * 0.01

describe('billed beside the tokens', () => {
  test("Anthropic cache writes made for an hour, at the hour's price, JSON and streamed", async () => {
    const reply = fixtureJson('anthropic/messages/nonstream-cache-read-and-write.json')
    reply.usage.cache_creation = { ephemeral_1h_input_tokens: 300, ephemeral_5m_input_tokens: 118 }
    rig.up.script({ json: JSON.stringify(reply) })
    const r = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask })
    const want = sonnet({ input: 3, output: 33, read: 1111, write5m: 118, write1h: 300 })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(want, 12)

    // the same usage in a stream: message_start carries it
    const sse = fixture('anthropic/messages/stream-cache-write.sse').replace(
      /"cache_creation_input_tokens":(\d+)/,
      (_m, n) => `"cache_creation_input_tokens":${n},"cache_creation":{"ephemeral_1h_input_tokens":${n},"ephemeral_5m_input_tokens":0}`,
    )
    const write = Number(/"cache_creation_input_tokens":(\d+)/.exec(sse)![1])
    expect(write).toBeGreaterThan(0)
    rig.up.script({ sse })
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask }).finalMessage()
    const g = await rig.generation(final.id)
    const u = final.usage
    expect(g.cost).toBeCloseTo(sonnet({ input: u.input_tokens, output: u.output_tokens, read: u.cache_read_input_tokens ?? 0, write1h: write }), 12)
  })

  test("Anthropic's web searches, reported in message_delta and in a JSON reply", async () => {
    const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as any
    rig.up.script({ sse: fixture('anthropic/messages/stream-web-search.handwritten.sse') })
    const final = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools }).finalMessage()
    const one = sonnet({ input: 2107, output: 41, searches: 1 })
    expect((await rig.generation(final.id)).cost).toBeCloseTo(one, 12)

    const json = { ...final, id: 'msg_searches_3', usage: { ...final.usage, server_tool_use: { web_search_requests: 3 } } }
    rig.up.script({ json: JSON.stringify(json) })
    const plain = await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools })
    expect((await rig.generation(plain.id)).cost).toBeCloseTo(sonnet({ input: 2107, output: 41, searches: 3 }), 12)

  })

  test("OpenAI's web_search_call items on the Responses API, and audio tokens on chat", async () => {
    // gpt-5, USD per million: input 1.25, output 10; a search $0.01
    const response = {
      ...fixtureJson('openai/responses/nonstream-text.json'),
      id: 'resp_searched',
      model: 'gpt-5',
      usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1100 },
    }
    response.output = [
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather paris' } },
      { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'weather paris today' } },
      ...response.output,
    ]
    rig.up.script({ json: JSON.stringify(response) })
    const r = await rig.client.responses.create({ model: 'gpt-5', input: 'weather in Paris?', tools: [{ type: 'web_search' }], store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo((1000 * 1.25 + 100 * 10) / 1e6 + 0.02, 12)

    // gpt-audio, USD per million: text in 2.5, out 10; audio in 32, out 64
    const completion = fixtureJson('openai/chat/nonstream-text.json')
    completion.id = 'chatcmpl-audio'
    completion.model = 'gpt-audio'
    completion.usage = { prompt_tokens: 1500, completion_tokens: 2500, total_tokens: 4000, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 2000 } }
    rig.up.script({ json: JSON.stringify(completion) })
    const c = await rig.client.chat.completions.create({ model: 'gpt-audio', messages: ask })
    expect((await rig.generation(c.id)).cost).toBeCloseTo((500 * 2.5 + 1000 * 32 + 500 * 10 + 2000 * 64) / 1e6, 12)
  })

  test("OpenAI's priority and flex tiers, as the reply names the tier that served it, on every path", async () => {
    // USD per million at the standard tier: gpt-4.1 input 2, output 8; gpt-4o-mini 0.15, 0.6.
    // Priority is 1.75× for gpt-4.1 (3.50 / 14 on OpenAI's priority page); flex half of standard.
    const gpt41 = (input: number, output: number) => (input * 2 + output * 8) / 1e6
    const completion = fixtureJson('openai/chat/nonstream-text.json')
    completion.id = 'chatcmpl-priority'
    completion.service_tier = 'priority'
    completion.usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 }
    rig.up.script({ json: JSON.stringify(completion) })
    const c = await rig.client.chat.completions.create({ model: 'gpt-4.1', messages: ask, service_tier: 'priority' })
    expect((await rig.generation(c.id)).cost).toBeCloseTo(gpt41(1000, 100) * 1.75, 12)

    // asked for priority, served at default (a prompt past 128k tokens is): the standard price
    rig.up.script({ json: JSON.stringify({ ...completion, id: 'chatcmpl-default', service_tier: 'default' }) })
    const d = await rig.client.chat.completions.create({ model: 'gpt-4.1', messages: ask, service_tier: 'priority' })
    expect((await rig.generation(d.id)).cost).toBeCloseTo(gpt41(1000, 100), 12)

    // a relayed stream: the usage chunk names the tier, as every chunk does
    const flex = fixture('openai/chat/stream-text-include-usage.sse').replaceAll('"service_tier":"default"', '"service_tier":"flex"')
    rig.up.script({ sse: flex })
    let id = ''
    for await (const chunk of await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask, stream: true, service_tier: 'flex' })) id = chunk.id
    expect((await rig.generation(id)).cost).toBeCloseTo(((78 * 0.15 + 9 * 0.6) / 1e6) * 0.5, 12)

    // the Responses API relayed: response.completed names it (the dated snapshot priced as its model)
    rig.up.script({ sse: fixture('openai/responses/stream-text.sse').replaceAll('"service_tier":"default"', '"service_tier":"priority"') })
    const final = await rig.client.responses.stream({ model: 'gpt-4.1', input: 'hi', service_tier: 'priority', store: false }).finalResponse()
    expect((await rig.generation(final.id)).cost).toBeCloseTo(gpt41(9, 12) * 1.75, 12)

    // translated: an Anthropic client's request to a GPT model, answered at priority
    rig.up.script({ json: JSON.stringify({ ...completion, id: 'chatcmpl-translated' }) })
    const m = await rig.anthropic.messages.create({ model: 'gpt-4.1', max_tokens: 100, messages: ask })
    expect((await rig.generation(m.id)).cost).toBeCloseTo(gpt41(1000, 100) * 1.75, 12)
  })

  test('a stream cut short is billed at the tier its start said, translated or relayed', async () => {
    // the same cut stream at the tier named and at default: the counted usage is the same, the price 1.75× (gpt-4.1)
    const costOf = async (tier: string, path: string, body: Record<string, unknown>, sse: string, idOf: (text: string) => string) => {
      rig.up.script({ sse: sse.replaceAll(/"service_tier":"[a-z]+"/g, `"service_tier":"${tier}"`), dropAfterEvents: 3 })
      const res = await fetch(`${rig.gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ ...body, stream: true }) })
      return (await rig.generation(idOf(await res.text()))).cost as number
    }
    const chat = fixture('openai/chat/stream-text-include-usage.sse')
    const firstData = (text: string) => JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n', text.indexOf('data: '))))
    // an Anthropic client's stream from a GPT model: the chunks name the tier, the usage chunk never comes
    const messages = { model: 'gpt-4.1', max_tokens: 100, messages: ask }
    const msgId = (text: string) => firstData(text).message.id
    const [priority, standard] = [await costOf('priority', '/api/beta/v1/messages', messages, chat, msgId), await costOf('default', '/api/beta/v1/messages', messages, chat, msgId)]
    expect(standard).toBeGreaterThan(0)
    expect(priority / standard).toBeCloseTo(1.75, 9)
    // the Responses API relayed: response.created says the tier asked for, the end that would say the one served never comes
    const responses = { model: 'gpt-4.1', input: 'hi', store: false }
    const respId = (text: string) => firstData(text).response.id
    const sse = fixture('openai/responses/stream-text.sse')
    const [asked, plain] = [await costOf('priority', '/api/alpha/v1/responses', { ...responses, service_tier: 'priority' }, sse, respId), await costOf('auto', '/api/alpha/v1/responses', responses, sse, respId)]
    expect(plain).toBeGreaterThan(0)
    expect(asked / plain).toBeCloseTo(1.75, 9)
  })
})
