#!/usr/bin/env bun
// A scripted Anthropic upstream for scripts/clients/claude-code.sh, built on the test suite's
// fake upstream (test/helpers/fake-upstream.ts: SSE sent event by event, each event cut in
// two). Loopback only; prints `fake anthropic listening on <url>`, serves until killed.
//
//   bun scripts/clients/fake-anthropic.ts [--log FILE]
//
// POST /v1/messages (any query):
//   - the last user turn carries a tool_result (a trailing role:"system" message is skipped):
//     a streamed text reply `tool result: <the result's text>` (end_turn);
//   - else, the request offers a `Bash` tool: a streamed tool_use of Bash with
//     {"command":"echo sy-ok"} (stop_reason tool_use), its input in three pieces;
//   - else (a side call without tools): a streamed text reply `ok`.
//   `stream: false` (a client falling back to non-streaming) gets the same reply as one JSON
//   message; the log shows it, and claude-code.sh fails the run when it happens.
// POST /v1/messages/count_tokens: {"input_tokens": <body length / 4>}.
// With --log, every request is appended to FILE as one JSON line {method, path, headers, body}.
import { appendFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { startFakeUpstream, type RecordedRequest, type Reply } from '../../test/helpers/fake-upstream.ts'

const { values } = parseArgs({ options: { log: { type: 'string' } } })

type Block = { type?: string; [k: string]: any }

const sse = (events: Record<string, unknown>[]) => events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')

/** A tool result's text, without the <system-reminder> blocks Claude Code 2.1.3xx appends to it. */
function resultText(block: Block): string {
  const c = block.content
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.filter((b: Block) => b?.type === 'text').map((b: Block) => String(b.text)).join('\n') : ''
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').trim()
}

/** The tool results of the last user turn, or null when it has none. */
export function lastToolResults(messages: unknown): string[] | null {
  if (!Array.isArray(messages)) return null
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m?.role === 'system') continue
    if (m?.role !== 'user' || !Array.isArray(m.content)) return null
    const results = m.content.filter((b: Block) => b?.type === 'tool_result')
    return results.length ? results.map(resultText) : null
  }
  return null
}

let seq = 0
const newId = (prefix: string) => `${prefix}_fake_${Date.now().toString(36)}${(seq++).toString(36)}`

function message(model: string, content: Block[], stopReason: string, inputTokens: number, outputTokens: number): Reply {
  return { json: { id: newId('msg'), type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: outputTokens } } }
}

function streamed(model: string, block: Block, deltas: Block[], stopReason: string, inputTokens: number, outputTokens: number): Reply {
  return {
    sse: sse([
      { type: 'message_start', message: { id: newId('msg'), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: block },
      { type: 'ping' },
      ...deltas.map((delta) => ({ type: 'content_block_delta', index: 0, delta })),
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } },
      { type: 'message_stop' },
    ]),
  }
}

function text(model: string, body: string, stream: boolean, inputTokens: number): Reply {
  const out = Math.max(1, Math.ceil(body.length / 4))
  if (!stream) return message(model, [{ type: 'text', text: body }], 'end_turn', inputTokens, out)
  const words = body.match(/\s*\S+\s*/g) ?? [body]
  return streamed(model, { type: 'text', text: '' }, words.map((w) => ({ type: 'text_delta', text: w })), 'end_turn', inputTokens, out)
}

function bash(model: string, stream: boolean, inputTokens: number): Reply {
  const input = { command: 'echo sy-ok' }
  if (!stream) return message(model, [{ type: 'tool_use', id: newId('toolu'), name: 'Bash', input }], 'tool_use', inputTokens, 20)
  const args = JSON.stringify(input)
  const n = Math.ceil(args.length / 3)
  const pieces = [args.slice(0, n), args.slice(n, 2 * n), args.slice(2 * n)]
  return streamed(model, { type: 'tool_use', id: newId('toolu'), name: 'Bash', input: {} }, pieces.map((p) => ({ type: 'input_json_delta', partial_json: p })), 'tool_use', inputTokens, 20)
}

const error = (status: number, type: string, message: string): Reply => ({ status, json: { type: 'error', error: { type, message: `fake upstream: ${message}` } } })

function answer(req: RecordedRequest): Reply {
  if (values.log) appendFileSync(values.log, JSON.stringify({ method: req.method, path: req.path, headers: req.headers, body: req.body }) + '\n')
  const path = req.path.split('?')[0]!
  if (req.method !== 'POST') return error(404, 'not_found_error', `no route ${req.method} ${path}`)
  let body: any
  try {
    body = req.json()
  } catch {
    return error(400, 'invalid_request_error', 'the body is not JSON')
  }
  const inputTokens = Math.max(1, Math.ceil(req.body.length / 4))
  if (path === '/v1/messages/count_tokens') return { json: { input_tokens: inputTokens } }
  if (path !== '/v1/messages') return error(404, 'not_found_error', `no route POST ${path}`)
  const model = String(body?.model ?? 'claude-sonnet-4-5')
  const stream = body?.stream === true
  const results = lastToolResults(body?.messages)
  if (results) return text(model, results.map((r) => `tool result: ${r}`).join('\n'), stream, inputTokens)
  if (Array.isArray(body?.tools) && body.tools.some((t: Block) => t?.name === 'Bash')) return bash(model, stream, inputTokens)
  return text(model, 'ok', stream, inputTokens)
}

if (import.meta.main) {
  const up = await startFakeUpstream()
  up.script(answer)
  console.log(`fake anthropic listening on ${up.url}`)
  const stop = async () => {
    await up.stop()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.once('SIGINT', () => void stop())
}
