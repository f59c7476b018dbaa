// LangChain JS's chat model clients (`@langchain/openai` 1 and `@langchain/anthropic` 1 on
// `@langchain/core` 1) against the gateway, offline, on the built-in mock: `ChatOpenAI` on the
// chat surface and with `useResponsesApi: true` on the responses surface, and `ChatAnthropic`
// on the messages surface, each with a GPT and a Claude model, through invoke (usage metadata
// on the AIMessage), stream, bindTools and a ToolMessage round trip (invoked and streamed),
// withStructuredOutput(zod) by json schema (also streamed) and by function calling, an image
// content block, batch, and on the messages surface thinking (invoked and streamed).
//
// Answers that are refusals on purpose (the check passes when it is that 400, naming the field):
// - withStructuredOutput's json schema method on the chat surface with a Claude model sends
//   `response_format`, which the specification (§8) refuses for Claude-family models unless
//   `compat.cross_family: translate`.
// - `thinking` with a GPT model on the messages surface: an Anthropic-only parameter, refused
//   for OpenAI-family models in the default reject mode.
// What the mock cannot show (its limits, not the gateway's):
// - it never thinks: a thinking request is answered with text alone, no thinking block, so the
//   check only asks that the request is taken and answered.
// - a forced tool call (function-calling structured output) or a JSON format gets a value built
//   from the schema (`"example"`, 0, false…), not one read from the prompt: the checks compare
//   with that, and with the value a `mock: text` / `mock: tool extract` directive asks for.
// - one tool call a reply: two `mock: tool` lines give the first call only, so parallel calls
//   are not checked; nor are logprobs (the mock gives none: `logprobs: null`).
// Not checked, because LangChain itself fails there whatever the server (the gateway's stream
// is the provider's shape event for event):
// - `.stream()` of withStructuredOutput by function calling with `useResponsesApi: true`: the
//   tool-call chunks carry array content and LangChain's JSON tool parser throws "Cannot handle
//   non-string output" (invoke works, and so does streaming on the chat surface).
// - the same with ChatAnthropic: @langchain/core 1.4.0 will not merge the `tool_use` block
//   with its `input_json_delta` blocks (their types differ), so the parser reads the empty
//   input of `content_block_start` and throws "Failed to parse" (the streamed tool_calls, which
//   the round trip uses, are whole).
// Also seen: a responses-surface reply that calls tools says `status: "requires_action"` (the
// specification's default; `responses.tool_calls_status: completed` gives OpenAI's) — LangChain
// reads the calls either way.
//
// Not run in CI (the packages are fetched from npm); run it by hand:
//   bun scripts/clients/langchain.ts
//   LANGCHAIN_VERSIONS="@langchain/openai@1.6.0 @langchain/anthropic@1.5.11 @langchain/core@1.4.0 zod@4.6.7"
// The packages go into a cache dir outside the project (LANGCHAIN_DIR, default
// ~/.cache/switchyard-langchain), never into package.json. The gateway runs as `bun src/main.ts
// serve` on a free port, with a temp data dir, a known key and no upstream. PASS/FAIL a line;
// the exit status is 1 when any failed.
import { homedir } from 'node:os'
import { join } from 'node:path'
import { checks, install, startGateway } from './harness.ts'

const cache = process.env.LANGCHAIN_DIR ?? join(homedir(), '.cache', 'switchyard-langchain')
const versions = (process.env.LANGCHAIN_VERSIONS ?? '@langchain/openai@1.6.0 @langchain/anthropic@1.5.11 @langchain/core@1.4.0 zod@4.6.7').split(/\s+/).filter(Boolean)

await install(cache, versions)
const lib = (...p: string[]) => import(join(cache, 'node_modules', ...p))
const { ChatOpenAI } = await lib('@langchain', 'openai', 'dist', 'index.js')
const { ChatAnthropic } = await lib('@langchain', 'anthropic', 'dist', 'index.js')
const { HumanMessage, ToolMessage } = await lib('@langchain', 'core', 'dist', 'messages', 'index.js')
const { tool } = await lib('@langchain', 'core', 'dist', 'tools', 'index.js')
const { z } = await lib('zod', 'index.js')

const key = `sk-sy-langchain-${crypto.randomUUID().replaceAll('-', '')}`
const gw = await startGateway(key, 'langchain')
console.log(`gateway on ${gw.url}; ${versions.join(', ')}`)

const { check, done } = checks(gw)
const same = (got: unknown, want: unknown) => {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)]
  if (g !== w) throw new Error(`got ${g}, want ${w}`)
  return g
}
// a refusal on purpose: the 400 naming the field, or the check fails
async function refused(field: string, f: () => Promise<unknown>) {
  try {
    await f()
  } catch (e) {
    const err = e as { status?: number; message?: string }
    if (err.status === 400 && String(err.message).includes(field)) return `400 ${String(err.message)}`
    throw e
  }
  throw new Error(`answered; expected the 400 naming ${field}`)
}
type Msg = { content: unknown; text?: string; tool_calls?: { id: string; name: string; args: unknown }[]; usage_metadata?: { input_tokens: number; output_tokens: number; total_tokens: number } }
const textOf = (m: Msg) => typeof m.content === 'string' ? m.content : (m.content as { type: string; text?: string }[]).filter((b) => b.type === 'text').map((b) => b.text).join('')
function usage(m: Msg) {
  const u = m.usage_metadata
  if (!(u && u.input_tokens > 0 && u.output_tokens > 0 && u.total_tokens === u.input_tokens + u.output_tokens)) throw new Error(`usage_metadata ${JSON.stringify(u)}`)
  return `${u.input_tokens}+${u.output_tokens}`
}
async function streamed(s: AsyncIterable<Msg & { concat(o: unknown): Msg }>) {
  let all: (Msg & { concat(o: unknown): Msg }) | undefined
  let n = 0
  for await (const c of s) { all = all ? all.concat(c) as typeof all : c; n++ }
  if (!all || n < 2) throw new Error(`${n} chunks`)
  return all
}

const echo = tool(async ({ text }: { text: string }) => `echoed ${text}`, { name: 'echo', description: 'echo the text back', schema: z.object({ text: z.string() }) })
const Person = z.object({ name: z.string(), age: z.number() })
// what the mock builds from Person's schema for a forced call or a JSON format
const builtPerson = { name: 'example', age: 0 }
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='

const makers: [string, (model: string, extra?: object) => any][] = [
  ['chat', (model, extra) => new ChatOpenAI({ model, apiKey: key, maxRetries: 0, configuration: { baseURL: `${gw.url}/api/alpha/v1` }, ...extra })],
  ['responses', (model, extra) => new ChatOpenAI({ model, apiKey: key, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${gw.url}/api/alpha/v1` }, ...extra })],
  ['messages', (model, extra) => new ChatAnthropic({ model, apiKey: key, maxRetries: 0, anthropicApiUrl: `${gw.url}/api/beta`, ...extra })],
]

for (const [surface, make] of makers) {
  for (const id of ['mock-gpt', 'mock-claude']) {
    const llm = make(id)
    const at = `${surface} ${id}`
    await check(`${at} invoke, usage metadata`, async () => {
      const m: Msg = await llm.invoke('mock: text pong')
      return `${same(textOf(m), 'pong')} ${usage(m)}`
    })
    await check(`${at} stream, usage metadata`, async () => {
      const m = await streamed(await llm.stream('mock: text ping pong'))
      return `${same(textOf(m), 'ping pong')} ${usage(m)}`
    })
    for (const how of ['invoke', 'stream'] as const) {
      await check(`${at} bindTools ${how}, ToolMessage round trip`, async () => {
        const withTools = llm.bindTools([echo])
        const ask = new HumanMessage('mock: tool echo {"text":"hi"}')
        const call: Msg = how === 'invoke' ? await withTools.invoke([ask]) : await streamed(await withTools.stream([ask]))
        const tc = call.tool_calls?.[0]
        same({ name: tc?.name, args: tc?.args }, { name: 'echo', args: { text: 'hi' } })
        const result = await echo.invoke(tc)
        const answer: Msg = how === 'invoke' ? await withTools.invoke([ask, call, result]) : await streamed(await withTools.stream([ask, call, result]))
        if (!(result instanceof ToolMessage)) throw new Error('the tool gave no ToolMessage')
        return `${tc!.id} → ${same(textOf(answer), 'tool result: echoed hi')}`
      })
    }
    const methods = surface === 'messages' ? ['functionCalling', 'jsonSchema'] : ['jsonSchema', 'functionCalling']
    for (const method of methods) {
      const refusal = surface === 'chat' && id.includes('claude') && method === 'jsonSchema'
      await check(`${at} withStructuredOutput ${method}${refusal ? ' (refused by §8)' : ''}`, async () => {
        const structured = llm.withStructuredOutput(Person, { method })
        // the directive's value, then (no directive) the one the mock builds from the schema
        const directed = method === 'jsonSchema' ? 'mock: text {"name":"Ann","age":3}' : 'mock: tool extract {"name":"Ann","age":3}'
        if (refusal) return refused('response_format', () => structured.invoke(directed))
        return `${same(await structured.invoke(directed), { name: 'Ann', age: 3 })} ${same(await structured.invoke('who is Ann?'), builtPerson)}`
      })
    }
    const chatClaude = surface === 'chat' && id.includes('claude')
    await check(`${at} withStructuredOutput jsonSchema streamed${chatClaude ? ' (refused by §8)' : ''}`, async () => {
      const run = async () => {
        const parts: unknown[] = []
        for await (const p of await llm.withStructuredOutput(Person, { method: 'jsonSchema' }).stream('mock: text {"name":"Ann","age":3}')) parts.push(p)
        return parts.at(-1)
      }
      if (chatClaude) return refused('response_format', run)
      return same(await run(), { name: 'Ann', age: 3 })
    })
    await check(`${at} image content block`, async () => {
      const m: Msg = await llm.invoke([new HumanMessage({ contentBlocks: [{ type: 'text', text: 'mock: text seen' }, { type: 'image', mimeType: 'image/png', data: png }] })])
      return same(textOf(m), 'seen')
    })
    await check(`${at} batch`, async () => {
      const ms: Msg[] = await llm.batch(['mock: text one', 'mock: text two', 'mock: text three'])
      return same(ms.map(textOf), ['one', 'two', 'three'])
    })
    if (surface === 'messages') {
      const gpt = !id.includes('claude')
      await check(`${at} thinking${gpt ? ' (refused for a GPT model)' : ''}`, async () => {
        const thinker = make(id, { maxTokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } })
        const run = async () => textOf(await thinker.invoke('mock: text thought'))
        if (gpt) return refused('thinking', run)
        return `${same(await run(), 'thought')} ${same(textOf(await streamed(await thinker.stream('mock: text still thought'))), 'still thought')}`
      })
    }
  }
}

done()
