// A Claude model's web search on the Responses surface, continued from the gateway's stored
// thread: Claude is sent its search back (the server_tool_use and its result, the pages
// encrypted) as Anthropic's own clients send it, so it still has what it found; the client, and
// an OpenAI model the thread goes on with, only ever see OpenAI's web_search_call item. A client
// that keeps the conversation itself and carries sealed reasoning back (Codex) gets the blocks
// sealed in a reasoning item of the gateway's, and its next turn brings them back to Claude.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { NO_LIMITS } from '../batches/helpers.ts'
import { chatWireModel, fixture, fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const SEARCH_ID = 'srvtoolu_01HandwrittenA'
const PAGES = 'EqgfCioIARgBIiQ3YTAw'
const FIELD = 'switchyard_search'

/** The reply the recorded search stream tells, whole (as a non-streamed request gets it). */
const searchedJson = {
  id: 'msg_01WebSearchJson',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'server_tool_use', id: SEARCH_ID, name: 'web_search', input: { query: 'weather in Paris today' } },
    { type: 'web_search_tool_result', tool_use_id: SEARCH_ID, content: [{ type: 'web_search_result', title: 'Paris weather', url: 'https://weather.example/paris', encrypted_content: PAGES, page_age: 'November 23, 2026' }] },
    { type: 'text', text: 'It is sunny in Paris today.' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 2107, output_tokens: 20, server_tool_use: { web_search_requests: 1 } },
}

let up: FakeUpstream
let g: Gateway
/** The first request a test makes to a Claude model searches; every later one is answered with text. */
let searched = false
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => {
    if (req.path.includes('/chat/completions')) return { json: fixture('openai/chat/nonstream-text.json') }
    if (!req.path.includes('/messages')) return { json: fixture('openai/responses/nonstream-text.json') }
    const stream = req.json().stream === true
    if (!searched) {
      searched = true
      return stream ? { sse: fixture('anthropic/messages/stream-web-search.handwritten.sse') } : { json: searchedJson }
    }
    return stream ? { sse: fixture('anthropic/messages/stream-text.sse') } : { json: fixtureJson('anthropic/messages/nonstream-text.json') }
  })
  g = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up) }, yaml: chatWireModel(up) })
})
afterAll(async () => {
  await g.stop()
  await up.stop()
})

const client = () => new OpenAI({ apiKey: g.key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
const search = [{ type: 'web_search' as const }]

/** The upstream bodies of the requests made since `from`. */
const sentSince = (from: number) => up.requests.slice(from).map((r) => r.json())

/** The assistant message of Claude's earlier turn, as the gateway sent it. */
const assistantOf = (body: any) => body.messages.find((m: any) => m.role === 'assistant')

async function firstTurn(stream: boolean, extra: Record<string, unknown> = {}): Promise<OpenAI.Responses.Response> {
  searched = false
  const openai = client()
  if (!stream) return openai.responses.create({ model: 'claude-sonnet-4-5', input: 'Weather in Paris?', tools: search, ...extra } as never) as Promise<OpenAI.Responses.Response>
  const s = openai.responses.stream({ model: 'claude-sonnet-4-5', input: 'Weather in Paris?', tools: search, ...extra } as never)
  return s.finalResponse()
}

/** A whole first turn that searched, continued by `model` through previous_response_id: the reply, and the upstream body the continuation made. */
async function continued(model: string, input: string, tools?: typeof search) {
  const first = await firstTurn(false)
  const from = up.requests.length
  const next = await client().responses.create({ model, previous_response_id: first.id, input, ...(tools ? { tools } : {}) })
  return { first, next, body: sentSince(from)[0] }
}

describe("a Claude model's web search goes back to it in the next turn", () => {
  for (const stream of [true, false]) {
    test(`continued by previous_response_id (first turn ${stream ? 'streamed' : 'whole'}); the client never sees the kept blocks`, async () => {
      const first = await firstTurn(stream)
      const item = first.output.find((it) => it.type === 'web_search_call')!
      expect(item).toBeDefined()
      expect(JSON.stringify(first)).not.toContain(PAGES)
      expect(JSON.stringify(first)).not.toContain(FIELD)

      const from = up.requests.length
      const next = await client().responses.create({ model: 'claude-sonnet-4-5', previous_response_id: first.id, input: 'And the second source?', tools: search })
      expect(next.status).toBe('completed')
      const [sent] = sentSince(from)
      const blocks = assistantOf(sent).content
      expect(blocks.slice(0, 2)).toEqual([
        { type: 'server_tool_use', id: SEARCH_ID, name: 'web_search', input: { query: 'weather in Paris today' } },
        { type: 'web_search_tool_result', tool_use_id: SEARCH_ID, content: searchedJson.content[1]!.content },
      ])
      expect(blocks[2]).toMatchObject({ type: 'text', text: 'It is sunny in Paris today.' })

      // what the client reads back of the thread is OpenAI's item, as it was given
      const got = await client().responses.retrieve(first.id)
      expect(got.output.find((it) => it.type === 'web_search_call')).toEqual(item)
      expect(JSON.stringify(got)).not.toContain(PAGES)
    })
  }

  test('in a conversation; its items as listed hold no kept blocks', async () => {
    const openai = client()
    const conv = await openai.conversations.create({})
    await firstTurn(true, { conversation: conv.id })
    const from = up.requests.length
    await openai.responses.create({ model: 'claude-sonnet-4-5', conversation: conv.id, input: 'And tomorrow?', tools: search })
    expect(assistantOf(sentSince(from)[0]).content[1]).toMatchObject({ type: 'web_search_tool_result', tool_use_id: SEARCH_ID })
    const items = []
    for await (const it of openai.conversations.items.list(conv.id)) items.push(it)
    const ws = items.find((it) => it.type === 'web_search_call')!
    expect(ws).toBeDefined()
    expect(JSON.stringify(items)).not.toContain(PAGES)
    expect(JSON.stringify(await openai.conversations.items.retrieve(ws.id!, { conversation_id: conv.id }))).not.toContain(PAGES)
  })

  test('by item_reference to its items (a client that keeps its own history of ids)', async () => {
    const first = await firstTurn(false)
    const from = up.requests.length
    const refs = first.output.map((it) => ({ type: 'item_reference' as const, id: it.id! }))
    const next = await client().responses.create({ model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'Weather in Paris?' }, ...refs, { role: 'user', content: 'And the second source?' }], tools: search })
    expect(assistantOf(sentSince(from)[0]).content[0]).toMatchObject({ type: 'server_tool_use', id: SEARCH_ID })
    const listed = await client().responses.inputItems.list(next.id)
    expect(listed.data.some((it) => it.type === 'web_search_call')).toBe(true)
    expect(JSON.stringify(listed)).not.toContain(PAGES)
  })

  test('not while the request offers no web search (the blocks are the tool\'s): the search is left out as before', async () => {
    const body = JSON.stringify((await continued('claude-sonnet-4-5', 'Thanks')).body)
    expect(body).not.toContain('server_tool_use')
    expect(body).not.toContain(PAGES)
    expect(body).toContain('It is sunny in Paris today.')
  })

  test('a model on the chat wire goes on with the thread without the search, its text as before', async () => {
    const { first, next, body } = await continued('llama-3.1-8b', 'And tomorrow?')
    expect(next.status).toBe('completed')
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(body.messages[1].content).toBe('It is sunny in Paris today.')
    expect(JSON.stringify(body)).not.toContain(PAGES)
    // the mock too
    expect((await client().responses.create({ model: 'mock-gpt', previous_response_id: first.id, input: 'mock: text And tomorrow?' })).status).toBe('completed')
  })

  test('an OpenAI model that goes on with the thread gets OpenAI\'s item only', async () => {
    const { next, body } = await continued('gpt-4.1', 'And tomorrow?')
    expect(next.status).toBe('completed')
    const ws = body.input.find((it: any) => it.type === 'web_search_call')
    expect(ws).toMatchObject({ type: 'web_search_call', action: { type: 'search', query: 'weather in Paris today' } })
    expect(JSON.stringify(body)).not.toContain(FIELD)
    expect(JSON.stringify(body)).not.toContain(PAGES)
  })
})

describe("the built-in mock's searches stay with the mock", () => {
  // its pages are its own, which a real Claude would refuse: a thread it began that goes on with
  // Claude (an Anthropic key configured since) leaves them behind, its text going on as ever
  const mockSearched = (extra: Record<string, unknown> = {}) =>
    client().responses.create({ model: 'mock-claude', input: 'mock: search cats', tools: search, ...extra } as never) as Promise<OpenAI.Responses.Response>

  test('continued by previous_response_id', async () => {
    const first = await mockSearched()
    expect(first.output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
    searched = true
    const from = up.requests.length
    const next = await client().responses.create({ model: 'claude-sonnet-4-5', previous_response_id: first.id, input: 'More?', tools: search })
    expect(next.status).toBe('completed')
    const body = sentSince(from)[0]
    expect(assistantOf(body).content).toEqual([expect.objectContaining({ type: 'text', text: 'Results for cats.' })])
    expect(JSON.stringify(body)).not.toContain('srvtoolu_mock_')
    // the mock itself still has its search back
    expect((await client().responses.create({ model: 'mock-claude', previous_response_id: first.id, input: 'mock: text more', tools: search })).status).toBe('completed')
  })

  test('carried back sealed by a client that keeps the conversation itself', async () => {
    const own = { store: false, include: ['reasoning.encrypted_content'] }
    const first = await mockSearched(own)
    expect(first.output.map((it) => it.type)).toEqual(['web_search_call', 'reasoning', 'message'])
    searched = true
    const from = up.requests.length
    const input = [{ role: 'user', content: 'mock: search cats' }, ...first.output, { role: 'user', content: 'More?' }]
    const next = await client().responses.create({ model: 'claude-sonnet-4-5', input, tools: search, ...own } as never)
    expect((next as OpenAI.Responses.Response).status).toBe('completed')
    const body = sentSince(from)[0]
    expect(assistantOf(body).content).toEqual([expect.objectContaining({ type: 'text', text: 'Results for cats.' })])
    expect(JSON.stringify(body)).not.toContain('srvtoolu_mock_')
  })
})

describe('a client that keeps the conversation itself (store: false) carries the search back sealed', () => {
  const own = { store: false, include: ['reasoning.encrypted_content'] }

  /** A first turn that searched, kept by the client, and the next request made of its output: the next reply and the upstream body it made. */
  async function carried(stream: boolean, model: string, tools: typeof search | null = search) {
    const first = await firstTurn(stream, own)
    const from = up.requests.length
    const input = [{ role: 'user', content: 'Weather in Paris?' }, ...first.output, { role: 'user', content: 'And the second source?' }]
    const next = await client().responses.create({ model, input, ...own, ...(tools ? { tools } : {}) } as never)
    return { first, next: next as OpenAI.Responses.Response, body: sentSince(from)[0] }
  }

  for (const stream of [true, false]) {
    test(`its output holds the blocks sealed after the search's item, and they go back to Claude as it sent them (first turn ${stream ? 'streamed' : 'whole'})`, async () => {
      const { first, next, body } = await carried(stream, 'claude-sonnet-4-5')
      expect(first.output.map((it) => it.type)).toEqual(['web_search_call', 'reasoning', 'message'])
      const sealed = first.output[1] as OpenAI.Responses.ResponseReasoningItem
      expect(sealed.summary).toEqual([])
      expect(sealed.encrypted_content).toStartWith('sy1.')
      expect(new Set(first.output.map((it) => it.id)).size).toBe(3)
      // `include` as one name alone, as the surface takes it, asks the same
      expect((await firstTurn(stream, { store: false, include: 'reasoning.encrypted_content' })).output.map((it) => it.type)).toEqual(['web_search_call', 'reasoning', 'message'])
      expect(JSON.stringify(first)).not.toContain(PAGES)
      expect(JSON.stringify(first)).not.toContain(FIELD)

      expect(next.status).toBe('completed')
      expect(assistantOf(body).content).toEqual([
        { type: 'server_tool_use', id: SEARCH_ID, name: 'web_search', input: { query: 'weather in Paris today' } },
        { type: 'web_search_tool_result', tool_use_id: SEARCH_ID, content: searchedJson.content[1]!.content },
        expect.objectContaining({ type: 'text', text: 'It is sunny in Paris today.' }),
      ])
    })
  }

  test('a client that did not ask for sealed reasoning, or a stored turn, gets the output as before', async () => {
    for (const extra of [{ store: false }, { include: ['reasoning.encrypted_content'] }]) {
      expect((await firstTurn(true, extra)).output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
      expect((await firstTurn(false, extra)).output.map((it) => it.type)).toEqual(['web_search_call', 'message'])
    }
  })

  test('without the web search tool offered, and for another model, the sealed search stays behind', async () => {
    expect(JSON.stringify((await carried(false, 'claude-sonnet-4-5', null)).body)).not.toContain('server_tool_use')
    const toOpenAI = await carried(false, 'gpt-4.1')
    expect(toOpenAI.next.status).toBe('completed')
    expect(toOpenAI.body.input.map((it: any) => it.type ?? it.role)).not.toContain('reasoning')
    expect(JSON.stringify(toOpenAI.body)).not.toContain('sy1.')
    const chatWire = await carried(false, 'llama-3.1-8b')
    expect(chatWire.next.status).toBe('completed')
    expect(chatWire.body.messages[1].content).toBe('It is sunny in Paris today.')
  })
})
