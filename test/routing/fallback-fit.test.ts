// A fallback model is one the client did not name: the parameters it wrote for its own model go
// to the fallback only where the fallback takes them (gpt-5's effort is gpt-4o's 400, gpt-4o's
// temperature o3's), what is left out named in x-switchyard-compat, and a thread's reasoning goes
// only to the model that made it. The model the client named still gets its body as it sent it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import Anthropic from '@anthropic-ai/sdk'
import { fixture, fixtureJson, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const CHAT = fixture('openai/chat/nonstream-text.json')
const REASONED = fixtureJson('openai/responses/nonstream-reasoning-summary.json')
const CLAUDE = fixture('anthropic/messages/nonstream-text.json')
const JSON_TOOL = fixture('anthropic/messages/nonstream-json-tool-vercel.json')
const JSON_TOOL_SSE = fixture('anthropic/messages/stream-tool-use-vercel.sse')
/** Models whose every call fails: their fallbacks answer. */
const DOWN = new Set(['gpt-5', 'gpt-5-mini', 'gpt-4o', 'claude-opus-4-1', 'claude-opus-4-6', 'claude-sonnet-4', 'claude-3-7-sonnet', 'claude-haiku-4-5', 'claude-opus-4-8', 'claude-opus-4-5'])

let up: FakeUpstream
let gw: Gateway
let openai: OpenAI
let anthropic: Anthropic
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req) => {
    const body = req.json()
    if (DOWN.has(body.model)) return { status: 500, json: { error: { message: 'overloaded', type: 'server_error' } } }
    // a model made to reply through a tool (no structured output of its own) calls it
    const replyTool = body.tools?.find((t: { name: string }) => t.name.startsWith('json_reply'))?.name
    if (req.path.startsWith('/v1/messages') && replyTool && body.stream) return { sse: JSON_TOOL_SSE.replaceAll('"name":"json"', `"name":"${replyTool}"`) }
    if (req.path.startsWith('/v1/messages') && replyTool) return { json: JSON.parse(JSON_TOOL.replaceAll('"name": "json"', `"name": "${replyTool}"`)) }
    if (req.path.startsWith('/v1/messages')) return { json: CLAUDE }
    if (req.path.endsWith('/responses')) return { json: { ...REASONED, id: `resp_${up.requests.length}`, model: body.model } }
    return { json: CHAT }
  })
  gw = await startGateway({
    yaml: `
providers:
  - { id: openai, kind: openai, base_url: ${up.url}/v1, api_key: sk-o, max_retries: 0 }
  - { id: anthropic, kind: anthropic, base_url: ${up.url}, api_key: sk-a, max_retries: 0 }
models:
  - { id: gpt-5, family: openai, fallbacks: [gpt-4o-mini] }
  - { id: gpt-4o, family: openai, fallbacks: [o3] }
  - { id: gpt-5-mini, family: openai, fallbacks: [reasoner] }
  - { id: reasoner, family: openai, upstream_id: o3 }
  - { id: claude-opus-4-1, family: anthropic, fallbacks: [claude-3-5-haiku] }
  - { id: claude-opus-4-6, family: anthropic, fallbacks: [claude-sonnet-4-5] }
  - { id: claude-sonnet-4, family: anthropic, fallbacks: [claude-opus-4-7] }
  - { id: claude-opus-4-7, family: anthropic, fallbacks: [claude-opus-4-6] }
  - { id: claude-3-7-sonnet, family: anthropic, fallbacks: [claude-sonnet-4-5] }
  - { id: claude-haiku-4-5, family: anthropic, fallbacks: [claude-opus-5-5] }
  - { id: claude-opus-4-8, family: anthropic, fallbacks: [claude-opus-5, claude-opus-4-7] }
  - { id: claude-opus-4-5, family: anthropic, fallbacks: [claude-3-5-haiku] }
routing: { failures_to_cool: 1000 }
`,
  })
  openai = new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
  // a timeout of its own: the SDK asks for a stream where a large max_tokens could take its default 10 minutes
  anthropic = new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0, timeout: 60_000 })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

/** The bodies the upstream got for one request, by model. */
function sent(from: number): Record<string, any> {
  return Object.fromEntries(up.requests.slice(from).map((r: RecordedRequest) => [r.json().model, r.json()]))
}

/** A chat request to gpt-5 (down) with `extra`: the bodies gpt-5 and its fallback gpt-4o-mini got, and what was named. */
async function chatToMini(extra: Record<string, unknown>) {
  const from = up.requests.length
  const res = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }], ...extra } as never).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  return { named: bodies['gpt-5'], fallback: bodies['gpt-4o-mini'], compat: res.response.headers.get('x-switchyard-compat') }
}

test('chat: a reasoning model\'s effort is left out for a fallback that does not reason, and named', async () => {
  const from = up.requests.length
  const res = await openai.chat.completions.create({ model: 'gpt-5', reasoning_effort: 'low', max_completion_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['gpt-5']).toMatchObject({ reasoning_effort: 'low', max_completion_tokens: 100 })
  expect(bodies['gpt-4o-mini']).not.toHaveProperty('reasoning_effort')
  expect(bodies['gpt-4o-mini'].max_completion_tokens).toBe(100)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('reasoning_effort')
})

test('chat: sampling, stop and max_tokens are fitted for a fallback that reasons', async () => {
  const from = up.requests.length
  const res = await openai.chat.completions.create({ model: 'gpt-4o', temperature: 0.2, top_p: 1, max_tokens: 100, stop: ['END'], messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  // the model the client named: as it was sent
  expect(bodies['gpt-4o']).toMatchObject({ temperature: 0.2, top_p: 1, max_tokens: 100, stop: ['END'] })
  const o3 = bodies.o3
  expect(o3).not.toHaveProperty('temperature')
  expect(o3).not.toHaveProperty('stop')
  expect(o3).not.toHaveProperty('max_tokens')
  // at its default of 1, left out without a word: gpt-5 refuses top_p at any value
  expect(o3).not.toHaveProperty('top_p')
  expect(o3).toMatchObject({ max_completion_tokens: 100 })
  expect(res.response.headers.get('x-switchyard-compat')).toBe('temperature, stop')
})

test('chat: penalties, log probabilities and logit bias are left out for a fallback that reasons', async () => {
  const from = up.requests.length
  const res = await openai.chat.completions
    .create({ model: 'gpt-4o', presence_penalty: 0.5, frequency_penalty: 0.2, logprobs: true, top_logprobs: 2, logit_bias: { '50256': -100 }, messages: [{ role: 'user', content: 'hi' }] })
    .withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['gpt-4o']).toMatchObject({ presence_penalty: 0.5, frequency_penalty: 0.2, logprobs: true, top_logprobs: 2, logit_bias: { '50256': -100 } })
  for (const k of ['presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias']) expect(bodies.o3).not.toHaveProperty(k)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('presence_penalty, frequency_penalty, logprobs, top_logprobs, logit_bias')
})

test('a verbosity other than medium is left out for a fallback before GPT-5, on chat and responses', async () => {
  const chat = await chatToMini({ verbosity: 'low' })
  expect(chat.named.verbosity).toBe('low')
  expect(chat.fallback).not.toHaveProperty('verbosity')
  expect(chat.compat).toBe('verbosity')

  const from = up.requests.length
  const resp = await openai.responses.create({ model: 'gpt-5', input: 'hi', text: { verbosity: 'high', format: { type: 'text' } } }).withResponse()
  expect(resp.response.status).toBe(200)
  expect(sent(from)['gpt-5'].text).toEqual({ verbosity: 'high', format: { type: 'text' } })
  expect(sent(from)['gpt-4o-mini'].text).toEqual({ format: { type: 'text' } })
  expect(resp.response.headers.get('x-switchyard-compat')?.split(', ')).toContain('text.verbosity')

  // medium is every model's
  expect((await chatToMini({ verbosity: 'medium' })).fallback.verbosity).toBe('medium')
})

test('a processing tier the fallback is not served at is left out: flex for gpt-4o-mini, kept for o3', async () => {
  const chat = await chatToMini({ service_tier: 'flex' })
  expect(chat.named.service_tier).toBe('flex')
  expect(chat.fallback).not.toHaveProperty('service_tier')
  expect(chat.compat).toBe('service_tier.flex')

  const from = up.requests.length
  const resp = await openai.responses.create({ model: 'gpt-4o', input: 'hi', service_tier: 'flex' }).withResponse()
  expect(resp.response.status).toBe(200)
  // o3 is served at flex: the tier goes with the request
  expect(sent(from).o3.service_tier).toBe('flex')
  expect(resp.response.headers.get('x-switchyard-compat') ?? '').not.toContain('service_tier')

  // priority serves gpt-4o-mini
  expect((await chatToMini({ service_tier: 'priority' })).fallback.service_tier).toBe('priority')
})

test("a 24-hour prompt cache is left out for a fallback OpenAI keeps none for", async () => {
  const chat = await chatToMini({ prompt_cache_retention: '24h' })
  expect(chat.named.prompt_cache_retention).toBe('24h')
  expect(chat.fallback).not.toHaveProperty('prompt_cache_retention')
  expect(chat.compat).toBe('prompt_cache_retention.24h')
  // the in-memory cache is every model's before GPT-5.6
  const from = up.requests.length
  await openai.responses.create({ model: 'gpt-5', input: 'hi', prompt_cache_retention: 'in_memory' } as never)
  expect(sent(from)['gpt-4o-mini'].prompt_cache_retention).toBe('in_memory')
})

test('responses: reasoning and its encrypted content are left out for a fallback that does not reason; temperature for one that does', async () => {
  let from = up.requests.length
  const res = await openai.responses.create({ model: 'gpt-5', reasoning: { effort: 'minimal', summary: 'auto' }, include: ['reasoning.encrypted_content'], input: 'hi', store: false }).withResponse()
  expect(res.response.status).toBe(200)
  let bodies = sent(from)
  expect(bodies['gpt-5']).toMatchObject({ reasoning: { effort: 'minimal', summary: 'auto' }, include: ['reasoning.encrypted_content'] })
  expect(bodies['gpt-4o-mini']).not.toHaveProperty('reasoning')
  expect(bodies['gpt-4o-mini']).not.toHaveProperty('include')
  expect(res.response.headers.get('x-switchyard-compat')).toBe('reasoning, include.reasoning.encrypted_content')

  from = up.requests.length
  const cool = await openai.responses.create({ model: 'gpt-4o', temperature: 0.3, input: 'hi', store: false }).withResponse()
  expect(cool.response.status).toBe(200)
  bodies = sent(from)
  expect(bodies['gpt-4o'].temperature).toBe(0.3)
  expect(bodies.o3).not.toHaveProperty('temperature')
})

test('responses: log probabilities are left out for a fallback that reasons ("logprobs are not supported with reasoning models."), the rest of include kept', async () => {
  const from = up.requests.length
  const include = ['message.output_text.logprobs', 'web_search_call.action.sources'] as const
  const res = await openai.responses.create({ model: 'gpt-4o', top_logprobs: 3, include: [...include], input: 'hi', store: false }).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['gpt-4o']).toMatchObject({ top_logprobs: 3, include })
  expect(bodies.o3).not.toHaveProperty('top_logprobs')
  expect(bodies.o3.include).toEqual(['web_search_call.action.sources'])
  expect(res.response.headers.get('x-switchyard-compat')).toBe('top_logprobs, include.message.output_text.logprobs')
})

test("responses: a thread's reasoning made by the model the client named does not go to its fallback", async () => {
  DOWN.delete('gpt-5')
  let first
  try {
    first = await openai.responses.create({ model: 'gpt-5', input: 'think about it' })
  } finally {
    DOWN.add('gpt-5')
  }
  expect(first.output.map((o) => o.type)).toEqual(['reasoning', 'message'])
  const from = up.requests.length
  const next = await openai.responses.create({ model: 'gpt-5', previous_response_id: first.id, input: 'and now?' })
  expect(next.status).toBe('completed')
  const bodies = sent(from)
  // its own model would have had it back whole
  expect(bodies['gpt-5'].input.map((i: any) => i.type ?? i.role)).toContain('reasoning')
  expect(bodies['gpt-4o-mini'].input.map((i: any) => i.type ?? i.role)).not.toContain('reasoning')
  expect(JSON.stringify(bodies['gpt-4o-mini'])).not.toContain('encrypted_content')
})

test('messages: temperature and top_p together go to a fallback that refuses the two as temperature alone', async () => {
  const from = up.requests.length
  // the SDK's types are API version 2026-10-21's, which dropped the samplers; the gateway speaks 2023-06-01, where they stand
  const params = { model: 'claude-3-7-sonnet', max_tokens: 1000, temperature: 0.4, top_p: 0.9, messages: [{ role: 'user', content: 'hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming
  const res = await anthropic.messages.create(params).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  // Sonnet 3.7 takes both
  expect(bodies['claude-3-7-sonnet']).toMatchObject({ temperature: 0.4, top_p: 0.9 })
  expect(bodies['claude-sonnet-4-5'].temperature).toBe(0.4)
  expect(bodies['claude-sonnet-4-5']).not.toHaveProperty('top_p')
  expect(res.response.headers.get('x-switchyard-compat')).toBe('top_p')
})

test('messages: no sampler goes to a fallback from Opus 4.7 on, which refuses each ("`temperature` is deprecated for this model.")', async () => {
  const from = up.requests.length
  const params = { model: 'claude-sonnet-4', max_tokens: 1000, temperature: 0.4, top_p: 0.9, top_k: 40, messages: [{ role: 'user', content: 'hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming
  const res = await anthropic.messages.create(params).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['claude-sonnet-4']).toMatchObject({ temperature: 0.4, top_p: 0.9, top_k: 40 })
  for (const k of ['temperature', 'top_p', 'top_k']) expect(bodies['claude-opus-4-7']).not.toHaveProperty(k)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('temperature, top_p, top_k')
})

test('messages: a forced tool choice goes as auto to a fallback that refuses one (Opus 5.5), its tools kept', async () => {
  const from = up.requests.length
  const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
  const res = await anthropic.messages
    .create({ model: 'claude-haiku-4-5', max_tokens: 1000, tools, tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }, messages: [{ role: 'user', content: 'Weather in Paris?' }] })
    .withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['claude-haiku-4-5'].tool_choice).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true })
  expect(bodies['claude-opus-5-5'].tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
  expect(bodies['claude-opus-5-5'].tools).toEqual(tools)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('tool_choice')
})

test("messages: fast mode goes to a fallback that has it (Opus 5), and is left out for one that refuses the field (Opus 4.7: \"does not support the `speed` parameter\")", async () => {
  const params = { model: 'claude-opus-4-8', max_tokens: 1000, speed: 'fast', messages: [{ role: 'user', content: 'hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming
  let from = up.requests.length
  const fast = await anthropic.messages.create(params).withResponse()
  expect(fast.response.status).toBe(200)
  expect(sent(from)['claude-opus-5'].speed).toBe('fast')
  expect(fast.response.headers.get('x-switchyard-compat')).toBeNull()
  DOWN.add('claude-opus-5')
  try {
    from = up.requests.length
    const res = await anthropic.messages.create(params).withResponse()
    expect(res.response.status).toBe(200)
    const bodies = sent(from)
    expect(bodies['claude-opus-4-8'].speed).toBe('fast')
    expect(bodies['claude-opus-4-7']).not.toHaveProperty('speed')
    expect(res.response.headers.get('x-switchyard-compat')).toBe('speed')
  } finally {
    DOWN.delete('claude-opus-5')
  }
})

test("messages: Claude's structured output asked of a fallback without it (Haiku 3.5) goes through a tool, and the reply is the tool's input as text", async () => {
  const from = up.requests.length
  const schema = { type: 'object', properties: { elements: { type: 'array' } }, required: ['elements'], additionalProperties: false }
  const params = { model: 'claude-opus-4-5', max_tokens: 1000, output_config: { format: { type: 'json_schema', schema } }, messages: [{ role: 'user', content: 'Weather?' }] }
  const res = await anthropic.messages.create(params as never).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['claude-opus-4-5'].output_config).toEqual({ format: { type: 'json_schema', schema } })
  const haiku = bodies['claude-3-5-haiku']
  expect(haiku).not.toHaveProperty('output_config')
  expect(haiku.tools).toEqual([expect.objectContaining({ name: 'json_reply', input_schema: schema })])
  expect(haiku.tool_choice).toEqual({ type: 'tool', name: 'json_reply' })
  const message = res.data as Anthropic.Message
  expect(message.stop_reason).toBe('end_turn')
  expect(message.content.map((b) => b.type)).toEqual(['text'])
  expect(JSON.parse((message.content[0] as Anthropic.TextBlock).text)).toEqual(JSON.parse(JSON_TOOL).content[0].input)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('output_config.format->tool')
  // streamed: the tool's input arrives as a text block's deltas
  const streamed = await anthropic.messages.stream(params as never).finalMessage()
  expect(streamed.stop_reason).toBe('end_turn')
  expect(streamed.content.map((b) => b.type)).toEqual(['text'])
  expect(JSON.parse((streamed.content[0] as Anthropic.TextBlock).text)).toEqual({ elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] })
  expect(up.requests.at(-1)!.json()).toMatchObject({ model: 'claude-3-5-haiku', stream: true, tool_choice: { type: 'tool', name: 'json_reply' } })
})

test("messages: Claude's thinking is left out for a fallback without it", async () => {
  const from = up.requests.length
  const res = await anthropic.messages.create({ model: 'claude-opus-4-1', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['claude-opus-4-1'].thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
  expect(bodies['claude-3-5-haiku']).not.toHaveProperty('thinking')
  expect(res.response.headers.get('x-switchyard-compat')).toBe('thinking')
})

test("messages: with the thinking left out go the turns' thinking blocks and a context edit that clears thinking", async () => {
  const from = up.requests.length
  const params = {
    model: 'claude-opus-4-1',
    max_tokens: 4000,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    // as Claude Code sends it
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }, { type: 'clear_tool_uses_20250919' }] },
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'text', text: 'hello' }] },
      { role: 'user', content: 'and?' },
    ],
  } as unknown as Anthropic.MessageCreateParamsNonStreaming
  const res = await anthropic.beta.messages.create(params as never).withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  // the model the client named: as sent
  expect(bodies['claude-opus-4-1'].messages[1].content.map((b: any) => b.type)).toEqual(['thinking', 'text'])
  expect(bodies['claude-opus-4-1'].context_management.edits).toHaveLength(2)
  const haiku = bodies['claude-3-5-haiku']
  expect(haiku).not.toHaveProperty('thinking')
  expect(haiku.messages[1].content).toEqual([{ type: 'text', text: 'hello' }])
  expect(haiku.context_management).toEqual({ edits: [{ type: 'clear_tool_uses_20250919' }] })
  expect(res.response.headers.get('x-switchyard-compat')).toBe('messages.thinking, thinking, context_management.clear_thinking')
})

test("messages: a thread's thinking blocks, bound to the model that made them (\"Invalid `signature` in `thinking` block\" on another), do not go to a fallback that thinks; thinking stays on unless the last turn then calls tools without its own", async () => {
  const thought = (text: string) => ({ type: 'thinking', thinking: text, signature: `sig-${text}` })
  const base = {
    model: 'claude-opus-4-6',
    max_tokens: 20_000,
    thinking: { type: 'enabled', budget_tokens: 4096 },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  }
  // a conversation of text turns: thinking stays on for the fallback, without the named model's blocks
  let from = up.requests.length
  const chat = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: [thought('a'), { type: 'text', text: 'hello' }] },
    { role: 'user', content: 'and?' },
  ]
  let res = await anthropic.beta.messages.create({ ...base, messages: chat } as never).withResponse()
  expect(res.response.status).toBe(200)
  let bodies = sent(from)
  expect(bodies['claude-opus-4-6'].messages[1].content.map((b: any) => b.type)).toEqual(['thinking', 'text'])
  const sonnet = bodies['claude-sonnet-4-5']
  expect(sonnet.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
  expect(sonnet.messages[1].content).toEqual([{ type: 'text', text: 'hello' }])
  expect(sonnet.context_management.edits).toHaveLength(1)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('messages.thinking')

  // mid tool loop: its last turn would call tools without its thinking, which thinking on refuses
  from = up.requests.length
  const loop = [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: [thought('b'), { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
  ]
  const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]
  res = await anthropic.beta.messages.create({ ...base, tools, messages: loop } as never).withResponse()
  expect(res.response.status).toBe(200)
  bodies = sent(from)
  expect(bodies['claude-opus-4-6'].thinking).toEqual(base.thinking)
  expect(bodies['claude-sonnet-4-5']).not.toHaveProperty('thinking')
  expect(bodies['claude-sonnet-4-5']).not.toHaveProperty('context_management')
  expect(bodies['claude-sonnet-4-5'].messages[1].content.map((b: any) => b.type)).toEqual(['tool_use'])
  expect(res.response.headers.get('x-switchyard-compat')).toBe('messages.thinking, thinking, context_management.clear_thinking')
})

test("chat: a Claude thread's signed thinking (thinking_blocks) stays behind for a Claude fallback, and a tool loop then goes without thinking", async () => {
  const from = up.requests.length
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
  const res = await openai.chat.completions
    .create({
      model: 'claude-opus-4-6', reasoning_effort: 'low', max_tokens: 4000, tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, thinking_blocks: [{ type: 'thinking', thinking: 'ask the tool', signature: 'EqQBsig==' }], tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
    } as never)
    .withResponse()
  expect(res.response.status).toBe(200)
  const bodies = sent(from)
  expect(bodies['claude-opus-4-6'].messages[1].content.map((b: any) => b.type)).toEqual(['thinking', 'tool_use'])
  expect(bodies['claude-opus-4-6'].thinking).toBeDefined()
  expect(bodies['claude-sonnet-4-5'].messages[1].content.map((b: any) => b.type)).toEqual(['tool_use'])
  expect(bodies['claude-sonnet-4-5']).not.toHaveProperty('thinking')
  expect(res.response.headers.get('x-switchyard-compat')?.split(/,\s*/)).toEqual(expect.arrayContaining(['messages.thinking', 'thinking']))
})

// Claude Code asks its model for 32,000 tokens and more; a fallback that gives fewer would refuse the request
test("an output cap past the fallback's own is its own, and a thinking budget under it", async () => {
  let from = up.requests.length
  let res = await openai.chat.completions.create({ model: 'gpt-5', max_completion_tokens: 100_000, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(res.response.status).toBe(200)
  expect(sent(from)['gpt-5'].max_completion_tokens).toBe(100_000)
  expect(sent(from)['gpt-4o-mini'].max_completion_tokens).toBe(16_384)
  expect(res.response.headers.get('x-switchyard-compat')).toBe('max_completion_tokens.100000->16384')

  from = up.requests.length
  const haiku = await anthropic.messages.create({ model: 'claude-opus-4-1', max_tokens: 32_000, thinking: { type: 'enabled', budget_tokens: 31_999 }, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(haiku.response.status).toBe(200)
  expect(sent(from)['claude-3-5-haiku'].max_tokens).toBe(8_192)
  expect(sent(from)['claude-3-5-haiku']).not.toHaveProperty('thinking')
  expect(haiku.response.headers.get('x-switchyard-compat')).toBe('max_tokens.32000->8192, thinking')

  from = up.requests.length
  const sonnet = await anthropic.messages.create({ model: 'claude-opus-4-6', max_tokens: 100_000, thinking: { type: 'enabled', budget_tokens: 80_000 }, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(sonnet.response.status).toBe(200)
  expect(sent(from)['claude-opus-4-6']).toMatchObject({ max_tokens: 100_000, thinking: { type: 'enabled', budget_tokens: 80_000 } })
  expect(sent(from)['claude-sonnet-4-5']).toMatchObject({ max_tokens: 64_000, thinking: { type: 'enabled', budget_tokens: 63_999 } })
  expect(sonnet.response.headers.get('x-switchyard-compat')).toBe('max_tokens.100000->64000, thinking.budget_tokens.80000->63999')
})

// Opus 4.6 thinks adaptively by choice, Sonnet 4.5 on a budget only, Opus 4.7 adaptively only
test("Claude's thinking in a form the fallback refuses goes to it in the fallback's own form", async () => {
  let from = up.requests.length
  const adaptive = await anthropic.messages.create({ model: 'claude-opus-4-6', max_tokens: 8000, thinking: { type: 'adaptive' }, output_config: { effort: 'low' }, messages: [{ role: 'user', content: 'hi' }] } as any).withResponse()
  expect(adaptive.response.status).toBe(200)
  expect(sent(from)['claude-opus-4-6']).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })
  // a budget model takes no effort: the effort's budget
  expect(sent(from)['claude-sonnet-4-5'].thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
  expect(sent(from)['claude-sonnet-4-5']).not.toHaveProperty('output_config')
  expect(adaptive.response.headers.get('x-switchyard-compat')).toBe('thinking.adaptive->budget_tokens, output_config.effort')

  from = up.requests.length
  const budget = await anthropic.messages.create({ model: 'claude-sonnet-4', max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(budget.response.status).toBe(200)
  expect(sent(from)['claude-sonnet-4'].thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
  expect(sent(from)['claude-opus-4-7']).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })
  expect(sent(from)['claude-opus-4-7'].thinking).toEqual({ type: 'adaptive' })
  expect(budget.response.headers.get('x-switchyard-compat')).toBe('thinking.budget_tokens->adaptive')

  // Opus 4.7's xhigh is Opus 4.6's high
  from = up.requests.length
  DOWN.add('claude-opus-4-7')
  DOWN.delete('claude-opus-4-6')
  try {
    const high = await anthropic.messages.create({ model: 'claude-opus-4-7', max_tokens: 8000, thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' }, messages: [{ role: 'user', content: 'hi' }] } as any).withResponse()
    expect(high.response.status).toBe(200)
    expect(sent(from)['claude-opus-4-7'].output_config).toEqual({ effort: 'xhigh' })
    expect(sent(from)['claude-opus-4-6']).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(high.response.headers.get('x-switchyard-compat')).toBe('output_config.effort.xhigh->high')
  } finally {
    DOWN.delete('claude-opus-4-7')
    DOWN.add('claude-opus-4-6')
  }
})

test("responses: the reasoning of a turn a fallback answered goes back to that model only", async () => {
  // gpt-4o is down: o3 answers, with its reasoning
  const first = await openai.responses.create({ model: 'gpt-4o', input: 'think about it' })
  expect(first.model).toBe('o3')
  expect(first.output.map((o) => o.type)).toEqual(['reasoning', 'message'])
  DOWN.delete('gpt-4o')
  let from = up.requests.length
  try {
    await openai.responses.create({ model: 'gpt-4o', previous_response_id: first.id, input: 'and now?' })
  } finally {
    DOWN.add('gpt-4o')
  }
  const kinds = (b: any) => b.input.map((i: any) => i.type ?? i.role)
  expect(kinds(sent(from)['gpt-4o'])).not.toContain('reasoning')
  from = up.requests.length
  await openai.responses.create({ model: 'o3', previous_response_id: first.id, input: 'and now?' })
  expect(kinds(sent(from).o3)).toContain('reasoning')
})

// a fallback under the operator's own name is read by the model it is sent as
test("an effort goes in the tiers of the model a fallback is sent as", async () => {
  const from = up.requests.length
  const res = await openai.chat.completions.create({ model: 'gpt-5-mini', reasoning_effort: 'minimal', messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  expect(res.response.status).toBe(200)
  expect(sent(from)['gpt-5-mini'].reasoning_effort).toBe('minimal')
  // o3 has no minimal
  expect(sent(from).o3.reasoning_effort).toBe('low')
  expect(res.response.headers.get('x-switchyard-compat')).toBe('reasoning_effort.minimal->low')
})
