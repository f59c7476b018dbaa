// An upstream that quotes the key it was given in an error sent inside a stream (a proxy in front
// of a provider does): neither the client, nor the record, nor the relayed event carries it on,
// on any path, pass-through or translated, first event or mid-stream. The same text in an HTTP
// error answer was already redacted.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

const OPENAI_KEY = 'sk-upstream-openai-0123456789'
const ANTHROPIC_KEY = 'sk-ant-upstream-0123456789'

let up: FakeUpstream
let gw: Gateway

/** A stream that begins (or not), then fails with an error naming the key the request carried. */
function failing(req: RecordedRequest) {
  const midway = req.body.includes('midway')
  if (req.path.endsWith('/messages')) {
    const key = req.headers['x-api-key']
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
    const text = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n'
    const error = `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"key ${key} is not allowed"}}\n\n`
    return { sse: start + (midway ? text : '') + error }
  }
  const key = req.headers.authorization
  const first = 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n'
  const error = `data: {"error":{"message":"key ${key} is not allowed","type":"server_error"}}\n\n`
  return { sse: (midway ? first : '') + error }
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(failing)
  gw = await startGateway({ env: { ...NO_LIMITS, OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: up.url } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const paths: [string, string, string][] = [
  ['messages → Claude (pass-through)', '/api/beta/v1/messages', 'claude-sonnet-4-5'],
  ['chat → Claude (translated)', '/api/alpha/v1/chat/completions', 'claude-sonnet-4-5'],
  ['chat → GPT (pass-through)', '/api/alpha/v1/chat/completions', 'gpt-4o'],
  ['messages → GPT (translated)', '/api/beta/v1/messages', 'gpt-4o'],
]

for (const [name, path, model] of paths) {
  test(`${name}: a key quoted in an in-stream error reaches neither the client nor the record`, async () => {
    for (const when of ['at once', 'midway']) {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: 'user', content: `hi ${when}` }] }),
      })
      const text = await res.text()
      expect(text.length).toBeGreaterThan(0)
      expect(text).not.toContain('upstream-openai-0123456789')
      expect(text).not.toContain('ant-upstream-0123456789')
    }
    await gw.services.recorder.flush()
    const records = JSON.stringify(await (await fetch(`${gw.url}/api/v1/generations?limit=10`, { headers: { authorization: `Bearer ${gw.key}` } })).json())
    expect(records).toContain('is not allowed')
    expect(records).not.toContain('upstream-openai-0123456789')
    expect(records).not.toContain('ant-upstream-0123456789')
  })
}
