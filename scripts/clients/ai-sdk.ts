// The Vercel AI SDK (`ai` 7 with `@ai-sdk/openai` 4 and `@ai-sdk/anthropic` 4) against the
// gateway, offline, on the built-in mock (the key and address limits raised for its ~70 calls): every way the SDK reaches a model (`openai(m)` → the
// responses surface, `openai.chat(m)` → chat, `anthropic(m)` → messages), each with a GPT and
// a Claude model, through generateText, streamText, a tool round trip (generate and stream),
// a system prompt with earlier turns, and generateObject; a zod generateObject (output format and
// json tool) and a `strict: true` tool through the anthropic provider to a GPT model; a Claude
// model's web search kept by a `store: false` client; then uploadFile and a file part that
// refers to the upload (text and image), and experimental_startBatch → getBatchStatus →
// getBatchResults, on both providers.
//
// One answer is a refusal on purpose: generateObject on the chat surface with a Claude model
// sends `response_format`, which the specification (§8) refuses for Claude-family models
// unless `compat.cross_family: translate`; the check passes when it is that 400, naming it.
//
// Not run in CI (the packages are fetched from npm); run it by hand:
//   bun scripts/clients/ai-sdk.ts            AI_SDK_VERSIONS="ai@7.0.173 @ai-sdk/openai@4.0.118 @ai-sdk/anthropic@4.0.105"
// The packages go into a cache dir outside the project (AI_SDK_DIR, default
// ~/.cache/switchyard-ai-sdk), never into package.json. The gateway runs as `bun src/main.ts
// serve` on a free port, with a temp data dir, a known key and no upstream. PASS/FAIL a line;
// the exit status is 1 when any failed.
import { homedir } from 'node:os'
import { join } from 'node:path'
import { checks, install, startGateway } from './harness.ts'

const cache = process.env.AI_SDK_DIR ?? join(homedir(), '.cache', 'switchyard-ai-sdk')
const versions = (process.env.AI_SDK_VERSIONS ?? 'ai@7.0.173 @ai-sdk/openai@4.0.118 @ai-sdk/anthropic@4.0.105').split(/\s+/).filter(Boolean)

await install(cache, versions)
const { generateText, streamText, generateObject, tool, jsonSchema, stepCountIs, uploadFile, experimental_startBatch: startBatch, experimental_getBatchStatus: getBatchStatus, experimental_getBatchResults: getBatchResults } =
  await import(join(cache, 'node_modules', 'ai', 'dist', 'index.js'))
const { createOpenAI } = await import(join(cache, 'node_modules', '@ai-sdk', 'openai', 'dist', 'index.js'))
const { createAnthropic } = await import(join(cache, 'node_modules', '@ai-sdk', 'anthropic', 'dist', 'index.js'))
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const key = `sk-sy-ai-sdk-${crypto.randomUUID().replaceAll('-', '')}`
const gw = await startGateway(key, 'ai-sdk')
const openai = createOpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1` })
const anthropic = createAnthropic({ apiKey: key, baseURL: `${gw.url}/api/beta/v1` })
console.log(`gateway on ${gw.url}; ${versions.join(', ')}`)

const { check, done } = checks(gw)
const same = (got: string, want: string) => {
  if (got !== want) throw new Error(`got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  return got
}

const echo = tool({
  description: 'echo the text back',
  inputSchema: jsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
  execute: async ({ text }: { text: string }) => `echoed ${text}`,
})
const objectSchema = jsonSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false })

const ways: [string, (m: string) => unknown][] = [['responses', (m) => openai(m)], ['chat', (m) => openai.chat(m)], ['messages', (m) => anthropic(m)]]
for (const [surface, make] of ways) {
  for (const id of ['mock-gpt', 'mock-claude']) {
    const model = make(id)
    const at = `${surface} ${id}`
    await check(`${at} generateText`, async () => same((await generateText({ model, prompt: 'mock: text pong', maxRetries: 0 })).text, 'pong'))
    await check(`${at} streamText`, async () => {
      const r = streamText({ model, prompt: 'mock: text ping pong', maxRetries: 0, onError: ({ error }: { error: unknown }) => { throw error } })
      let text = ''
      for await (const d of r.textStream) text += d
      const u = await r.usage
      if (!(u.inputTokens > 0 && u.outputTokens > 0)) throw new Error(`usage ${JSON.stringify(u)}`)
      return same(text, 'ping pong')
    })
    await check(`${at} tool round trip`, async () => {
      const r = await generateText({ model, prompt: 'mock: tool echo {"text":"hi"}', tools: { echo }, stopWhen: stepCountIs(3), maxRetries: 0 })
      return same(r.text, 'tool result: echoed hi')
    })
    await check(`${at} tool round trip streamed`, async () => {
      const r = streamText({ model, prompt: 'mock: tool echo {"text":"hi"}', tools: { echo }, stopWhen: stepCountIs(3), maxRetries: 0, onError: ({ error }: { error: unknown }) => { throw error } })
      let text = ''
      for await (const d of r.textStream) text += d
      return same(text, 'tool result: echoed hi')
    })
    await check(`${at} system and earlier turns`, async () => {
      const r = await generateText({ model, system: 'be brief', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'mock: text ok' }], maxRetries: 0 })
      return same(r.text, 'ok')
    })
    const refused = surface === 'chat' && id.includes('claude')
    await check(`${at} generateObject${refused ? ' (refused by §8)' : ''}`, async () => {
      try {
        const r = await generateObject({ model, schema: objectSchema, prompt: 'mock: text {"a":"x"}', maxRetries: 0 })
        if (refused) throw new Error('answered; expected the 400 naming response_format')
        return same(JSON.stringify(r.object), '{"a":"x"}')
      } catch (e) {
        const err = e as { statusCode?: number; responseBody?: string }
        if (refused && err.statusCode === 400 && err.responseBody?.includes('response_format')) return `400 ${err.responseBody}`
        throw e
      }
    })
  }
}

// Structured output and strict tools with zod through the anthropic provider to a GPT model. The
// provider sends `output_config.format` only for a Claude model it knows, or when asked
// (`structuredOutputMode: 'outputFormat'`); its schema keeps zod's `$schema` and `default`s, which
// the gateway leaves out of the copy it sends with strict (OpenAI refuses `default`). The optional
// field's null the fitted schema makes the model write is taken out, so zod's `.optional()` takes
// the object. A tool's `strict: true` the provider drops itself for a model it does not know as a
// Claude model (a warning): no strict tool reaches the gateway that way.
const { z } = await import(join(cache, 'node_modules', 'zod', 'index.js'))
const note = z.object({ title: z.string(), note: z.string().optional(), unit: z.enum(['c', 'f']).default('c') })
await check('messages mock-gpt generateObject (zod, outputFormat): strict kept, the added null taken out', async () => {
  const r = await generateObject({ model: anthropic('mock-gpt'), schema: note, prompt: 'mock: text {"title":"x","note":null,"unit":"f"}', maxRetries: 0, providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } } })
  const compat = r.response?.headers?.['x-switchyard-compat'] ?? ''
  if (compat.includes('output_config.format.strict')) throw new Error(`strict left out: ${compat}`)
  return `${same(JSON.stringify(r.object), '{"title":"x","unit":"f"}')} (${compat})`
})
await check('messages mock-gpt generateObject (zod, default json tool): the object', async () => {
  const r = await generateObject({ model: anthropic('mock-gpt'), schema: note, prompt: 'mock: tool json {"title":"x","unit":"f"}', maxRetries: 0 })
  return same(JSON.stringify(r.object), '{"title":"x","unit":"f"}')
})
await check('messages mock-gpt tool strict: true: the provider drops strict itself (a warning), the call still made', async () => {
  const strictEcho = tool({ description: 'echo the text back', inputSchema: z.object({ text: z.string() }), strict: true, execute: async ({ text }: { text: string }) => `echoed ${text}` })
  const r = await generateText({ model: anthropic('mock-gpt'), prompt: 'mock: tool echo {"text":"hi"}', tools: { echo: strictEcho }, stopWhen: stepCountIs(3), maxRetries: 0 })
  const warned = (r.steps[0]?.warnings ?? r.warnings ?? []).some((w: { feature?: string }) => w.feature === 'strict')
  if (!warned) throw new Error(`no strict warning: ${JSON.stringify(r.warnings)}`)
  return same(r.text, 'tool result: echoed hi')
})

// A Claude model's web search, for a client that keeps the conversation itself (`store: false`
// with `include: ["reasoning.encrypted_content"]`): the search's blocks come sealed in a
// reasoning item of the gateway's after its web_search_call, and the SDK sends that back with the
// next turn (the gateway then gives Claude its search again; tests cover that side).
await check('responses mock-claude web search, store: false: the sealed search goes back with the next turn', async () => {
  const bodies: { input?: { type?: string; encrypted_content?: string }[] }[] = []
  const seen = createOpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, fetch: (url: string, init: RequestInit) => (bodies.push(JSON.parse(String(init.body))), fetch(url, init)) })
  const providerOptions = { openai: { store: false, include: ['reasoning.encrypted_content'] } }
  const tools = { web_search: seen.tools.webSearch({}) }
  const first = await generateText({ model: seen('mock-claude'), prompt: 'mock: search cats', tools, providerOptions, maxRetries: 0 })
  same(first.text, 'Results for cats.')
  const messages = [{ role: 'user', content: 'mock: search cats' }, ...first.response.messages, { role: 'user', content: 'mock: text done' }]
  same((await generateText({ model: seen('mock-claude'), messages, tools, providerOptions, maxRetries: 0 })).text, 'done')
  const sent = (bodies.at(-1)?.input ?? []).map((it) => (it.type === 'reasoning' ? `reasoning ${it.encrypted_content?.slice(0, 4)}` : (it.type ?? 'message')))
  return same(sent.join(', '), 'message, web_search_call, reasoning sy1., message, message')
})

const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))
const files: [string, Uint8Array][] = [['text/plain', new TextEncoder().encode('hello file')], ['image/png', png]]
for (const [name, provider, model] of [['openai responses', openai, openai('mock-gpt')], ['openai chat', openai, openai.chat('mock-gpt')], ['anthropic', anthropic, anthropic('mock-claude')]] as const) {
  for (const [mediaType, data] of files) {
    await check(`${name} uploadFile ${mediaType}, then a file part referring to it`, async () => {
      const f = await uploadFile({ api: provider, data, mediaType, filename: mediaType === 'image/png' ? 'dot.png' : 'note.txt' })
      const content = [{ type: 'file', data: { type: 'reference', reference: f.providerReference }, mediaType }, { type: 'text', text: 'mock: text seen' }]
      const r = await generateText({ model, maxRetries: 0, messages: [{ role: 'user', content }] })
      return `${JSON.stringify(f.providerReference)} → ${same(r.text, 'seen')}`
    })
  }
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'expired'])
for (const [name, provider, id] of [['openai', openai, 'mock-gpt'], ['anthropic', anthropic, 'mock-claude']] as const) {
  await check(`${name} startBatch → getBatchStatus → getBatchResults`, async () => {
    const batch = await startBatch({ provider, requests: [{ id: 'one', type: 'text', model: id, prompt: 'mock: text first' }, { id: 'two', type: 'text', model: id, prompt: 'mock: text second' }] })
    let status = batch
    for (let i = 0; i < 150 && !TERMINAL.has(status.status); i++) {
      await Bun.sleep(200)
      status = await getBatchStatus({ provider, batch })
    }
    if (status.status !== 'completed') throw new Error(`status ${JSON.stringify(status)}`)
    const texts: Record<string, string> = {}
    for await (const r of getBatchResults({ provider, batch })) texts[r.id] = r.status === 'succeeded' ? r.text : `${r.status}`
    return `${batch.id}: ${same(JSON.stringify(texts), JSON.stringify({ one: 'first', two: 'second' }))}`
  })
}

done()
