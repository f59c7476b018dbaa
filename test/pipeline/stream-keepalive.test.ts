// A relayed stream whose upstream closes its body a moment after the last event: the rest is
// read aside, so the connection goes back to the pool; cancelling at the end made each streamed
// request a new upstream connection (a TLS handshake each, against a real provider).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ports = new Set<number>()
let server: ReturnType<typeof Bun.serve>
let gw: Gateway
beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    fetch(req, srv) {
      ports.add(srv.requestIP(req)!.port)
      const enc = new TextEncoder()
      const body = new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode('data: {"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}\n\n'))
          await Bun.sleep(5)
          c.enqueue(enc.encode('data: {"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\ndata: [DONE]\n\n'))
          // the body's end comes in a later write
          await Bun.sleep(20)
          c.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  gw = await startGateway({ env: { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: `http://127.0.0.1:${server.port}/v1` } })
})
afterAll(async () => {
  await gw.stop()
  server.stop(true)
})

test('ten streams one after another take one upstream connection', async () => {
  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(await r.text()).toContain('[DONE]')
    // the drained body's end arrives 20 ms after the last event
    await Bun.sleep(50)
  }
  expect(ports.size).toBeLessThanOrEqual(2)
})
