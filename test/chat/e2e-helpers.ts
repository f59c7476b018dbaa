// End-to-end plumbing for the chat tests: the real gateway (test/helpers/server.ts) in
// front of the fake upstream (test/helpers/fake-upstream.ts), the official `openai` SDK
// as the client, and reference readings of the recorded fixtures — what the provider
// produced — written here independently of the gateway's own parsers.
import OpenAI from 'openai'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { sseEvents } from '../helpers/sse-events.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

export interface Rig {
  up: FakeUpstream
  gw: Gateway
  client: OpenAI
  /** GET /api/v1/generations?id= as the same key. */
  generation(id: string): Promise<any>
  post(body: unknown): Promise<Response>
  stop(): Promise<void>
}

export async function startRig(env: Record<string, string> = {}, yaml?: string): Promise<Rig> {
  const up = await startFakeUpstream()
  const gw = await startGateway({
    // a file of these tests asks faster than a key's default burst: the limits are tested apart
    env: { ...NO_LIMITS, OPENAI_API_KEY: 'sk-upstream-openai-secret', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-upstream-anthropic-secret', ANTHROPIC_BASE_URL: up.url, ...env },
    yaml,
  })
  const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  return {
    up,
    gw,
    client,
    async generation(id) {
      const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
      if (res.status !== 200) throw new Error(`generation lookup ${res.status}: ${await res.text()}`)
      return ((await res.json()) as { generation: any }).generation
    },
    post: (body) =>
      fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async stop() {
      await gw.stop()
      await up.stop()
    },
  }
}


export interface Expected {
  id: string
  text: string
  toolCalls: { id: string; name: string; arguments: string }[]
  finish: string
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number }
}

/** What an OpenAI chat SSE recording says the model produced. */
export function fromOpenAISse(sse: string): Expected {
  const e: Expected = { id: '', text: '', toolCalls: [], finish: '', usage: { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 } }
  for (const { data } of sseEvents(sse)) {
    if (data === '[DONE]') continue
    const c = JSON.parse(data)
    e.id ||= c.id
    if (c.usage) e.usage = { prompt_tokens: c.usage.prompt_tokens, completion_tokens: c.usage.completion_tokens, cached_tokens: c.usage.prompt_tokens_details?.cached_tokens ?? 0 }
    const ch = c.choices?.[0]
    if (!ch) continue
    if (ch.delta?.content) e.text += ch.delta.content
    for (const tc of ch.delta?.tool_calls ?? []) {
      e.toolCalls[tc.index] ??= { id: '', name: '', arguments: '' }
      const t = e.toolCalls[tc.index]!
      if (tc.id) t.id = tc.id
      if (tc.function?.name) t.name = tc.function.name
      if (tc.function?.arguments) t.arguments += tc.function.arguments
    }
    if (ch.finish_reason) e.finish = ch.finish_reason
  }
  return e
}

const ANTHROPIC_FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls' }

/** What an Anthropic messages recording (JSON) says, in chat terms. */
export function fromAnthropicJson(m: any): Expected {
  const u = m.usage
  return {
    id: m.id,
    text: m.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join(''),
    toolCalls: m.content.filter((b: any) => b.type === 'tool_use').map((b: any) => ({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) })),
    finish: ANTHROPIC_FINISH[m.stop_reason]!,
    usage: {
      prompt_tokens: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
      completion_tokens: u.output_tokens,
      cached_tokens: u.cache_read_input_tokens ?? 0,
    },
  }
}

/** What an Anthropic messages SSE recording says, in chat terms. */
export function fromAnthropicSse(sse: string): Expected {
  const e: Expected = { id: '', text: '', toolCalls: [], finish: '', usage: { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 } }
  const blocks = new Map<number, { id: string; name: string; arguments: string }>()
  let input = 0
  let cacheRead = 0
  let cacheWrite = 0
  for (const { data } of sseEvents(sse)) {
    const ev = JSON.parse(data)
    if (ev.type === 'message_start') {
      e.id = ev.message.id
      const u = ev.message.usage
      input = u.input_tokens
      cacheRead = u.cache_read_input_tokens ?? 0
      cacheWrite = u.cache_creation_input_tokens ?? 0
      e.usage.completion_tokens = u.output_tokens
    } else if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') {
      const b = { id: ev.content_block.id, name: ev.content_block.name, arguments: '' }
      blocks.set(ev.index, b)
      e.toolCalls.push(b)
    } else if (ev.type === 'content_block_delta') {
      if (ev.delta.type === 'text_delta') e.text += ev.delta.text
      if (ev.delta.type === 'input_json_delta') blocks.get(ev.index)!.arguments += ev.delta.partial_json
    } else if (ev.type === 'message_delta') {
      e.finish = ANTHROPIC_FINISH[ev.delta.stop_reason] ?? ev.delta.stop_reason
      const u = ev.usage ?? {}
      e.usage.completion_tokens = u.output_tokens ?? e.usage.completion_tokens
      if (u.input_tokens != null) input = u.input_tokens
      if (u.cache_read_input_tokens != null) cacheRead = u.cache_read_input_tokens
      if (u.cache_creation_input_tokens != null) cacheWrite = u.cache_creation_input_tokens
    }
  }
  e.usage.prompt_tokens = input + cacheRead + cacheWrite
  e.usage.cached_tokens = cacheRead
  return e
}

/** The frames of a chat SSE body as the client received it. */
export function chatFrames(body: string): string[] {
  return body.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6))
}
