// One mock conversation — text, a tool call, a tool result, a mid-stream failure — through
// the chat and the messages surface, for a model of each family, streamed and not. Both
// surfaces run the one generation pipeline, so the records agree (endpoint and the
// surface's own spelling of the finish reason aside) and so does the usage.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
})
afterAll(async () => {
  await gw.stop()
})

const SAME_FINISH: Record<string, string> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length' }

type Turn = { role: 'user' | 'assistant' | 'tool'; text?: string; call?: { id: string; name: string; args: string }; result?: { id: string; text: string } }

const weather = { name: 'get_weather', description: 'Weather of a city', schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }

function chatBody(model: string, turns: Turn[], stream: boolean) {
  return {
    model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    tools: [{ type: 'function', function: { name: weather.name, description: weather.description, parameters: weather.schema } }],
    messages: turns.map((t) =>
      t.role === 'user' ? { role: 'user', content: t.text } : t.role === 'assistant' ? { role: 'assistant', content: null, tool_calls: [{ id: t.call!.id, type: 'function', function: { name: t.call!.name, arguments: t.call!.args } }] } : { role: 'tool', tool_call_id: t.result!.id, content: t.result!.text },
    ),
  }
}

function messagesBody(model: string, turns: Turn[], stream: boolean) {
  return {
    model,
    stream,
    max_tokens: 1000,
    tools: [{ name: weather.name, description: weather.description, input_schema: weather.schema }],
    messages: turns.map((t) =>
      t.role === 'user' ? { role: 'user', content: t.text } : t.role === 'assistant' ? { role: 'assistant', content: [{ type: 'tool_use', id: t.call!.id, name: t.call!.name, input: JSON.parse(t.call!.args) }] } : { role: 'user', content: [{ type: 'tool_result', tool_use_id: t.result!.id, content: t.result!.text }] },
    ),
  }
}

const CONVERSATIONS: Record<string, Turn[]> = {
  text: [{ role: 'user', text: 'mock: text The capital of France is Paris.' }],
  'tool call': [{ role: 'user', text: 'mock: tool get_weather {"location":"Paris"}' }],
  'tool result': [
    { role: 'user', text: 'Weather in Paris?' },
    { role: 'assistant', call: { id: 'toolu_01', name: 'get_weather', args: '{"location":"Paris"}' } },
    { role: 'tool', result: { id: 'toolu_01', text: 'sunny, 21 C' } },
  ],
  'mid-stream failure': [{ role: 'user', text: 'mock: text one two three four\nmock: fail-midstream' }],
}

async function call(path: string, body: unknown): Promise<{ id: string | null; status: number; text: string }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  const m = /"id":"((?:chatcmpl|msg)[^"]+)"/.exec(text)
  return { id: m ? m[1]! : null, status: res.status, text }
}

async function record(id: string) {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as any).generation
}

describe('chat and messages share one pipeline', () => {
  for (const model of ['mock-gpt', 'mock-claude']) {
    for (const [name, turns] of Object.entries(CONVERSATIONS)) {
      for (const stream of name === 'mid-stream failure' ? [true] : [false, true]) {
        test(`${model}, ${name}, ${stream ? 'streamed' : 'plain'}: same record and usage on both surfaces`, async () => {
          const chat = await call('/api/alpha/v1/chat/completions', chatBody(model, turns, stream))
          const msgs = await call('/api/beta/v1/messages', messagesBody(model, turns, stream))
          expect(chat.status).toBe(200)
          expect(msgs.status).toBe(200)
          if (name === 'mid-stream failure') {
            expect(chat.text).toContain('"error"')
            expect(chat.text).not.toContain('[DONE]')
            expect(msgs.text).toContain('event: error')
            expect(msgs.text).not.toContain('message_stop')
          }
          const a = await record(chat.id!)
          const b = await record(msgs.id!)
          expect(a.endpoint).toBe('openai.chat.completions')
          expect(b.endpoint).toBe('anthropic.messages')
          expect(b.usage).toEqual(a.usage)
          expect(b.model).toBe(a.model)
          expect(b.stream).toBe(a.stream)
          expect(b.finish_reason === null ? null : (SAME_FINISH[b.finish_reason] ?? b.finish_reason)).toBe(a.finish_reason)
          if (name !== 'mid-stream failure') expect(a.usage.completion_tokens).toBeGreaterThan(0)
          if (name === 'tool result' && !stream) expect(msgs.text).toContain('tool result: sunny, 21 C')
        })
      }
    }
  }
})
