#!/usr/bin/env bun
// A scripted upstream for scripts/clients/codex.sh, built on the test suite's fake upstream
// (test/helpers/fake-upstream.ts: SSE sent event by event, each event cut in two). It speaks
// both wires the gateway may call for a Codex request; loopback only; prints
// `fake upstream listening on <url>`, serves until killed.
//
//   bun scripts/clients/fake-codex-upstream.ts [--log FILE]
//
// POST …/responses (OpenAI's Responses API; the gateway's OPENAI_BASE_URL is <url>/v1):
//   - the input holds a function_call_output after its last user message: a streamed message
//     `tool result: <that output>`;
//   - else, the request offers an `exec_command` function: a streamed reasoning item (summary
//     and encrypted_content, as a GPT-5 model sends with `include: ["reasoning.encrypted_content"]`)
//     then a function_call of exec_command with {"cmd":"echo sy-ok"}, its arguments in three
//     pieces (shaped on test/fixtures/openai/responses/stream-reasoning-summary-function-call.sse);
//   - else, the request offers (directly, or in an additional_tools input item) the custom
//     tool `exec` (codex's code mode): the reasoning item, then a custom_tool_call of exec whose
//     input is JavaScript running exec_command with `echo sy-ok`;
//   - else: a streamed message `ok`.
//   Like OpenAI with store:false, it answers 400 when a reasoning item comes back with an
//   encrypted_content it did not hand out, and 404 when one comes back without it.
// POST /v1/messages (Anthropic; the gateway's ANTHROPIC_BASE_URL is <url>):
//   - the last user turn carries a tool_result: a streamed text `tool result: <its text>`;
//   - else, the request offers an `exec_command` tool: a streamed tool_use of it with
//     {"cmd":"echo sy-ok"} (stop_reason tool_use), after a signed thinking block when the
//     request turned thinking on;
//   - else: a streamed text `ok` (after a thinking block likewise).
//   Like Anthropic, it answers 400 when a thinking block comes back with another signature or
//   text than it was given, or when thinking is on and the last assistant turn holding tool_use
//   does not start with a thinking block (the gateway must carry Claude's thinking through
//   Codex's reasoning items and back).
// `stream: false` gets the same reply as one JSON object; the log shows it, and codex.sh fails
// the run when it happens. With --log, every request is appended to FILE as one JSON line
// {method, path, headers, body}.
import { appendFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { startFakeUpstream, type RecordedRequest, type Reply } from '../../test/helpers/fake-upstream.ts'
import { lastToolResults } from './fake-anthropic.ts'

const { values } = parseArgs({ options: { log: { type: 'string' } } })

type Obj = { [k: string]: any }

const ARGS = JSON.stringify({ cmd: 'echo sy-ok' })
const thirds = (s: string) => {
  const n = Math.ceil(s.length / 3)
  return [s.slice(0, n), s.slice(n, 2 * n), s.slice(2 * n)]
}
const words = (s: string) => s.match(/\s*\S+\s*/g) ?? [s]

let seq = 0
const newId = (prefix: string) => `${prefix}_fake${Date.now().toString(36)}${(seq++).toString(36)}`

// ---- OpenAI Responses ----------------------------------------------------------------------

/** The outputs of the function_call_output (or custom_tool_call_output) items after the input's last user message. */
export function functionOutputs(input: unknown): string[] {
  if (!Array.isArray(input)) return []
  const out: string[] = []
  for (let i = input.length - 1; i >= 0; i--) {
    const it = input[i] as Obj
    if (it?.type === 'function_call_output' || it?.type === 'custom_tool_call_output') {
      const o = it.output
      out.unshift(typeof o === 'string' ? o : Array.isArray(o) ? o.map((p: Obj) => (typeof p?.text === 'string' ? p.text : '')).join('') : JSON.stringify(o))
    } else if (it?.role === 'user' && (it.type === undefined || it.type === 'message')) break
  }
  return out
}

function responseObject(id: string, body: Obj, status: string, output: Obj[], usage: Obj | null): Obj {
  return {
    id, object: 'response', created_at: Math.floor(Date.now() / 1000), status, background: false, error: null,
    incomplete_details: null, instructions: null, max_output_tokens: null, max_tool_calls: null,
    model: String(body.model ?? 'gpt-5.1-codex'), output, parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null, prompt_cache_key: body.prompt_cache_key ?? null, reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: 'default', store: body.store ?? true, temperature: 1, text: { format: { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto', tools: [], top_p: 1, truncation: 'disabled', usage, user: null, metadata: {},
  }
}

/** Output items, each with the events that stream it (without sequence numbers). */
type Streamed = { item: Obj; events: Obj[] }

/** The encrypted_content this fake handed out, by reasoning item id. */
const sealed = new Map<string, string>()

function reasoningItem(index: number): Streamed {
  const id = newId('rs')
  const summary = 'Running the requested command.'
  const enc = 'gAAAAAB' + Buffer.from(`fake encrypted reasoning ${id}`).toString('base64')
  sealed.set(id, enc)
  const done = { id, type: 'reasoning', encrypted_content: enc, summary: [{ type: 'summary_text', text: summary }] }
  const base = { item_id: id, output_index: index, summary_index: 0 }
  return {
    item: done,
    events: [
      { type: 'response.output_item.added', output_index: index, item: { id, type: 'reasoning', encrypted_content: enc, summary: [] } },
      { type: 'response.reasoning_summary_part.added', ...base, part: { type: 'summary_text', text: '' } },
      ...words(summary).map((delta) => ({ type: 'response.reasoning_summary_text.delta', ...base, delta })),
      { type: 'response.reasoning_summary_text.done', ...base, text: summary },
      { type: 'response.reasoning_summary_part.done', ...base, part: { type: 'summary_text', text: summary } },
      { type: 'response.output_item.done', output_index: index, item: done },
    ],
  }
}

function functionCallItem(index: number): Streamed {
  const id = newId('fc')
  const call = { id, type: 'function_call', call_id: newId('call'), name: 'exec_command' }
  const done = { ...call, status: 'completed', arguments: ARGS }
  return {
    item: done,
    events: [
      { type: 'response.output_item.added', output_index: index, item: { ...call, status: 'in_progress', arguments: '' } },
      ...thirds(ARGS).map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta })),
      { type: 'response.function_call_arguments.done', item_id: id, output_index: index, arguments: ARGS },
      { type: 'response.output_item.done', output_index: index, item: done },
    ],
  }
}

/**
 * Codex's code mode (its default model, 0.169): the only way to run a command is the custom
 * tool `exec`, whose input is JavaScript calling the nested tools.
 */
export const EXEC_SCRIPT = 'const r = await tools.exec_command({ cmd: "echo sy-ok" });\ntext(r);'

function customCallItem(index: number): Streamed {
  const id = newId('ctc')
  const call = { id, type: 'custom_tool_call', call_id: newId('call'), name: 'exec' }
  const done = { ...call, status: 'completed', input: EXEC_SCRIPT }
  return {
    item: done,
    events: [
      { type: 'response.output_item.added', output_index: index, item: { ...call, status: 'in_progress', input: '' } },
      ...thirds(EXEC_SCRIPT).map((delta) => ({ type: 'response.custom_tool_call_input.delta', item_id: id, output_index: index, delta })),
      { type: 'response.custom_tool_call_input.done', item_id: id, output_index: index, input: EXEC_SCRIPT },
      { type: 'response.output_item.done', output_index: index, item: done },
    ],
  }
}

/** The request's tools, with those an `additional_tools` input item hands over (namespaces opened). */
function offeredTools(body: Obj): Obj[] {
  const handed = (Array.isArray(body.input) ? body.input : []).flatMap((it: Obj) => (it?.type === 'additional_tools' && Array.isArray(it.tools) ? it.tools : []))
  const all: Obj[] = [...(Array.isArray(body.tools) ? body.tools : []), ...handed]
  return all.flatMap((t) => (t?.type === 'namespace' && Array.isArray(t.tools) ? t.tools : [t]))
}

function messageItem(index: number, text: string): Streamed {
  const id = newId('msg')
  const part = { type: 'output_text', annotations: [], logprobs: [], text }
  const done = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] }
  const base = { item_id: id, output_index: index, content_index: 0 }
  return {
    item: done,
    events: [
      { type: 'response.output_item.added', output_index: index, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...base, part: { ...part, text: '' } },
      ...words(text).map((delta) => ({ type: 'response.output_text.delta', ...base, delta, logprobs: [] })),
      { type: 'response.output_text.done', ...base, text, logprobs: [] },
      { type: 'response.content_part.done', ...base, part },
      { type: 'response.output_item.done', output_index: index, item: done },
    ],
  }
}

function responsesReply(body: Obj, items: Streamed[], inputTokens: number): Reply {
  const id = newId('resp')
  const output = items.map((s) => s.item)
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(output).length / 4))
  const reasoningTokens = output.some((it) => it.type === 'reasoning') ? 8 : 0
  const usage = {
    input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: reasoningTokens }, total_tokens: inputTokens + outputTokens,
  }
  const final = responseObject(id, body, 'completed', output, usage)
  if (body.stream !== true) return { json: final }
  const events = [
    { type: 'response.created', response: responseObject(id, body, 'in_progress', [], null) },
    { type: 'response.in_progress', response: responseObject(id, body, 'in_progress', [], null) },
    ...items.flatMap((s) => s.events),
    { type: 'response.completed', response: final },
  ]
  return { sse: events.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ type: e.type, sequence_number: i, ...e })}\n\n`).join('') }
}

/**
 * OpenAI's checks on reasoning items sent back: one with its encrypted_content must carry
 * what was handed out; one without can only be found when it was stored (never, here: Codex
 * sends store:false, and so does the gateway with its own threads).
 */
function reasoningProblem(body: Obj): Reply | null {
  for (const it of Array.isArray(body.input) ? body.input : []) {
    if (it?.type !== 'reasoning') continue
    if (typeof it.encrypted_content === 'string') {
      if (![...sealed.values()].includes(it.encrypted_content)) return { status: 400, json: { error: { message: `The encrypted content for item ${it.id ?? '(no id)'} could not be verified.`, type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } } }
    } else {
      return { status: 404, json: { error: { message: `Item with id '${it.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, type: 'invalid_request_error', param: 'input', code: null } } }
    }
  }
  return null
}

function responses(body: Obj, inputTokens: number): Reply {
  const problem = reasoningProblem(body)
  if (problem) return problem
  const outputs = functionOutputs(body.input)
  if (outputs.length) return responsesReply(body, [messageItem(0, outputs.map((o) => `tool result: ${o}`).join('\n'))], inputTokens)
  const tools = offeredTools(body)
  if (tools.some((t) => t?.type === 'function' && t.name === 'exec_command')) return responsesReply(body, [reasoningItem(0), functionCallItem(1)], inputTokens)
  if (tools.some((t) => t?.type === 'custom' && t.name === 'exec')) return responsesReply(body, [reasoningItem(0), customCallItem(1)], inputTokens)
  return responsesReply(body, [messageItem(0, 'ok')], inputTokens)
}

// ---- Anthropic Messages --------------------------------------------------------------------

/** Signatures this fake handed out, by the thinking text they sign (as Anthropic's are bound to it). */
const signatures = new Map<string, string>()

type Block = { start: Obj; deltas: Obj[]; full: Obj }

function thinkingBlock(): Block {
  const thinking = 'The user wants me to run echo sy-ok with exec_command.'
  const signature = 'EqQB' + Buffer.from(`fake signature ${newId('sig')}`).toString('base64')
  signatures.set(signature, thinking)
  return {
    start: { type: 'thinking', thinking: '', signature: '' },
    deltas: [...words(thinking).map((t) => ({ type: 'thinking_delta', thinking: t })), { type: 'signature_delta', signature }],
    full: { type: 'thinking', thinking, signature },
  }
}

function textBlock(text: string): Block {
  return { start: { type: 'text', text: '' }, deltas: words(text).map((w) => ({ type: 'text_delta', text: w })), full: { type: 'text', text } }
}

function toolUseBlock(): Block {
  const id = newId('toolu')
  return {
    start: { type: 'tool_use', id, name: 'exec_command', input: {} },
    deltas: thirds(ARGS).map((p) => ({ type: 'input_json_delta', partial_json: p })),
    full: { type: 'tool_use', id, name: 'exec_command', input: JSON.parse(ARGS) },
  }
}

function messagesReply(body: Obj, blocks: Block[], stopReason: string, inputTokens: number): Reply {
  const model = String(body.model ?? 'claude-sonnet-4-5')
  const id = newId('msg')
  const content = blocks.map((b) => b.full)
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(content).length / 4))
  if (body.stream !== true) {
    return { json: { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: outputTokens } } }
  }
  const events: Obj[] = [
    { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } },
    ...blocks.flatMap((b, index) => [
      { type: 'content_block_start', index, content_block: b.start },
      ...(index === 0 ? [{ type: 'ping' }] : []),
      ...b.deltas.map((delta) => ({ type: 'content_block_delta', index, delta })),
      { type: 'content_block_stop', index },
    ]),
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } },
    { type: 'message_stop' },
  ]
  return { sse: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('') }
}

const invalid = (message: string): Reply => ({ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message } } })

/**
 * Anthropic's checks on returned thinking: with thinking on, the last assistant turn that
 * holds tool_use must start with a thinking (or redacted_thinking) block, and a thinking block
 * must come back with the signature it was given, its text unchanged.
 */
function thinkingProblem(body: Obj): Reply | null {
  const msgs: Obj[] = Array.isArray(body.messages) ? body.messages : []
  for (const [i, m] of msgs.entries()) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue
    for (const [j, b] of m.content.entries()) {
      if (b?.type === 'thinking' && signatures.get(b.signature) !== b.thinking) return invalid(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`)
    }
  }
  if (body.thinking?.type !== 'enabled') return null
  const i = msgs.findLastIndex((m) => m?.role === 'assistant')
  const first = msgs[i]?.content?.[0]
  if (i >= 0 && Array.isArray(msgs[i].content) && msgs[i].content.some((b: Obj) => b?.type === 'tool_use') && first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
    return invalid(
      `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
    )
  }
  return null
}

function messages(body: Obj, inputTokens: number): Reply {
  const problem = thinkingProblem(body)
  if (problem) return problem
  const thinking = body.thinking?.type === 'enabled' ? [thinkingBlock()] : []
  const results = lastToolResults(body.messages)
  if (results) return messagesReply(body, [textBlock(results.map((r) => `tool result: ${r}`).join('\n'))], 'end_turn', inputTokens)
  const tools: Obj[] = Array.isArray(body.tools) ? body.tools : []
  if (tools.some((t) => t?.name === 'exec_command')) return messagesReply(body, [...thinking, toolUseBlock()], 'tool_use', inputTokens)
  return messagesReply(body, [...thinking, textBlock('ok')], 'end_turn', inputTokens)
}

// ---- server --------------------------------------------------------------------------------

const notFound = (path: string): Reply => ({ status: 404, json: { error: { type: 'not_found_error', message: `fake upstream: no route ${path}` } } })

function answer(req: RecordedRequest): Reply {
  if (values.log) appendFileSync(values.log, JSON.stringify({ method: req.method, path: req.path, headers: req.headers, body: req.body }) + '\n')
  const path = req.path.split('?')[0]!
  if (req.method !== 'POST') return notFound(`${req.method} ${path}`)
  let body: Obj
  try {
    body = req.json()
  } catch {
    return { status: 400, json: { error: { type: 'invalid_request_error', message: 'fake upstream: the body is not JSON' } } }
  }
  const inputTokens = Math.max(1, Math.ceil(req.body.length / 4))
  if (path.endsWith('/responses')) return responses(body, inputTokens)
  if (path === '/v1/messages') return messages(body, inputTokens)
  return notFound(`POST ${path}`)
}

if (import.meta.main) {
  const up = await startFakeUpstream()
  up.script(answer)
  console.log(`fake upstream listening on ${up.url}`)
  const stop = async () => {
    await up.stop()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.once('SIGINT', () => void stop())
}
