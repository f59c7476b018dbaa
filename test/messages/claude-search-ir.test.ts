// Claude's web search on the messages surface where the reply goes through the IR (the gateway's
// pause_on_call_tools_start): the client gets the search's blocks as Claude sent them (the
// server_tool_use and its result, the pages encrypted) and the text's citations, streamed or not,
// as the pass-through gives them; sent back, they reach Claude as they came, so a follow-up still
// has what it found; a GPT model continues from the text around them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { fixture, fixtureJson, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

const SEARCH_ID = 'srvtoolu_01HandwrittenA'
const RESULTS = [{ type: 'web_search_result', title: 'Paris weather', url: 'https://weather.example/paris', encrypted_content: 'EqgfCioIARgBIiQ3YTAw', page_age: 'November 23, 2026' }]
const USE = { type: 'server_tool_use', id: SEARCH_ID, name: 'web_search', input: { query: 'weather in Paris today' } }
const RESULT = { type: 'web_search_tool_result', tool_use_id: SEARCH_ID, content: RESULTS }
const searchedJson = {
  id: 'msg_01WebSearchJson',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [USE, RESULT, { type: 'text', text: 'It is sunny in Paris today.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 2107, output_tokens: 20, server_tool_use: { web_search_requests: 1 } },
}

const CITE = { type: 'web_search_result_location' as const, url: 'https://weather.example/paris', title: 'Paris weather', encrypted_index: 'Eo8BCioIAhgB', cited_text: 'Sunny, 21 °C' }
const cited = { ...searchedJson, content: [USE, RESULT, { type: 'text', text: 'Paris is ' }, { type: 'text', text: 'sunny', citations: [CITE] }, { type: 'text', text: ' today.' }] }
const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const textBlock = (i: number, text: string, citation?: object) =>
  ev('content_block_start', { index: i, content_block: { type: 'text', text: '', ...(citation ? { citations: [] } : {}) } }) +
  (citation ? ev('content_block_delta', { index: i, delta: { type: 'citations_delta', citation } }) : '') +
  ev('content_block_delta', { index: i, delta: { type: 'text_delta', text } }) +
  ev('content_block_stop', { index: i })
const citedStream =
  ev('message_start', { message: { ...searchedJson, content: [], stop_reason: null, usage: { input_tokens: 2107, output_tokens: 1 } } }) +
  ev('content_block_start', { index: 0, content_block: { ...USE, input: {} } }) +
  ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(USE.input) } }) +
  ev('content_block_stop', { index: 0 }) +
  ev('content_block_start', { index: 1, content_block: RESULT }) +
  ev('content_block_stop', { index: 1 }) +
  textBlock(2, 'Paris is ') +
  textBlock(3, 'sunny', CITE) +
  textBlock(4, ' today.') +
  ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: searchedJson.usage }) +
  ev('message_stop', {})

const tools = [{ type: 'web_search_20250305' as const, name: 'web_search' as const }]
const ask = [{ role: 'user' as const, content: 'Weather in Paris?' }]

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig({ SWITCHYARD_KEY_BURST_RPS: '1000' }, 'compat:\n  cross_family: translate\n')
})
afterAll(() => rig.stop())

/** The last request the upstream got, as JSON. */
const sent = () => rig.up.requests.at(-1)!.json()

describe('a web search through the IR path of the messages surface', () => {
  test('a whole reply holds the search blocks as Claude sent them', async () => {
    rig.up.script({ json: searchedJson })
    const m = (await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 500, tools, messages: ask, pause_on_call_tools_start: true } as never)) as Anthropic.Message
    expect(m.content.slice(0, 2) as unknown[]).toEqual([USE, RESULT])
    expect(m.content[2]).toMatchObject({ type: 'text', text: 'It is sunny in Paris today.' })
    expect(sent().pause_on_call_tools_start).toBeUndefined()
  })

  test('a stream says them as Anthropic does, and the SDK reads them whole', async () => {
    rig.up.script({ sse: fixture('anthropic/messages/stream-web-search.handwritten.sse') })
    const s = rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 500, tools, messages: ask, pause_on_call_tools_start: true } as never)
    const m = await s.finalMessage()
    expect(m.content.slice(0, 2) as unknown[]).toEqual([USE, RESULT])
    expect(m.content[2]).toMatchObject({ type: 'text', text: 'It is sunny in Paris today.' })
    expect(m.usage.server_tool_use?.web_search_requests).toBe(1)
  })

  test("the text's citations as Claude sent them, each block with its own, whole or streamed", async () => {
    rig.up.script({ json: cited })
    const m = (await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 500, tools, messages: ask, pause_on_call_tools_start: true } as never)) as Anthropic.Message
    expect(m.content as unknown[]).toEqual(cited.content)
    rig.up.script({ sse: citedStream })
    const s = await rig.anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 500, tools, messages: ask, pause_on_call_tools_start: true } as never).finalMessage()
    expect(s.content.slice(0, 2) as unknown[]).toEqual([USE, RESULT])
    // the same blocks as the whole reply's
    expect(s.content.slice(2).map((b) => (b.type === 'text' ? { text: b.text, citations: b.citations ?? null } : b.type))).toEqual([
      { text: 'Paris is ', citations: null },
      { text: 'sunny', citations: [CITE] },
      { text: ' today.', citations: null },
    ])
  })

  test('sent back, they reach Claude as they came; a search without its result stays behind', async () => {
    rig.up.script({ json: fixtureJson('anthropic/messages/nonstream-text.json') })
    const history = [...ask, { role: 'assistant', content: [...searchedJson.content, { type: 'server_tool_use', id: 'srvtoolu_paused', name: 'web_search', input: { query: 'more' } }] }, { role: 'user', content: 'And the second source?' }]
    const r = await rig.postMessages({ model: 'claude-sonnet-4-5', max_tokens: 500, tools, messages: history, pause_on_call_tools_start: true })
    expect(r.status).toBe(200)
    expect(sent().messages[1].content).toEqual([USE, RESULT, { type: 'text', text: 'It is sunny in Paris today.' }])
  })

  test('a GPT model continues from the text around them', async () => {
    rig.up.script((req: RecordedRequest) => (req.path.includes('/chat/completions') ? { json: fixture('openai/chat/nonstream-text.json') } : { status: 500, json: { error: 'unexpected' } }))
    const history = [...ask, { role: 'assistant', content: searchedJson.content }, { role: 'user', content: 'And the second source?' }]
    const r = await rig.postMessages({ model: 'gpt-4.1', max_tokens: 500, messages: history })
    expect(r.status).toBe(200)
    const body = sent()
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(body.messages[1].content).toBe('It is sunny in Paris today.')
    expect(JSON.stringify(body)).not.toContain('EqgfCioIARgBIiQ3YTAw')
  })
})
