// Argument text a chat-wire server sends ahead of its call's name waits for the name
// (openai/stream.ts). When the stream fails before the name comes, that text was produced all
// the same (the server bills it): a stream that fails after output is billed for what it
// produced, so what waited goes out before the error, as it did before it waited.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from '../../src/ir/tokens.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({
    yaml: `
providers:
  - { id: local, kind: openai-compatible, base_url: "${up.url}/v1" }
models:
  - { id: qwen-local, family: openai, deployments: [{ provider: local, upstream_id: Qwen/Qwen2.5-7B-Instruct }], price: { input_mtok: 1, output_mtok: 1 } }
compat:
  cross_family: translate
`,
  })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

type Obj = Record<string, unknown>
const chunk = (delta: Obj) => `data: ${JSON.stringify({ id: 'chatcmpl-f', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
const piece = (o: Obj) => chunk({ tool_calls: [o] })

test('a stream that fails while a call\'s arguments wait for its name is billed for those arguments', async () => {
  const args = JSON.stringify({ cities: Array.from({ length: 150 }, (_, i) => `city number ${i}`) })
  const pieces = args.match(/.{1,40}/g)!
  const sse = chunk({ role: 'assistant', content: '' }) + pieces.map((a) => piece({ index: 0, function: { arguments: a } })).join('')
  // the server goes away before it names the call
  up.script({ sse, dropAfterEvents: pieces.length + 1 })
  const res = await fetch(`${gw.url}/api/beta/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'qwen-local', max_tokens: 2000, stream: true, messages: [{ role: 'user', content: 'Weather?' }] }),
  })
  await res.text()
  let g: any
  for (let i = 0; i < 100 && !g?.error; i++) {
    const list = (await (await fetch(`${gw.url}/api/v1/generations?limit=1`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { data: any[] }
    g = list.data[0]
    if (!g?.error) await Bun.sleep(20)
  }
  expect(g.error).toBeTruthy()
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(countTokens(args))
})
