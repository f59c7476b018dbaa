// Providers of the list form behind the real gateway: an openai-compatible server (no key, no
// usage in its replies) serving a configured model through all three surfaces, and an
// azure-openai one getting its deployment path, api-version and api-key.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { encode } from 'gpt-tokenizer/encoding/o200k_base'
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
const AZURE_KEY = 'az-secret-key-000000000000000000'

beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({
    yaml: `
providers:
  - { id: local, kind: openai-compatible, base_url: "${up.url}/v1" }
  - { id: azure, kind: azure-openai, base_url: "${up.url}", api_key: "\${AZURE_KEY}", api_version: "2024-10-21", max_retries: 0 }
models:
  - { id: llama-3.1-8b, family: openai, deployments: [{ provider: local, upstream_id: meta-llama/Llama-3.1-8B-Instruct }], price: { input_mtok: 0, output_mtok: 0 } }
  - { id: qwq-32b, family: openai, reasoning: true, deployments: [{ provider: local, upstream_id: Qwen/QwQ-32B }], price: { input_mtok: 0, output_mtok: 0 } }
  - { id: gpt-4o-eu, family: openai, deployments: [{ provider: azure, upstream_id: my-gpt-4o }] }
  - { id: groq-llama, family: openai, deployments: [{ provider: local, upstream_id: llama-3.3-70b }], price: { input_mtok: 1, output_mtok: 1 } }
  - { id: my-finetune, family: openai, upstream_id: "ft:llama:acme::abc", aliases: [my-finetune-latest], deployments: [{ provider: local }], price: { input_mtok: 0, output_mtok: 0 } }
  - { id: mistral-small, family: openai, aliases: [mistral], deployments: [{ provider: local }], price: { input_mtok: 0, output_mtok: 0 } }
compat:
  cross_family: translate
`,
    env: { AZURE_KEY },
  })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const QUESTION = 'What is the capital of the UK?'
const ANSWER = 'The capital of the UK is London.'
const completion = { id: 'chatcmpl-local-1', object: 'chat.completion', created: 1, model: 'llama', choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }] }
const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-local-2', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const stream = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'The capital of the UK' }) + chunk({ content: ' is London.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'

function post(path: string, body: unknown) {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

async function record(id: string) {
  for (let i = 0; i < 50; i++) {
    const r = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
    if (r.status === 200) return ((await r.json()) as { generation: any }).generation
    await Bun.sleep(20)
  }
  throw new Error(`no record for ${id}`)
}

const last = (): RecordedRequest => up.requests.at(-1)!

test('chat: the compatible server gets the deployment\'s model id and no key; its missing usage is counted and recorded', async () => {
  up.script({ json: completion })
  const res = await post('/api/alpha/v1/chat/completions', { model: 'llama-3.1-8b', messages: [{ role: 'user', content: QUESTION }] })
  expect(res.status).toBe(200)
  const body = (await res.json()) as any
  expect(body.choices[0].message.content).toBe(ANSWER)
  const counted = { prompt_tokens: encode(QUESTION).length, completion_tokens: encode(ANSWER).length }
  expect(body.usage).toMatchObject({ ...counted, switchyard_counted: true })
  expect(last().path).toBe('/v1/chat/completions')
  expect(last().json().model).toBe('meta-llama/Llama-3.1-8B-Instruct')
  expect(last().headers.authorization).toBeUndefined()
  const g = await record(body.id)
  expect(g.model).toBe('llama-3.1-8b')
  expect(g.usage).toMatchObject({ ...counted, counted_by_gateway: true })
  expect(g.cost).toBe(0)
})

// an alias the config gives is another name for its model: the server knows the model by its
// upstream id (or its id), not by what a client called it; the record names the model
test('a configured alias goes to the server as its model does, on every surface', async () => {
  const cases = [
    ['my-finetune-latest', 'ft:llama:acme::abc', 'my-finetune'],
    ['my-finetune', 'ft:llama:acme::abc', 'my-finetune'],
    ['mistral', 'mistral-small', 'mistral-small'],
  ] as const
  for (const [asked, sent, recorded] of cases) {
    for (const path of ['/api/alpha/v1/chat/completions', '/api/beta/v1/messages', '/api/alpha/v1/responses']) {
      up.script({ json: { ...completion, id: `chatcmpl-alias-${asked}-${path.length}` } })
      const res = await post(path, { model: asked, max_tokens: 50, ...(path.endsWith('/responses') ? { input: QUESTION, max_tokens: undefined } : { messages: [{ role: 'user', content: QUESTION }] }) })
      expect(res.status).toBe(200)
      expect(last().json().model).toBe(sent)
    }
    expect((await record(`chatcmpl-alias-${asked}-${'/api/alpha/v1/chat/completions'.length}`)).model).toBe(recorded)
  }
})

test("a vLLM-style error body ({object: \"error\", message}) keeps its message for the client", async () => {
  const said = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
  for (const path of ['/api/alpha/v1/chat/completions', '/api/beta/v1/messages']) {
    up.script({ status: 400, json: { object: 'error', message: said, type: 'BadRequestError', param: null, code: 400 } })
    const res = await post(path, { model: 'llama-3.1-8b', max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] })
    expect(res.status).toBe(400)
    expect(JSON.stringify(await res.json())).toContain(said)
  }
})

test('chat, streamed: the counted usage reaches the record, and the client only when it asked for it', async () => {
  up.script({ sse: stream })
  const res = await post('/api/alpha/v1/chat/completions', { model: 'llama-3.1-8b', stream: true, messages: [{ role: 'user', content: QUESTION }] })
  expect(res.status).toBe(200)
  const text = await res.text()
  expect(text).toContain(' is London.')
  expect(text).not.toContain('"usage":{')
  expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
  const g = await record('chatcmpl-local-2')
  expect(g.usage).toMatchObject({ prompt_tokens: encode(QUESTION).length, completion_tokens: encode(ANSWER).length, counted_by_gateway: true })

  up.script({ sse: stream })
  const asked = await post('/api/alpha/v1/chat/completions', { model: 'llama-3.1-8b', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: QUESTION }] })
  expect(await asked.text()).toContain(`"usage":{"prompt_tokens":${encode(QUESTION).length},"completion_tokens":${encode(ANSWER).length}`)
})

// OpenAI's reasoning models refuse `stop`; another server's (a QwQ on vLLM) takes it
test('a reasoning model on the compatible server gets the stop sequences translated for it, on the chat pass-through and the IR path', async () => {
  up.script({ json: completion })
  expect((await post('/api/alpha/v1/chat/completions', { model: 'qwq-32b', messages: [{ role: 'user', content: QUESTION }], stop_sequences: ['END'] })).status).toBe(200)
  expect(last().json().stop).toEqual(['END'])
  up.script({ json: completion })
  expect((await post('/api/beta/v1/messages', { model: 'qwq-32b', max_tokens: 50, messages: [{ role: 'user', content: QUESTION }], stop_sequences: ['END'] })).status).toBe(200)
  expect(last().json().stop).toEqual(['END'])
})

test('messages and responses: translated to chat completions for the compatible server', async () => {
  up.script({ json: completion })
  const m = await post('/api/beta/v1/messages', { model: 'llama-3.1-8b', max_tokens: 100, messages: [{ role: 'user', content: QUESTION }] })
  expect(m.status).toBe(200)
  const msg = (await m.json()) as any
  expect(msg.content).toEqual([{ type: 'text', text: ANSWER }])
  expect(msg.usage.output_tokens).toBe(encode(ANSWER).length)
  expect(last().path).toBe('/v1/chat/completions')
  // the output cap under the name every compatible server reads
  expect(last().json().max_tokens).toBe(100)
  expect(last().json()).not.toHaveProperty('max_completion_tokens')
  // the record of a translated call says the count is the gateway's too
  expect((await record(msg.id)).usage.counted_by_gateway).toBe(true)

  up.script({ json: completion })
  const r = await post('/api/alpha/v1/responses', { model: 'llama-3.1-8b', input: QUESTION, store: false })
  expect(r.status).toBe(200)
  const resp = (await r.json()) as any
  expect(resp.status).toBe('completed')
  expect(resp.output.at(-1).content[0].text).toBe(ANSWER)
  expect(resp.usage.output_tokens).toBe(encode(ANSWER).length)
  // the compatible server has no /responses unless the provider says so
  expect(last().path).toBe('/v1/chat/completions')
})

test("another server's service_tier (Groq's flex) is not OpenAI's price: its tokens cost the model's own, relayed or translated", async () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 }
  // groq-llama is priced at $1 a million tokens each way: $0.002 whatever tier the server names
  for (const tier of ['flex', 'priority']) {
    up.script({ json: { ...completion, id: `chatcmpl-tier-${tier}`, service_tier: tier, usage } })
    const r = (await (await post('/api/alpha/v1/chat/completions', { model: 'groq-llama', messages: [{ role: 'user', content: QUESTION }] })).json()) as { id: string }
    expect((await record(r.id)).cost).toBeCloseTo(0.002, 12)
    const last = `data: ${JSON.stringify({ id: `chatcmpl-tier-s-${tier}`, object: 'chat.completion.chunk', created: 1, model: 'llama', service_tier: tier, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\n`
    up.script({ sse: `data: ${JSON.stringify({ id: `chatcmpl-tier-s-${tier}`, object: 'chat.completion.chunk', created: 1, model: 'llama', service_tier: tier, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] })}\n\n` + last + 'data: [DONE]\n\n' })
    await (await post('/api/alpha/v1/chat/completions', { model: 'groq-llama', stream: true, messages: [{ role: 'user', content: QUESTION }] })).text()
    expect((await record(`chatcmpl-tier-s-${tier}`)).cost).toBeCloseTo(0.002, 12)
    up.script({ json: { ...completion, id: `chatcmpl-tier-m-${tier}`, service_tier: tier, usage } })
    const m = (await (await post('/api/beta/v1/messages', { model: 'groq-llama', max_tokens: 100, messages: [{ role: 'user', content: QUESTION }] })).json()) as { id: string }
    expect((await record(m.id)).cost).toBeCloseTo(0.002, 12)
  }
})

test('azure-openai: the deployment path, api-version and api-key, never an Authorization header', async () => {
  up.script({ json: { ...completion, usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 } } })
  const res = await post('/api/alpha/v1/chat/completions', { model: 'gpt-4o-eu', messages: [{ role: 'user', content: QUESTION }] })
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 8 })
  expect(last().path).toBe('/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21')
  expect(last().headers['api-key']).toBe(AZURE_KEY)
  expect(last().headers.authorization).toBeUndefined()
})
