// A Claude model's web search through the OpenAI surfaces: a Responses client asks for it with
// OpenAI's web_search tool; the search runs at Anthropic (its server_tool_use and result blocks
// are nothing for the client to run, and show on Responses as OpenAI's web_search_call item, its
// query and, when asked for, its sources), and the text it cited
// carries its sources as OpenAI shows a web search's: `url_citation` annotations on the output
// text (Responses) or on the message (chat), indexed into the text, streamed or not. Upstream
// traffic hand-written from Anthropic's documented shapes (web_search_result_location).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

const FIXTURES = new URL('../fixtures/', import.meta.url)
const fixture = (path: string) => Bun.file(new URL(path, FIXTURES)).text()

/** A web_search_call's events in a stream, each as its type and its fields' names (the item's, its action's, a source's too). */
function searchShape(events: any[], id: string) {
  const keys = (o: object | undefined) => (o ? Object.keys(o).sort() : [])
  return events
    .filter((e) => e.item_id === id || e.item?.id === id)
    .map((e) => ({ type: e.type, fields: keys(e), item: keys(e.item), action: keys(e.item?.action), source: keys(e.item?.action?.sources?.[0]) }))
}

let rig: ResponsesRig
beforeAll(async () => {
  // the refusals' cases go out back to back, more than the default burst of a key a second
  rig = await startResponsesRig({ SWITCHYARD_KEY_BURST_RPS: '10000', SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000' })
})
afterAll(async () => {
  await rig.stop()
})

const URL_A = 'https://weather.example/paris'
const URL_B = 'https://forecast.example/fr'
const citeB = { type: 'web_search_result_location', url: URL_B, title: 'France forecast', encrypted_index: 'Eo9BCioIAhgC', cited_text: 'Clear all day' }
const cite = { type: 'web_search_result_location', url: URL_A, title: 'Paris weather', encrypted_index: 'Eo8BCioIAhgB', cited_text: 'Sunny, 21 °C' }
const searched = [
  { type: 'server_tool_use', id: 'srvtoolu_01Cite', name: 'web_search', input: { query: 'paris weather' } },
  { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01Cite', content: [{ type: 'web_search_result', title: 'Paris weather', url: URL_A, encrypted_content: 'EqgfCioI', page_age: null }] },
]
const usage = { input_tokens: 2107, output_tokens: 41, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, server_tool_use: { web_search_requests: 1 } }
const reply = {
  id: 'msg_01CiteJson', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', stop_reason: 'end_turn', stop_sequence: null, usage,
  content: [...searched, { type: 'text', text: 'Paris is ' }, { type: 'text', text: 'sunny', citations: [cite] }, { type: 'text', text: ' today', citations: [citeB] }, { type: 'text', text: '.' }],
}
const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const streamStart = ev('message_start', { message: { ...reply, id: 'msg_01CiteStream', content: [], stop_reason: null, usage: { ...usage, output_tokens: 3 } } })
const streamEnd = ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }) + ev('message_stop', {})
/** The search's server_tool_use block at `i`, its result's at `i`; both, at `i` and the next index. */
const searchUse = (i: number) =>
  ev('content_block_start', { index: i, content_block: { ...searched[0], input: {} } }) +
  ev('content_block_delta', { index: i, delta: { type: 'input_json_delta', partial_json: '{"query": "paris weather"}' } }) +
  ev('content_block_stop', { index: i })
const searchResult = (i: number) => ev('content_block_start', { index: i, content_block: searched[1] }) + ev('content_block_stop', { index: i })
const searchBlocks = (i: number) => searchUse(i) + searchResult(i + 1)
const stream =
  streamStart +
  searchBlocks(0) +
  ev('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }) +
  ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Paris is ' } }) +
  ev('content_block_stop', { index: 2 }) +
  ev('content_block_start', { index: 3, content_block: { type: 'text', text: '', citations: [] } }) +
  ev('content_block_delta', { index: 3, delta: { type: 'citations_delta', citation: cite } }) +
  ev('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'sun' } }) +
  ev('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'ny' } }) +
  ev('content_block_stop', { index: 3 }) +
  ev('content_block_start', { index: 4, content_block: { type: 'text', text: '', citations: [] } }) +
  ev('content_block_delta', { index: 4, delta: { type: 'citations_delta', citation: citeB } }) +
  ev('content_block_delta', { index: 4, delta: { type: 'text_delta', text: ' today' } }) +
  ev('content_block_stop', { index: 4 }) +
  ev('content_block_start', { index: 5, content_block: { type: 'text', text: '' } }) +
  ev('content_block_delta', { index: 5, delta: { type: 'text_delta', text: '.' } }) +
  ev('content_block_stop', { index: 5 }) +
  streamEnd

const TEXT = 'Paris is sunny today.'
// "sunny" is characters 9 to 14 of the text, " today" 14 to 20
const RESPONSES_ANNOTATIONS = [
  { type: 'url_citation', start_index: 9, end_index: 14, url: URL_A, title: 'Paris weather' },
  { type: 'url_citation', start_index: 14, end_index: 20, url: URL_B, title: 'France forecast' },
]
const CHAT_ANNOTATIONS = RESPONSES_ANNOTATIONS.map(({ type, ...at }) => ({ type, url_citation: at }))

describe('Claude web search citations', () => {
  test('responses, not streamed: url_citation annotations on the output text', async () => {
    rig.up.script({ json: reply })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    expect(r.output_text).toBe(TEXT)
    const part = (r.output[1] as any).content[0]
    expect(part.text.slice(9, 14)).toBe('sunny')
    expect(part.annotations).toEqual(RESPONSES_ANNOTATIONS)
  })

  test('responses, streamed: an annotation.added event, and the same annotations in the final response', async () => {
    rig.up.script({ sse: stream })
    const s = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', stream: true })
    const events: any[] = []
    for await (const e of s) events.push(e)
    const added = events.filter((e) => e.type === 'response.output_text.annotation.added')
    expect(added.map((e) => [e.annotation_index, e.annotation])).toEqual(RESPONSES_ANNOTATIONS.map((a, i) => [i, a]))
    const final = events.at(-1).response
    expect(final.output[1].content[0].text).toBe(TEXT)
    expect(final.output[1].content[0].annotations).toEqual(RESPONSES_ANNOTATIONS)
    const doneItem = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'message')
    expect(doneItem.item.content[0].annotations).toEqual(RESPONSES_ANNOTATIONS)
  })

  test("responses: OpenAI's web_search tool is Claude's web search (its domains, location and the max_tool_calls bound), and the search is recorded", async () => {
    rig.up.script({ json: reply })
    const res = await rig.postResponses({
      model: 'claude-sonnet-4-5',
      input: 'weather in Paris?',
      max_tool_calls: 3,
      tools: [{ type: 'web_search', filters: { allowed_domains: ['weather.example'] }, user_location: { type: 'approximate', city: 'Paris', country: 'FR' } }],
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat') ?? '').not.toContain('web_search')
    const body = (await res.json()) as any
    expect(body.output[1].content[0].annotations).toEqual(RESPONSES_ANNOTATIONS)
    expect(rig.up.requests.at(-1)!.json().tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['weather.example'], user_location: { type: 'approximate', city: 'Paris', country: 'FR' } },
    ])
    expect((await rig.generation(body.id)).usage.web_searches).toBe(1)
  })

  test("responses, not streamed: the search is a web_search_call item before the message, as OpenAI's", async () => {
    rig.up.script({ json: reply })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    expect(r.output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
    expect(r.output[0]).toEqual({ id: expect.stringMatching(/^ws_/), type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'paris weather' } })
  })

  test('responses: the sources of the search on its item when the request includes them', async () => {
    rig.up.script({ json: reply })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', include: ['web_search_call.action.sources'] })
    expect((r.output[0] as any).action).toEqual({ type: 'search', query: 'paris weather', sources: [{ type: 'url', url: URL_A }] })
  })

  test('responses: a search Claude answered with an error is a failed web_search_call', async () => {
    const failed = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01Cite', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } }
    rig.up.script({ json: { ...reply, content: [searched[0], failed, { type: 'text', text: 'No luck.' }] } })
    const r = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    expect(r.output[0]).toMatchObject({ type: 'web_search_call', status: 'failed', action: { type: 'search', query: 'paris weather' } })
    expect(r.output_text).toBe('No luck.')
  })

  test("responses, streamed: the web_search_call's events as OpenAI sends them, and the SDK's stream helper's final response holds the item", async () => {
    rig.up.script({ sse: stream })
    const s = rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', include: ['web_search_call.action.sources'] })
    const events: any[] = []
    for await (const e of s) events.push(e)
    const final = await s.finalResponse()
    const item: any = { id: expect.stringMatching(/^ws_/), type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'paris weather', sources: [{ type: 'url', url: URL_A }] } }
    expect(final.output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
    expect(final.output[0]).toEqual(item)
    expect(final.output_text).toBe(TEXT)
    const search = events.filter((e) => e.output_index === 0).map((e) => e.type)
    expect(search).toEqual([
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
    ])
    const added = events.find((e) => e.type === 'response.output_item.added')
    expect(added.item).toEqual({ id: final.output[0]!.id, type: 'web_search_call', status: 'in_progress' })
    expect(events.find((e) => e.type === 'response.web_search_call.searching').item_id).toBe(final.output[0]!.id)
    expect(events.find((e) => e.type === 'response.output_item.done').item).toEqual(item)
  })

  test('responses: a turn after one that searched continues it; the search, which ran at Anthropic, is not sent back', async () => {
    rig.up.script({ json: reply })
    const first = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', store: true })
    rig.up.script({ json: { ...reply, content: [{ type: 'text', text: 'You are welcome.' }] } })
    const next = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'thanks', previous_response_id: first.id })
    expect(next.output_text).toBe('You are welcome.')
    const sent = rig.up.requests.at(-1)!.json().messages
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(JSON.stringify(sent[1])).toContain('Paris is sunny today.')
    expect(JSON.stringify(sent)).not.toContain('server_tool_use')
  })

  test("responses, streamed: the web_search_call's events and fields are those of OpenAI's recorded web search stream", async () => {
    // OpenAI's (recorded): the first search of a gpt-5-mini reply
    const recorded = (await fixture('openai/responses/stream-web-search-vercel.chunks.jsonl')).split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const theirs = recorded.find((e) => e.type === 'response.output_item.added' && e.item.type === 'web_search_call').item.id
    // Claude's (hand-written from Anthropic's documented stream)
    rig.up.script({ sse: await fixture('anthropic/messages/stream-web-search.handwritten.sse') })
    const s = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', include: ['web_search_call.action.sources'], stream: true })
    const events: any[] = []
    for await (const e of s) events.push(e)
    const ours = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'web_search_call').item.id
    expect(searchShape(events, ours)).toEqual(searchShape(recorded, theirs))
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.id === ours).item
    expect(done.action).toEqual({ type: 'search', query: 'weather in Paris today', sources: [{ type: 'url', url: 'https://weather.example/paris' }] })
  })

  test("a search between two texts: on Responses a message, the search, a message (as OpenAI's output runs), streamed and not; chat's one message holds both texts", async () => {
    const text = (t: string, i: number) => ev('content_block_start', { index: i, content_block: { type: 'text', text: '' } }) + ev('content_block_delta', { index: i, delta: { type: 'text_delta', text: t } }) + ev('content_block_stop', { index: i })
    const sse = streamStart + text('Let me look. ', 0) + searchBlocks(1) + text('Sunny.', 3) + streamEnd
    const json = { ...reply, content: [{ type: 'text', text: 'Let me look. ' }, ...searched, { type: 'text', text: 'Sunny.' }] }
    rig.up.script({ sse })
    const streamed = await rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' }).finalResponse()
    rig.up.script({ json })
    const whole = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    for (const r of [streamed, whole]) {
      expect(r.output.map((it) => it.type)).toEqual(['message', 'web_search_call', 'message'])
      expect(r.output_text).toBe('Let me look. Sunny.')
    }
    rig.up.script({ json })
    const c = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'weather in Paris?' }] })
    expect(c.choices[0]!.message.content).toBe('Let me look. Sunny.')
  })

  test('responses: a search whose result the reply paused before (pause_turn) is an incomplete web_search_call with its query, streamed and not', async () => {
    const paused = { ...reply, stop_reason: 'pause_turn', content: [searched[0]] }
    rig.up.script({ sse: streamStart + searchUse(0) + ev('message_delta', { delta: { stop_reason: 'pause_turn', stop_sequence: null }, usage }) + ev('message_stop', {}) })
    const s = rig.client.responses.stream({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    const events: any[] = []
    for await (const e of s) events.push(e)
    const streamed = await s.finalResponse()
    rig.up.script({ json: paused })
    const whole = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'weather in Paris?' })
    for (const r of [streamed, whole]) {
      expect(r.status).toBe('incomplete')
      expect(r.output).toEqual([{ id: expect.stringMatching(/^ws_/), type: 'web_search_call', status: 'incomplete', action: { type: 'search', query: 'paris weather' } } as any])
    }
    expect(events.filter((e) => e.output_index === 0).map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.output_item.done',
    ])
  })

  test('chat, not streamed: url_citation annotations on the message', async () => {
    rig.up.script({ json: reply })
    const c = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'weather in Paris?' }] })
    expect(c.choices[0]!.message.content).toBe(TEXT)
    expect(c.choices[0]!.message.annotations).toEqual(CHAT_ANNOTATIONS as any)
  })

  test("chat: web_search_options is Claude's web search (its approximate location; search_context_size, which has no counterpart, named), and the search is recorded", async () => {
    rig.up.script({ json: reply })
    const res = await rig.post({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      web_search_options: { search_context_size: 'low', user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR' } } },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')).toBe('web_search_options.search_context_size')
    const c = (await res.json()) as any
    expect(c.choices[0].message.annotations).toEqual(CHAT_ANNOTATIONS)
    expect(rig.up.requests.at(-1)!.json().tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', user_location: { type: 'approximate', city: 'Paris', country: 'FR' } }])
    expect((await rig.generation(c.id)).usage.web_searches).toBe(1)
  })

  // left out, a domain filter or a location of the wrong type would let the search run unfiltered, or from nowhere
  test('a web search filter or location of the wrong type is a 400 naming it, on either surface and family, before any upstream call', async () => {
    const before = rig.up.requests.length
    const responses: [Record<string, unknown>, string][] = [
      [{ filters: { allowed_domains: 'weather.example' } }, 'tools[0].filters.allowed_domains: expected an array of domains or null, got a string'],
      [{ filters: { allowed_domains: ['weather.example', 7] } }, 'tools[0].filters.allowed_domains[1]: expected a domain name, got 7'],
      [{ filters: ['weather.example'] }, 'tools[0].filters: expected an object or null, got an array'],
      [{ user_location: 'Paris' }, 'tools[0].user_location: expected an object or null, got a string'],
      [{ user_location: { type: 'approximate', city: 75 } }, 'tools[0].user_location.city: expected a string or null, got a number'],
      [{ user_location: { type: 'exact', city: 'Paris' } }, 'tools[0].user_location.type: expected "approximate", got "exact"'],
      [{ search_context_size: 3 }, 'tools[0].search_context_size: expected "low", "medium" or "high", got a number'],
    ]
    for (const model of ['claude-sonnet-4-5', 'gpt-4.1']) {
      for (const [fields, error] of responses) {
        const res = await rig.postResponses({ model, input: 'weather in Paris?', tools: [{ type: 'web_search', ...fields }] })
        expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: { error } })
      }
    }
    const chat: [Record<string, unknown>, string][] = [
      [{ user_location: { type: 'approximate', approximate: { city: 75 } } }, 'web_search_options.user_location.approximate.city: expected a string or null, got a number'],
      [{ user_location: { type: 'approximate', approximate: 'Paris' } }, 'web_search_options.user_location.approximate: expected an object, got a string'],
      [{ user_location: 'Paris' }, 'web_search_options.user_location: expected an object or null, got a string'],
      [{ search_context_size: true }, 'web_search_options.search_context_size: expected "low", "medium" or "high", got a boolean'],
    ]
    for (const [options, error] of chat) {
      const res = await rig.post({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'weather in Paris?' }], web_search_options: options })
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: { error } })
    }
    // null is OpenAI's "none": accepted
    rig.up.script({ json: reply })
    const ok = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'weather in Paris?', tools: [{ type: 'web_search', filters: { allowed_domains: null }, user_location: null }] })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.length).toBe(before + 1)
  })

  // the SDK's stream helper keeps a delta field's last value, not their sum: all of them in one delta
  test("chat, streamed: the SDK's stream helper's final message holds every annotation", async () => {
    rig.up.script({ sse: stream })
    const s = rig.client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'weather in Paris?' }] })
    const final = await s.finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe(TEXT)
    expect(final.choices[0]!.message.annotations).toEqual(CHAT_ANNOTATIONS as any)
  })

  test('chat, streamed: the annotations in a delta once the cited text was sent', async () => {
    rig.up.script({ sse: stream })
    const s = await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'weather in Paris?' }], stream: true })
    let text = ''
    const annotations: unknown[] = []
    for await (const ch of s) {
      const d = ch.choices[0]?.delta as any
      if (d?.content) text += d.content
      if (d?.annotations) {
        // sent after the text it points into
        expect(text.length).toBeGreaterThanOrEqual(20)
        annotations.push(...d.annotations)
      }
    }
    expect(text).toBe(TEXT)
    expect(annotations).toEqual(CHAT_ANNOTATIONS)
  })
})
