// Prompts and completions as the GenAI conventions' message lists (`{role, parts: [{type,
// content}…]}`), only for spans of a gateway configured with `tracing.capture_content: true`.
// Text and tool calls are carried; images, documents and audio are named by their type only.
// Each attribute is cut at MAX_CHARS: a span must stay small enough to export.
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

export const MAX_CHARS = 128 * 1024

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

export const capped = (v: unknown): string => {
  const text = JSON.stringify(v)
  return text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text
}

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
