// One scenario list through every surface × model family × upstream (the built-in mock, and a
// real provider's recorded replies played by the fake upstream), streamed and not. Each cell
// reads the reply in its surface's own wire (text, tool calls, reasoning, the end of the
// stream) and the generation record it left. Where the cells of a row got the same upstream
// reply, they must bill it the same: a surface changes the spelling, never the usage.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, type RecordedRequest, type Reply, upstreamEnv } from '../helpers/fake-upstream.ts'
import { responsesFailureAfterItem } from '../helpers/responses-failure.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { PDF } from '../media/helpers.ts'

type Surface = 'chat' | 'messages' | 'responses'
type Scenario = 'text' | 'tool call' | 'tool round trip' | 'reasoning' | 'document' | 'mid-stream failure'

const PATHS: Record<Surface, string> = { chat: '/api/alpha/v1/chat/completions', messages: '/api/beta/v1/messages', responses: '/api/alpha/v1/responses' }
const ENDPOINTS: Record<Surface, string> = { chat: 'openai.chat.completions', messages: 'anthropic.messages', responses: 'openai.responses' }

let gw: Gateway
let up: FakeUpstream
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(replay)
  gw = await startGateway({ env: { ...upstreamEnv(up), SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

// ---- the recorded upstream: which recording answers which call --------------------------

/** The scenario each upstream call is for, named in the prompt the gateway forwards. */
const scenarioOf = (req: RecordedRequest): Scenario => (/scenario: ([a-z -]+)/.exec(req.body)?.[1] as Scenario) ?? 'text'

const RECORDED: Record<Wire, Partial<Record<Scenario, { json?: string; sse?: string | (() => string); drop?: number }>>> = {
  chat: {
    text: { json: 'openai/chat/nonstream-text.json', sse: 'openai/chat/stream-text-include-usage.sse' },
    'tool call': { json: 'openai/chat/nonstream-tool-calls.json', sse: 'openai/chat/stream-tool-call-single.sse' },
    'tool round trip': { json: 'openai/chat/nonstream-text.json', sse: 'openai/chat/stream-tool-call-after-tool-results.sse' },
    reasoning: { json: 'openai/chat/nonstream-reasoning-tokens.json', sse: 'openai/chat/stream-text-include-usage.sse' },
    document: { json: 'openai/chat/nonstream-text.json', sse: 'openai/chat/stream-text-include-usage.sse' },
    'mid-stream failure': { sse: 'openai/chat/stream-text-include-usage.sse', drop: 2 },
  },
  responses: {
    text: { json: 'openai/responses/nonstream-text.json', sse: 'openai/responses/stream-text.sse' },
    'tool call': { json: 'openai/responses/nonstream-function-call.json', sse: 'openai/responses/stream-function-call.sse' },
    'tool round trip': { json: 'openai/responses/nonstream-text.json', sse: 'openai/responses/stream-text.sse' },
    reasoning: { json: 'openai/responses/nonstream-reasoning-summary.json', sse: 'openai/responses/stream-reasoning-summary.sse' },
    document: { json: 'openai/responses/nonstream-text.json', sse: 'openai/responses/stream-text.sse' },
    'mid-stream failure': { sse: responsesFailureAfterItem },
  },
  messages: {
    text: { json: 'anthropic/messages/nonstream-text.json', sse: 'anthropic/messages/stream-text.sse' },
    'tool call': { json: 'anthropic/messages/nonstream-tool-use-sdk.json', sse: 'anthropic/messages/stream-tool-use.sse' },
    'tool round trip': { json: 'anthropic/messages/nonstream-text.json', sse: 'anthropic/messages/stream-text.sse' },
    reasoning: { json: 'anthropic/messages/nonstream-thinking.json', sse: 'anthropic/messages/stream-thinking.sse' },
    document: { json: 'anthropic/messages/nonstream-text.json', sse: 'anthropic/messages/stream-text.sse' },
    'mid-stream failure': { sse: anthropicMidstream },
  },
}

type Wire = 'chat' | 'responses' | 'messages'

/**
 * A recorded Anthropic failure after the first text (the recording is the stream's tail: an
 * in-band error after two deltas), behind the opening events of a recorded stream.
 */
function anthropicMidstream(): string {
  const head = fixture('anthropic/messages/stream-text.sse').split('\n\n')
  const firstDelta = head.findIndex((e) => e.includes('content_block_delta'))
  return head.slice(0, firstDelta).join('\n\n') + '\n\n' + fixture('anthropic/messages/stream-error-midstream-fragment.sse')
}

/** The upstream API a call went to, by its path (the base URL may or may not end in /v1). */
function wireOf(path: string): Wire | undefined {
  const p = path.split('?')[0]!
  return p.endsWith('/chat/completions') ? 'chat' : p.endsWith('/responses') ? 'responses' : p.endsWith('/messages') ? 'messages' : undefined
}

function replay(req: RecordedRequest): Reply {
  const wire = wireOf(req.path)
  const rec = wire && RECORDED[wire][scenarioOf(req)]
  if (!rec) return { status: 500, json: { error: { message: `no recording for ${req.path}` } } }
  const stream = req.json().stream === true
  if (stream) return { sse: typeof rec.sse === 'function' ? rec.sse() : fixture(rec.sse!), dropAfterEvents: rec.drop }
  return { json: fixtureJson(rec.json!) }
}

// ---- requests, in each surface's wire -----------------------------------------------------

const weather = { name: 'get_weather', description: 'Weather of a city', schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }
const pdf = PDF.toString('base64')

/** The user's turn of a scenario: what the mock is told to do, and the scenario's name for the recorded upstream. */
function prompt(scenario: Scenario): string {
  const say: Record<Scenario, string> = {
    text: 'mock: text The capital of France is Paris.',
    'tool call': 'mock: tool get_weather {"location":"Paris"}',
    'tool round trip': 'Weather in Paris?',
    reasoning: 'mock: text Think first, then answer: 42.',
    document: 'mock: text The document says Thursday.',
    'mid-stream failure': 'mock: text one two three four\nmock: fail-midstream',
  }
  return `${say[scenario]}\nscenario: ${scenario}`
}

function chatBody(model: string, scenario: Scenario, stream: boolean) {
  const user = scenario === 'document' ? { role: 'user', content: [{ type: 'text', text: prompt(scenario) }, { type: 'file', file: { filename: 'notes.pdf', file_data: `data:application/pdf;base64,${pdf}` } }] } : { role: 'user', content: prompt(scenario) }
  const messages: unknown[] = [user]
  if (scenario === 'tool round trip') {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] })
    messages.push({ role: 'tool', tool_call_id: 'call_01', content: 'sunny, 21 C' })
  }
  return {
    model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    ...(scenario === 'reasoning' ? { reasoning_effort: 'low' } : {}),
    tools: [{ type: 'function', function: { name: weather.name, description: weather.description, parameters: weather.schema } }],
    messages,
  }
}

function messagesBody(model: string, scenario: Scenario, stream: boolean) {
  const text = { type: 'text', text: prompt(scenario) }
  const user = scenario === 'document' ? { role: 'user', content: [text, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }] } : { role: 'user', content: [text] }
  const messages: unknown[] = [user]
  if (scenario === 'tool round trip') {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'Paris' } }] })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'sunny, 21 C' }] })
  }
  return {
    model,
    stream,
    max_tokens: 2048,
    ...(scenario === 'reasoning' ? (model.includes('claude') ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : { reasoning_effort: 'low' }) : {}),
    tools: [{ name: weather.name, description: weather.description, input_schema: weather.schema }],
    messages,
  }
}

function responsesBody(model: string, scenario: Scenario, stream: boolean) {
  const content: unknown[] = [{ type: 'input_text', text: prompt(scenario) }]
  if (scenario === 'document') content.push({ type: 'input_file', filename: 'notes.pdf', file_data: `data:application/pdf;base64,${pdf}` })
  const input: unknown[] = [{ role: 'user', content }]
  if (scenario === 'tool round trip') {
    input.push({ type: 'function_call', call_id: 'call_01', name: 'get_weather', arguments: '{"location":"Paris"}' })
    input.push({ type: 'function_call_output', call_id: 'call_01', output: 'sunny, 21 C' })
  }
  return {
    model,
    stream,
    ...(scenario === 'reasoning' ? { reasoning: { effort: 'low' } } : {}),
    tools: [{ type: 'function', name: weather.name, description: weather.description, parameters: weather.schema }],
    input,
  }
}

const BODIES: Record<Surface, (model: string, scenario: Scenario, stream: boolean) => unknown> = { chat: chatBody, messages: messagesBody, responses: responsesBody }

// ---- replies, read in each surface's wire -------------------------------------------------

interface Read {
  id: string | null
  text: string
  tools: string[]
  /** The reply ended as its wire ends a complete one. */
  complete: boolean
  /** The stream ended with the surface's in-band error. */
  failed: boolean
}

function events(text: string): { event: string | null; data: any }[] {
  return text
    .split('\n\n')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? null
      const data = /^data: (.+)$/m.exec(block)?.[1]
      if (data === undefined || data === '[DONE]') return { event, data: data ?? null }
      return { event, data: JSON.parse(data) }
    })
    .filter((e) => e.data !== null || e.event !== null)
}

function readChat(text: string, stream: boolean): Read {
  if (!stream) {
    const j = JSON.parse(text)
    const m = j.choices[0].message
    return { id: j.id, text: m.content ?? '', tools: (m.tool_calls ?? []).map((c: any) => c.function.name), complete: j.choices[0].finish_reason !== null, failed: false }
  }
  const evs = events(text)
  const chunks = evs.map((e) => e.data).filter((d) => d && typeof d === 'object')
  return {
    id: chunks.find((c) => typeof c.id === 'string')?.id ?? null,
    text: chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join(''),
    tools: chunks.flatMap((c) => (c.choices?.[0]?.delta?.tool_calls ?? []).map((t: any) => t.function?.name).filter(Boolean)),
    complete: text.includes('data: [DONE]'),
    failed: chunks.some((c) => c.error !== undefined),
  }
}

function readMessages(text: string, stream: boolean): Read {
  if (!stream) {
    const j = JSON.parse(text)
    return { id: j.id, text: j.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join(''), tools: j.content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.name), complete: j.stop_reason !== null, failed: false }
  }
  const evs = events(text)
  return {
    id: evs.find((e) => e.event === 'message_start')?.data.message.id ?? null,
    text: evs.filter((e) => e.data?.delta?.type === 'text_delta').map((e) => e.data.delta.text).join(''),
    tools: evs.filter((e) => e.event === 'content_block_start' && e.data.content_block.type === 'tool_use').map((e) => e.data.content_block.name),
    complete: evs.some((e) => e.event === 'message_stop'),
    failed: evs.some((e) => e.event === 'error'),
  }
}

function readResponses(text: string, stream: boolean): Read {
  const fromResponse = (r: any, complete: boolean, failed: boolean): Read => ({
    id: r?.id ?? null,
    text: (r?.output ?? []).filter((i: any) => i.type === 'message').flatMap((i: any) => i.content.filter((c: any) => c.type === 'output_text').map((c: any) => c.text)).join(''),
    tools: (r?.output ?? []).filter((i: any) => i.type === 'function_call').map((i: any) => i.name),
    complete,
    failed,
  })
  if (!stream) {
    const j = JSON.parse(text)
    return fromResponse(j, j.status !== 'failed', false)
  }
  const evs = events(text)
  // a complete reply ends with response.completed, or response.incomplete (a length stop)
  const last = evs.filter((e) => e.event === 'response.completed' || e.event === 'response.incomplete').at(-1)?.data.response
  const first = evs.find((e) => e.event === 'response.created')?.data.response
  const failed = evs.some((e) => e.event === 'response.failed')
  return { ...fromResponse(last ?? first, last !== undefined && last.status !== 'failed', failed), id: (last ?? first)?.id ?? null }
}

const READERS: Record<Surface, (text: string, stream: boolean) => Read> = { chat: readChat, messages: readMessages, responses: readResponses }

async function send(surface: Surface, model: string, scenario: Scenario, stream: boolean) {
  const before = up.requests.length
  const res = await fetch(`${gw.url}${PATHS[surface]}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(BODIES[surface](model, scenario, stream)) })
  const text = await res.text()
  expect(res.status, text.slice(0, 300)).toBe(200)
  return { read: READERS[surface](text, stream), upstream: up.requests.slice(before) }
}

async function recordOf(id: string) {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
    if (res.status === 200) return ((await res.json()) as any).generation
    await Bun.sleep(20)
  }
  throw new Error(`no record for ${id}`)
}

// ---- the matrix ---------------------------------------------------------------------------

const SURFACES: Surface[] = ['chat', 'messages', 'responses']
const SCENARIOS: Scenario[] = ['text', 'tool call', 'tool round trip', 'reasoning', 'document', 'mid-stream failure']
const MODELS = [
  { upstream: 'mock', family: 'openai', model: 'mock-gpt' },
  { upstream: 'mock', family: 'anthropic', model: 'mock-claude' },
  // reasoning asks for a reasoning model: the recordings are o3-mini's (chat) and gpt-5-mini's (Responses)
  { upstream: 'recorded', family: 'openai', model: 'gpt-4o-mini', reasoningModel: 'gpt-5-mini' },
  { upstream: 'recorded', family: 'anthropic', model: 'claude-sonnet-4-5' },
] as const

/** The upstream wire a surface's request to a family reaches (the same wire: the same recording, the same bill). */
function upstreamWire(surface: Surface, family: 'openai' | 'anthropic'): Wire {
  if (family === 'anthropic') return 'messages'
  return surface === 'responses' ? 'responses' : 'chat'
}

/** How a document reaches each upstream wire. */
const DOCUMENT_IN: Record<Wire, (body: any) => boolean> = {
  messages: (b) => JSON.stringify(b.messages).includes('"type":"document"'),
  chat: (b) => JSON.stringify(b.messages).includes('"type":"file"'),
  responses: (b) => JSON.stringify(b.input).includes('"type":"input_file"'),
}

for (const row of MODELS) {
  const { upstream, family } = row
  describe(`${row.model} (${upstream})`, () => {
    for (const scenario of SCENARIOS) {
      for (const stream of scenario === 'mid-stream failure' ? [true] : [false, true]) {
        test(`${scenario}, ${stream ? 'streamed' : 'plain'}: every surface answers in its own wire, and one upstream reply is billed alike`, async () => {
          const usageByWire = new Map<string, unknown>()
          for (const surface of SURFACES) {
            const model = scenario === 'reasoning' && 'reasoningModel' in row ? row.reasoningModel : row.model
            const { read, upstream: calls } = await send(surface, model, scenario, stream)
            const where = `${surface} surface`
            expect(read.id, where).not.toBeNull()
            if (scenario === 'mid-stream failure') {
              expect(read.failed, where).toBe(true)
              expect(read.complete, where).toBe(false)
            } else {
              expect(read.complete, where).toBe(true)
              expect(read.failed, where).toBe(false)
            }
            const wire = upstreamWire(surface, family)
            if (upstream === 'recorded') {
              expect(calls.map((c) => wireOf(c.path)), where).toEqual([wire])
              if (scenario === 'document') expect(DOCUMENT_IN[wire](calls[0]!.json()), `${where}: the document in ${wire}'s own form`).toBe(true)
              if (scenario === 'tool round trip') expect(calls[0]!.body, where).toContain('sunny, 21 C')
            } else expect(calls, where).toEqual([])
            if (scenario === 'tool call') expect(read.tools.length, where).toBeGreaterThan(0)
            if (upstream === 'mock') {
              if (scenario === 'tool call') expect(read.tools, where).toEqual(['get_weather'])
              if (scenario === 'tool round trip') expect(read.text, where).toContain('sunny, 21 C')
              if (scenario === 'text') expect(read.text, where).toBe('The capital of France is Paris.')
            } else if (scenario === 'text' || scenario === 'document') expect(read.text.length, where).toBeGreaterThan(0)
            const rec = await recordOf(read.id!)
            expect(rec.endpoint, where).toBe(ENDPOINTS[surface])
            expect(rec.stream, where).toBe(stream)
            if (scenario !== 'mid-stream failure') expect(rec.usage.completion_tokens, where).toBeGreaterThan(0)
            if (scenario === 'reasoning' && upstream === 'recorded' && !(family === 'openai' && surface !== 'responses' && stream)) {
              // the recordings that report reasoning tokens: each surface keeps them in the record
              if (family === 'openai') expect(rec.usage.completion_tokens_details?.reasoning_tokens ?? 0, where).toBeGreaterThan(0)
            }
            // the same upstream reply (the mock's, or one recording) is billed alike on every surface
            const key = upstream === 'mock' ? 'mock' : wire
            if (scenario !== 'mid-stream failure' && !(upstream === 'mock' && scenario === 'document')) {
              if (usageByWire.has(key)) expect(rec.usage, `${where}: usage as on the other surfaces`).toEqual(usageByWire.get(key))
              else usageByWire.set(key, rec.usage)
            }
          }
        })
      }
    }
  })
}
