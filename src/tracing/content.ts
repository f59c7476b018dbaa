// Prompts and completions as the GenAI conventions' message lists (`{role, parts: [{type,
// content}…]}`), only for spans of a gateway configured with `tracing.capture_content: true`.
// Text and tool calls are carried; images, documents and audio are named by their type only.
// Each attribute is at most MAX_BYTES of UTF-8 and still JSON: its longest strings are cut,
// marked, until it fits (a span must stay small enough for a collector to take).
import type { Surface } from '../config/catalog.ts'

interface Part {
  type: string
  content?: unknown
  id?: unknown
  name?: unknown
  arguments?: unknown
  response?: unknown
}

interface Message {
  role: string
  parts: Part[]
  finish_reason?: string
}

export const MAX_BYTES = 32 * 1024
const CUT = '…[cut]'

type Block = Record<string, unknown> | null | undefined

function partOf(b: Block): Part {
  if (typeof b?.text === 'string') return { type: 'text', content: b.text }
  switch (b?.type) {
    case 'tool_use':
    case 'function_call':
      return { type: 'tool_call', id: b.id ?? b.call_id, name: b.name, arguments: b.input ?? b.arguments }
    case 'tool_result':
    case 'function_call_output':
      return { type: 'tool_call_response', id: b.tool_use_id ?? b.call_id, response: b.content ?? b.output }
    case 'thinking':
      return { type: 'reasoning', content: b.thinking }
    case 'refusal':
      return { type: 'text', content: b.refusal }
  }
  return { type: typeof b?.type === 'string' ? b.type : 'unknown' }
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', content }]
  return Array.isArray(content) ? content.map((b) => partOf(b as Block)) : []
}

/** A message of any surface: chat's (tool calls beside the content), messages', or a responses input item. */
function messageOf(m: Block): Message {
  if (typeof m?.role !== 'string') return { role: m?.type === 'function_call_output' ? 'tool' : 'assistant', parts: [partOf(m)] }
  const parts = m.role === 'tool' ? [{ type: 'tool_call_response', id: m.tool_call_id, response: m.content }] : partsOf(m.content)
  for (const c of Array.isArray(m.tool_calls) ? (m.tool_calls as Block[]) : []) {
    const fn = c?.function as Block
    parts.push({ type: 'tool_call', id: c?.id, name: fn?.name, arguments: fn?.arguments })
  }
  return { role: m.role, parts }
}

const messagesOf = (list: unknown): Message[] => (Array.isArray(list) ? list.map((m) => messageOf(m as Block)) : [])

/** `v` as JSON of at most MAX_BYTES: strings longer than a limit cut (the limit halved until it fits), then, if that is not enough, its last entries left out. */
export const capped = (v: unknown): string => {
  const text = JSON.stringify(v) ?? 'null'
  if (Buffer.byteLength(text) <= MAX_BYTES) return text
  for (let limit = MAX_BYTES / 2; limit >= 16; limit = Math.floor(limit / 2)) {
    const cut = JSON.stringify(cutStrings(v, limit, 0)) ?? 'null'
    if (Buffer.byteLength(cut) <= MAX_BYTES) return cut
  }
  // many small parts: as many of the messages as fit, whole
  const list = Array.isArray(v) ? (cutStrings(v, 16, 0) as unknown[]) : []
  while (list.length > 0 && Buffer.byteLength(JSON.stringify([...list, CUT])) > MAX_BYTES) list.length = Math.floor(list.length / 2)
  return JSON.stringify([...list, CUT])
}

/** Strings longer than `limit` characters cut to it, marked; at most 32 levels deep, past which a value is only marked. */
function cutStrings(v: unknown, limit: number, depth: number): unknown {
  if (typeof v === 'string') return v.length > limit ? safeSlice(v, limit) + CUT : v
  if (depth > 32) return CUT
  if (Array.isArray(v)) return v.map((x) => cutStrings(x, limit, depth + 1))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cutStrings(x, limit, depth + 1)]))
  return v
}

/** The first `n` UTF-16 units, never half of a surrogate pair. */
const safeSlice = (s: string, n: number) => (/[\uD800-\uDBFF]/.test(s.charAt(n - 1)) ? s.slice(0, n - 1) : s.slice(0, n))

/** The request's messages and its system instructions (messages' `system`, responses' `instructions`). */
export function inputContent(surface: Surface, body: Record<string, unknown>): { messages: string; system?: string } {
  const input = surface === 'responses' ? (typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input) : body.messages
  const system = surface === 'messages' ? body.system : surface === 'responses' ? body.instructions : undefined
  return { messages: capped(messagesOf(input)), system: system === undefined ? undefined : capped(partsOf(system)) }
}

/** The reply's message: a JSON reply of any surface (its object or its text), or a stream's produced text. */
export function outputContent(reply: string | Record<string, unknown>, stream: boolean, finishReason: string | null): string {
  const finish = finishReason ?? undefined
  const text = () => capped([{ role: 'assistant', parts: partsOf(reply), finish_reason: finish }])
  if (stream && typeof reply === 'string') return text()
  let j: Record<string, unknown>
  try {
    j = typeof reply === 'string' ? (JSON.parse(reply) as Record<string, unknown>) : reply
  } catch {
    return text()
  }
  if (Array.isArray(j.choices)) {
    return capped((j.choices as Block[]).map((c) => ({ ...messageOf(c?.message as Block), finish_reason: c?.finish_reason ?? finish })))
  }
  const items = Array.isArray(j.output) ? (j.output as Block[]).flatMap((o) => (o?.type === 'message' ? partsOf(o.content) : [partOf(o)])) : partsOf(j.content)
  return capped([{ role: 'assistant', parts: items, finish_reason: finish }])
}
