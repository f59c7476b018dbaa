// The OpenAI Agents SDK for JS (`@openai/agents` 0.20 with `zod` 4) against the gateway,
// offline, on the built-in mock: `setDefaultOpenAIClient` with an `OpenAI` client at
// `/api/alpha/v1`, tracing off, once with `setOpenAIAPI('responses')` and once with
// `'chat_completions'`, each with a GPT and a Claude model (`mock-gpt`, `mock-claude`):
// `run(agent, …)`, a streamed run read with `toTextStream()`, a function tool round trip
// (streamed too), structured output (`outputType` a zod object), a handoff to a second agent
// (streamed too), an agent as a tool, a stream failing midway, every model setting the SDK
// maps, `store: false`, multi-turn through `result.history` and through an `OpenAIConversationsSession`
// (the Conversations API keeps the items; a tool round trip, popItem, clearSession); on the
// responses API also through `previousResponseId` and `conversationId` (a name of its own, and a
// conversation made through the Conversations API first, whose items then hold each turn).
//
// How the mock drives the agent loop (docs/mock-provider.md): a line `mock: tool NAME ARGS`
// in the last user message makes it call that tool, and a request whose last item is a tool
// result is answered `tool result: <output>`. A handoff is the tool `transfer_to_<agent>`, so
// `mock: tool transfer_to_b {}` hands over, and agent B's answer is `tool result: {"assistant":"B"}`
// (the SDK's handoff output). Structured output: the mock answers a JSON schema format with a
// value built from the schema (the first enum value, "example" for a string …).
//
// Refusals by the specification, not run: for a Claude-family model the chat surface refuses
// `response_format` (so `outputType` there is checked to be that 400) and `store`, both
// surfaces `parallel_tool_calls` (the SDK's `parallelToolCalls`, §8) and a `reasoning.summary`
// other than `none` (§4.5), unless `compat.cross_family: translate`; the model-settings checks
// send a Claude model only what its family takes.
//
// Mock limits, not the gateway's: the mock answers from the last user message alone, so a
// continued turn cannot say what it remembers; the multi-turn checks compare the input tokens
// of the continued turn with the same turn sent alone (the history must be counted). A
// structured answer's integer is the least the schema allows as the mock builds it (zod 4's
// `.int()` bounds it at ±2^53−1, and the mock gives -9007199254740990, inside them), so
// only its string and enum fields are compared. Sampling settings are accepted and ignored.
//
// Not run in CI (the packages are fetched from npm); run it by hand:
//   bun scripts/clients/agents-sdk.ts        AGENTS_SDK_VERSIONS="@openai/agents@0.20.0 zod@4.6.7"
// The packages go into a cache dir outside the project (AGENTS_SDK_DIR, default
// ~/.cache/switchyard-agents-sdk), never into package.json. The gateway runs as `bun src/main.ts
// serve` on a free port, with a temp data dir, a known key and no upstream. AGENTS_SDK_DEBUG=1
// prints every request body the SDK sends. PASS/FAIL a line; the exit status is 1 when any failed.
import { homedir } from 'node:os'
import { join } from 'node:path'
import { checks, install, startGateway } from './harness.ts'

const cache = process.env.AGENTS_SDK_DIR ?? join(homedir(), '.cache', 'switchyard-agents-sdk')
const versions = (process.env.AGENTS_SDK_VERSIONS ?? '@openai/agents@0.20.0 zod@4.6.7').split(/\s+/).filter(Boolean)

await install(cache, versions)
const sdk = await import(join(cache, 'node_modules', '@openai', 'agents', 'dist', 'index.mjs'))
const { Agent, run, tool, user, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, OpenAIConversationsSession, startOpenAIConversationsSession } = sdk
const { z } = await import(join(cache, 'node_modules', 'zod', 'index.js'))
const { default: OpenAI } = await import(join(cache, 'node_modules', 'openai', 'index.mjs'))

const key = `sk-sy-agents-sdk-${crypto.randomUUID().replaceAll('-', '')}`
const gw = await startGateway(key, 'agents-sdk')
const debugFetch = async (input: string | URL | Request, init?: RequestInit) => {
  if (process.env.AGENTS_SDK_DEBUG) console.log(`  → ${init?.method ?? 'GET'} ${String(input)} ${typeof init?.body === 'string' ? init.body.slice(0, 4000) : ''}`)
  return fetch(input, init)
}
const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0, fetch: debugFetch })
setDefaultOpenAIClient(client)
setTracingDisabled(true)
console.log(`gateway on ${gw.url}; ${versions.join(', ')}`)

const { check, done } = checks(gw)
const same = (got: unknown, want: unknown) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  return typeof got === 'string' ? got : JSON.stringify(got)
}
// the input tokens of a run's first model call
const inputTokens = (r: { rawResponses: { usage: { inputTokens: number } }[] }) => r.rawResponses[0]?.usage.inputTokens ?? 0

const echo = tool({
  name: 'echo',
  description: 'echo the text back',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }: { text: string }) => `echoed ${text}`,
})
// every model setting the SDK maps for the API; a Claude model is sent those its family takes:
// the specification refuses for it, with a 400 naming them, the penalties and `parallel_tool_calls`,
// `store` on the chat surface (§8), and a `reasoning.summary` other than `none` (§4.5)
function settings(api: string, model: string) {
  const gpt = model.includes('gpt')
  const common = { temperature: 0.5, topP: 0.9, maxTokens: 200, toolChoice: 'auto', reasoning: { effort: 'low' }, promptCacheRetention: 'in-memory', promptCacheOptions: { mode: 'implicit' } }
  const openaiOnly = gpt ? { frequencyPenalty: 0.1, presencePenalty: 0.1, text: { verbosity: 'low' } } : {}
  const refused = { ...(gpt ? { parallelToolCalls: true } : {}), ...(gpt || api === 'responses' ? { store: true } : {}) }
  const responses = api === 'responses'
    ? { truncation: 'auto', reasoning: { effort: 'low', summary: gpt ? 'auto' : 'none', context: 'auto' }, contextManagement: [{ type: 'compaction', compactThreshold: 100_000 }] }
    : {}
  return { ...common, ...openaiOnly, ...refused, ...responses }
}
const Answer = z.object({ city: z.string(), mood: z.enum(['calm', 'busy']), count: z.number().int() })

for (const api of ['responses', 'chat_completions'] as const) {
  setOpenAIAPI(api)
  for (const model of ['mock-gpt', 'mock-claude']) {
    const at = `${api} ${model}`
    const agent = new Agent({ name: 'Assistant', instructions: 'be brief', model })
    await check(`${at} run`, async () => same((await run(agent, 'mock: text pong')).finalOutput, 'pong'))
    await check(`${at} run streamed (toTextStream)`, async () => {
      const r = await run(agent, 'mock: text ping pong', { stream: true })
      let text = ''
      for await (const d of r.toTextStream()) text += d
      await r.completed
      same(r.finalOutput, 'ping pong')
      return same(text, 'ping pong')
    })
    const withTool = new Agent({ name: 'Tooler', instructions: 'use tools', model, tools: [echo] })
    await check(`${at} function tool round trip`, async () => {
      const r = await run(withTool, 'mock: tool echo {"text":"hi"}')
      return same(r.finalOutput, 'tool result: echoed hi')
    })
    await check(`${at} function tool round trip streamed`, async () => {
      const r = await run(withTool, 'mock: tool echo {"text":"hi"}', { stream: true })
      let text = ''
      for await (const d of r.toTextStream()) text += d
      await r.completed
      return same(text, 'tool result: echoed hi')
    })
    // the chat surface refuses `response_format` for a Claude-family model (specification §8)
    // unless `compat.cross_family: translate`: the check passes when it is that 400, naming it
    const refused = api === 'chat_completions' && model.includes('claude')
    await check(`${at} structured output (outputType)${refused ? ' (refused by §8)' : ''}`, async () => {
      const typed = new Agent({ name: 'Typed', instructions: 'answer in the schema', model, outputType: Answer })
      try {
        const out = Answer.parse((await run(typed, 'describe a city')).finalOutput)
        if (refused) throw new Error('answered; expected the 400 naming response_format')
        same([out.city, out.mood], ['example', 'calm'])
        return JSON.stringify(out)
      } catch (e) {
        const err = e as { status?: number; message?: string }
        if (refused && err.status === 400 && err.message?.includes('response_format')) return `400 ${err.message}`
        throw e
      }
    })
    await check(`${at} handoff`, async () => {
      const b = new Agent({ name: 'B', instructions: 'you are B', model, handoffDescription: 'agent B' })
      const a = new Agent({ name: 'A', instructions: 'hand off to B', model, handoffs: [b] })
      const r = await run(a, 'mock: tool transfer_to_B {}')
      if (r.lastAgent?.name !== 'B') throw new Error(`last agent ${r.lastAgent?.name}`)
      return `last agent B: ${same(r.finalOutput, 'tool result: {"assistant":"B"}')}`
    })
    await check(`${at} handoff streamed`, async () => {
      const b = new Agent({ name: 'B', instructions: 'you are B', model })
      const r = await run(new Agent({ name: 'A', instructions: 'hand off to B', model, handoffs: [b] }), 'mock: tool transfer_to_B {}', { stream: true })
      let text = ''
      for await (const d of r.toTextStream()) text += d
      await r.completed
      if (r.lastAgent?.name !== 'B') throw new Error(`last agent ${r.lastAgent?.name}`)
      return `last agent B: ${same(text, 'tool result: {"assistant":"B"}')}`
    })
    await check(`${at} agent as a tool`, async () => {
      const sub = new Agent({ name: 'Sub', instructions: 'answer', model })
      const boss = new Agent({ name: 'Boss', instructions: 'ask', model, tools: [sub.asTool({ toolName: 'ask_sub', toolDescription: 'ask Sub' })] })
      return same((await run(boss, 'mock: tool ask_sub {"input":"mock: text inner"}')).finalOutput, 'tool result: inner')
    })
    await check(`${at} a stream failing midway rejects the run with the gateway's message`, async () => {
      const r = await run(agent, 'mock: text a b c\nmock: fail-midstream', { stream: true })
      try {
        for await (const _ of r.toTextStream());
        await r.completed
      } catch (e) {
        const m = String((e as Error).message)
        if (m.includes('simulated failure')) return m
        throw e
      }
      throw new Error(`no error; final output ${JSON.stringify(r.finalOutput)}`)
    })
    await check(`${at} model settings`, async () => {
      const tuned = new Agent({ name: 'Tuned', instructions: 'be brief', model, tools: [echo], modelSettings: settings(api, model) })
      return same((await run(tuned, 'mock: text tuned')).finalOutput, 'tuned')
    })
    await check(`${at} model settings streamed`, async () => {
      const tuned = new Agent({ name: 'Tuned', instructions: 'be brief', model, tools: [echo], modelSettings: settings(api, model) })
      const r = await run(tuned, 'mock: text tuned', { stream: true })
      let text = ''
      for await (const d of r.toTextStream()) text += d
      await r.completed
      return same(text, 'tuned')
    })
    await check(`${at} multi-turn with result.history`, async () => {
      const first = await run(agent, 'mock: text one')
      const alone = await run(agent, 'mock: text two')
      const r = await run(agent, [...first.history, user('mock: text two')])
      if (!(inputTokens(r) > inputTokens(alone))) throw new Error(`input tokens ${inputTokens(r)} continued, ${inputTokens(alone)} alone`)
      return `${same(r.finalOutput, 'two')} (${inputTokens(r)} input tokens, ${inputTokens(alone)} alone)`
    })
    await check(`${at} store: false, tool round trip and a turn after it from result.history`, async () => {
      const unstored = new Agent({ name: 'Unstored', instructions: 'use tools', model, tools: [echo], modelSettings: { store: model.includes('claude') && api === 'chat_completions' ? undefined : false } })
      const first = await run(unstored, 'mock: tool echo {"text":"hi"}')
      same(first.finalOutput, 'tool result: echoed hi')
      return same((await run(unstored, [...first.history, user('mock: text after')])).finalOutput, 'after')
    })
    // a session kept by the Conversations API: each run reads its items and adds its own
    await check(`${at} OpenAIConversationsSession across two runs`, async () => {
      const session = new OpenAIConversationsSession({ client })
      same((await run(agent, 'mock: text one', { session })).finalOutput, 'one')
      const alone = await run(agent, 'mock: text two')
      const r = await run(agent, 'mock: text two', { session })
      if (!(inputTokens(r) > inputTokens(alone))) throw new Error(`input tokens ${inputTokens(r)} in the session, ${inputTokens(alone)} alone`)
      const id = await session.getSessionId()
      const listed = (await client.conversations.items.list(id, { order: 'asc' })).data as { role?: string; content?: { text?: string }[] }[]
      same(listed.map((it) => `${it.role}: ${it.content?.map((c) => c.text).join('')}`), ['user: mock: text one', 'assistant: one', 'user: mock: text two', 'assistant: two'])
      return `${same(r.finalOutput, 'two')} (${id}: ${inputTokens(r)} input tokens, ${inputTokens(alone)} alone)`
    })
    await check(`${at} OpenAIConversationsSession: a tool round trip, a run after it, popItem and clearSession`, async () => {
      const session = new OpenAIConversationsSession({ client })
      same((await run(withTool, 'mock: tool echo {"text":"hi"}', { session })).finalOutput, 'tool result: echoed hi')
      same((await run(withTool, 'mock: text after', { session })).finalOutput, 'after')
      const items = (await session.getItems()) as { type?: string; role?: string }[]
      same(items.map((it) => it.type === 'message' ? it.role : it.type), ['user', 'function_call', 'function_call_result', 'assistant', 'user', 'assistant'])
      const popped = (await session.popItem()) as { role?: string }
      same(popped.role, 'assistant')
      same((await session.getItems()).length, 5)
      const id = await session.getSessionId()
      await session.clearSession()
      const gone = await client.conversations.retrieve(id).then(() => 200, (e: { status?: number }) => e.status)
      return `${same(gone, 404)} after clearSession`
    })
    if (api !== 'responses') continue
    await check(`${at} multi-turn with previousResponseId`, async () => {
      const first = await run(agent, 'mock: text one')
      if (!first.lastResponseId) throw new Error('no lastResponseId')
      const alone = await run(agent, 'mock: text two')
      const r = await run(agent, 'mock: text two', { previousResponseId: first.lastResponseId })
      if (!(inputTokens(r) > inputTokens(alone))) throw new Error(`input tokens ${inputTokens(r)} continued, ${inputTokens(alone)} alone`)
      return `${same(r.finalOutput, 'two')} (${inputTokens(r)} input tokens, ${inputTokens(alone)} alone)`
    })
    await check(`${at} multi-turn with conversationId`, async () => {
      const conversationId = `agents-sdk-${crypto.randomUUID()}`
      await run(agent, 'mock: text one', { conversationId })
      const alone = await run(agent, 'mock: text two')
      const r = await run(agent, 'mock: text two', { conversationId })
      if (!(inputTokens(r) > inputTokens(alone))) throw new Error(`input tokens ${inputTokens(r)} continued, ${inputTokens(alone)} alone`)
      return `${same(r.finalOutput, 'two')} (${inputTokens(r)} input tokens, ${inputTokens(alone)} alone)`
    })
    // a conversation made by the Conversations API first: each turn in it is added to it
    await check(`${at} multi-turn with conversationId of a conversation made first`, async () => {
      const conversationId = await startOpenAIConversationsSession(client)
      await run(agent, 'mock: text one', { conversationId })
      const alone = await run(agent, 'mock: text two')
      const r = await run(agent, 'mock: text two', { conversationId })
      if (!(inputTokens(r) > inputTokens(alone))) throw new Error(`input tokens ${inputTokens(r)} continued, ${inputTokens(alone)} alone`)
      const listed = (await client.conversations.items.list(conversationId, { order: 'asc' })).data as { role?: string }[]
      same(listed.map((it) => it.role), ['user', 'assistant', 'user', 'assistant'])
      return `${same(r.finalOutput, 'two')} (${inputTokens(r)} input tokens, ${inputTokens(alone)} alone)`
    })
    await check(`${at} tool round trip with previousResponseId`, async () => {
      const first = await run(agent, 'mock: text one')
      const r = await run(withTool, 'mock: tool echo {"text":"hi"}', { previousResponseId: first.lastResponseId })
      return same(r.finalOutput, 'tool result: echoed hi')
    })
  }
}

done()
