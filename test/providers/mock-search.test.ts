// The mock's web search (`mock: search <QUERY>`), so a CI pipeline can try its web-search flows
// offline: a model offered a web search answers with one, as its provider tells one on each
// surface (a web_search_call item and url_citation annotations, a chat message's annotations, and
// for a Claude-family model the messages surface's server_tool_use and web_search_tool_result
// blocks), counted and priced as one search; a request that offers none is refused saying why.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { NO_LIMITS } from '../batches/helpers.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let g: Gateway
let openai: OpenAI
let anthropic: Anthropic
beforeAll(async () => {
  g = await startGateway({ env: NO_LIMITS })
  openai = new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
  anthropic = new Anthropic({ apiKey: g.key, baseURL: `${g.url}/api/beta`, maxRetries: 0 })
})
afterAll(() => g.stop())

const URL_OF = 'https://example.com/search?q=paris%20weather'
const record = async (id: string) => {
  for (let i = 0; i < 50; i++) {
    const r = await fetch(`${g.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${g.key}` } })
    if (r.status === 200) return ((await r.json()) as { generation: any }).generation
    await Bun.sleep(20)
  }
  throw new Error(`no record of ${id}`)
}

describe('mock: search', () => {
  for (const [model, stream] of [['mock-claude', false], ['mock-claude', true], ['mock-gpt', false], ['mock-gpt', true]] as const) {
    test(`responses, ${model}, ${stream ? 'streamed' : 'whole'}: a web_search_call, then text citing its source`, async () => {
      const body = { model, tools: [{ type: 'web_search' as const }], include: ['web_search_call.action.sources' as const], input: 'mock: search paris weather' }
      const r = stream ? await openai.responses.stream(body).finalResponse() : await openai.responses.create(body)
      expect(r.output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
      expect(r.output[0]).toMatchObject({ type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'paris weather', sources: [{ type: 'url', url: URL_OF }] } })
      expect(r.output_text).toBe('Results for paris weather.')
      const part = (r.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText
      expect(part.annotations).toEqual([{ type: 'url_citation', start_index: 0, end_index: 26, url: URL_OF, title: 'Result for paris weather' }])
    })
  }

  test('responses: the search goes on with the thread (the next turn answers)', async () => {
    const first = await openai.responses.create({ model: 'mock-claude', tools: [{ type: 'web_search' }], input: 'mock: search paris weather' })
    const next = await openai.responses.create({ model: 'mock-claude', tools: [{ type: 'web_search' }], previous_response_id: first.id, input: 'mock: text and tomorrow' })
    expect(next.output_text).toBe('and tomorrow')
  })

  for (const model of ['mock-claude', 'mock-gpt']) {
    test(`chat, ${model}: the text (\`mock: text\` beside it) carries the url_citation annotation; one search in the record`, async () => {
      const c = await openai.chat.completions.create({ model, web_search_options: {}, messages: [{ role: 'user', content: 'mock: search paris weather\nmock: text It is sunny.' }] })
      expect(c.choices[0]!.message.content).toBe('It is sunny.')
      expect(c.choices[0]!.message.annotations).toEqual([{ type: 'url_citation', url_citation: { start_index: 0, end_index: 12, url: URL_OF, title: 'Result for paris weather' } }])
      expect((await record(c.id)).usage.web_searches).toBe(1)
    })
  }

  for (const stream of [false, true]) {
    test(`messages, ${stream ? 'streamed' : 'whole'}: Claude's search blocks, one search in the usage and the record; sent back, the next turn answers`, async () => {
      const tools = [{ type: 'web_search_20250305' as const, name: 'web_search' as const }]
      const body = { model: 'mock-claude', max_tokens: 100, tools, messages: [{ role: 'user' as const, content: 'mock: search paris weather' }] }
      const m = stream ? await anthropic.messages.stream(body).finalMessage() : await anthropic.messages.create(body)
      expect(m.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text'])
      expect(m.content[0]).toMatchObject({ type: 'server_tool_use', name: 'web_search', input: { query: 'paris weather' } })
      const result = m.content[1] as Anthropic.WebSearchToolResultBlock
      expect(result.tool_use_id).toBe((m.content[0] as Anthropic.ServerToolUseBlock).id)
      expect(result.content).toEqual([{ type: 'web_search_result', url: URL_OF, title: 'Result for paris weather', encrypted_content: Buffer.from('paris weather').toString('base64'), page_age: null }])
      expect(m.usage.server_tool_use?.web_search_requests).toBe(1)
      // the text cites the result as Claude's does
      expect((m.content[2] as Anthropic.TextBlock).citations).toEqual([{ type: 'web_search_result_location', url: URL_OF, title: 'Result for paris weather', encrypted_index: Buffer.from(URL_OF).toString('base64'), cited_text: 'Result for paris weather' }])
      expect((await record(m.id)).usage.web_searches).toBe(1)
      const next = await anthropic.messages.create({ ...body, messages: [...body.messages, { role: 'assistant', content: m.content }, { role: 'user', content: 'mock: text thanks' }] })
      expect(next.content.map((b) => b.type === 'text' && b.text)).toEqual(['thanks'])
    })
  }

  test('the answer after the search is what the rest of the request asks: a schema\'s JSON, a tool call', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
    const json = await openai.responses.create({ model: 'mock-claude', tools: [{ type: 'web_search' }], text: { format: { type: 'json_schema', name: 'w', schema, strict: true } }, input: 'mock: search paris weather' })
    expect(json.output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
    expect(JSON.parse(json.output_text)).toEqual({ city: 'example' })
    const tool = { type: 'function' as const, name: 'save', parameters: { type: 'object', properties: {} }, strict: false }
    const called = await openai.responses.stream({ model: 'mock-gpt', tools: [{ type: 'web_search' }, tool], input: 'mock: search paris weather\nmock: tool save {}' }).finalResponse()
    expect(called.output.map((it) => it.type)).toEqual(['web_search_call', 'function_call'])
    expect((await record(called.id)).usage.web_searches).toBe(1)
  })

  test('a query holding a lone surrogate searches as its well-formed text', async () => {
    const c = await openai.chat.completions.create({ model: 'mock-claude', web_search_options: {}, messages: [{ role: 'user', content: 'mock: search a\ud800b' }] })
    expect(c.choices[0]!.message.annotations?.[0]?.url_citation.url).toBe('https://example.com/search?q=a%EF%BF%BDb')
  })

  test('a Claude model the mock answers (no upstream configured) is charged the search at its price', async () => {
    const m = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'mock: search paris weather' }] })
    const plain = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'mock: text Results for paris weather.' }] })
    const [searched, not] = [await record(m.id), await record(plain.id)]
    expect(searched.usage.web_searches).toBe(1)
    // a search is $10 a thousand at Anthropic; the two differ by it, give or take the prompts' few tokens
    expect(searched.cost - not.cost).toBeGreaterThan(0.0099)
    expect(searched.cost - not.cost).toBeLessThan(0.0101)
  })

  test('refused, saying why, with no search offered (Anthropic\'s tool is a Claude model\'s), and without a query', async () => {
    const refused = async (p: Promise<unknown>) => {
      try {
        await p
      } catch (e) {
        if (e instanceof OpenAI.APIError || e instanceof Anthropic.APIError) return { status: e.status, message: String((e.error as any)?.error ?? e.error) }
        throw e
      }
      throw new Error('not refused')
    }
    const none = await refused(openai.responses.create({ model: 'mock-claude', input: 'mock: search paris weather' }))
    expect(none.status).toBe(400)
    expect(none.message).toContain('mock: search needs the request to offer a web search')
    const gptMessages = await refused(anthropic.messages.create({ model: 'mock-gpt', max_tokens: 10, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'mock: search paris weather' }] }))
    expect(gptMessages.message).toContain('Claude-family')
    expect((await refused(anthropic.messages.create({ model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: 'mock: search paris weather' }] }))).status).toBe(400)
    expect((await refused(openai.chat.completions.create({ model: 'mock-claude', web_search_options: {}, messages: [{ role: 'user', content: 'mock: search ' }] }))).message).toContain('needs a query')
  })
})
