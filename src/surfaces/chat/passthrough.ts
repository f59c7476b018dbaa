// The OpenAI-family fast path: the checked chat body goes upstream as it is (minus
// what the gateway drops), and the upstream's bytes come back as they arrive. A tap
// reads only the id, usage and finish reason for the record. When the client did not
// ask for `include_usage`, the gateway asks upstream for it anyway (to bill) and strips
// the usage it did not ask for, so the client never sees it.
import type { Usage } from '../../ir/types.ts'
// the pass-through path relays the OpenAI chat wire: its usage mapping is the adapter's
import { usageFromOpenAI } from '../../providers/openai/usage.ts'
import type { RulesOutcome } from '../../routing/rules.ts'

type Body = Record<string, unknown>

export interface PassthroughBody {
  body: Body
  /** The client's own `stream_options.include_usage`. */
  clientWantsUsage: boolean
}

/**
 * What goes upstream. `prompt_cache_key` is dropped: prompt-cache scoping is internal
 * to the gateway (spec §4.4). Translated foreign parameters are spelled in chat terms.
 */
export function passthroughBody(checked: Body, rules: RulesOutcome): PassthroughBody {
  const body: Body = { ...checked }
  delete body.prompt_cache_key
  for (const k of rules.removed) delete body[k]
  const c = rules.counterpart
  if (c.stop?.length) {
    const own = body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : (body.stop as string[])
    body.stop = [...own, ...c.stop]
  }
  if (c.reasoning?.effort && body.reasoning_effort === undefined) body.reasoning_effort = c.reasoning.effort
  const so = (body.stream_options ?? {}) as Body
  const clientWantsUsage = so.include_usage === true
  if (body.stream === true && !clientWantsUsage) body.stream_options = { ...so, include_usage: true }
  else if (body.stream !== true) delete body.stream_options
  return { body, clientWantsUsage }
}

export interface Tap {
  id: string | null
  model: string | null
  usage: Usage | null
  finishReason: string | null
  /** `data: [DONE]` went by: the upstream finished the stream properly. */
  done: boolean
  /** A chunk with content (beyond the role-only opener) went by. */
  produced: boolean
}

export function newTap(): Tap {
  return { id: null, model: null, usage: null, finishReason: null, done: false, produced: false }
}

/** Reads id, usage and finish reason out of a non-streaming chat.completion body. */
export function tapJson(text: string, tap: Tap = newTap()): Tap {
  try {
    const j = JSON.parse(text)
    tap.id = typeof j.id === 'string' ? j.id : null
    tap.model = typeof j.model === 'string' ? j.model : null
    if (j.usage && typeof j.usage === 'object') tap.usage = usageFromOpenAI(j.usage)
    tap.finishReason = j.choices?.[0]?.finish_reason ?? null
    tap.produced = true
    tap.done = true
  } catch {
    // an upstream that answers 200 with something else: relayed as is, recorded without usage
  }
  return tap
}

/**
 * One SSE event (the text between blank lines) through the tap. Returns the event to
 * send on, or null to swallow it. JSON is parsed only for the events that can carry
 * what the tap needs: the first one (id), a finish reason, or usage.
 */
export function tapEvent(event: string, tap: Tap, stripUsage: boolean): string | null {
  const data = dataOf(event)
  if (data === null) return event
  if (data === '[DONE]') {
    tap.done = true
    return event
  }
  const hasUsage = data.includes('"usage"') && !data.includes('"usage":null')
  const hasFinish = data.includes('"finish_reason":"') || data.includes('"finish_reason": "')
  if (!tap.produced && (data.includes('"content":"') || data.includes('"tool_calls"'))) tap.produced = !data.includes('"content":""') || data.includes('"tool_calls"')
  if (tap.id === null || hasUsage || hasFinish) {
    let j: any
    try {
      j = JSON.parse(data)
    } catch {
      return event
    }
    if (tap.id === null && typeof j.id === 'string') {
      tap.id = j.id
      tap.model = typeof j.model === 'string' ? j.model : null
    }
    if (j.usage && typeof j.usage === 'object') tap.usage = usageFromOpenAI(j.usage)
    const fr = j.choices?.[0]?.finish_reason
    if (typeof fr === 'string') tap.finishReason = fr
    if (stripUsage && 'usage' in j) {
      if (Array.isArray(j.choices) && j.choices.length === 0) return null
      delete j.usage
      return `data: ${JSON.stringify(j)}\n\n`
    }
  }
  if (stripUsage && data.includes('"usage":null')) {
    // Compact JSON as OpenAI sends it: a top-level `"usage":null` member. A JSON string
    // cannot contain an unescaped quote, so this literal can only be that member.
    const i = event.indexOf(',"usage":null')
    if (i >= 0) return event.slice(0, i) + event.slice(i + ',"usage":null'.length)
    try {
      const j = JSON.parse(data)
      delete j.usage
      return `data: ${JSON.stringify(j)}\n\n`
    } catch {
      return event
    }
  }
  return event
}

function dataOf(event: string): string | null {
  let data: string | null = null
  for (const line of event.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line
    if (!l.startsWith('data:')) continue
    const v = l.charAt(5) === ' ' ? l.slice(6) : l.slice(5)
    data = data === null ? v : data + '\n' + v
  }
  return data
}

/** Index just past the first blank line (event end) in `buf`, or -1. */
export function eventEnd(buf: string): number {
  const a = buf.indexOf('\n\n')
  const b = buf.indexOf('\r\n\r\n')
  if (a < 0) return b < 0 ? -1 : b + 4
  if (b < 0 || a < b) return a + 2
  return b + 4
}

/**
 * Splits upstream text into whole SSE events as they complete. Bytes of an event are
 * sent as soon as its blank line arrives; nothing waits for the rest of the stream.
 */
export class EventSplitter {
  private buf = ''
  push(text: string): string[] {
    this.buf += text
    const out: string[] = []
    for (let end = eventEnd(this.buf); end >= 0; end = eventEnd(this.buf)) {
      out.push(this.buf.slice(0, end))
      this.buf = this.buf.slice(end)
    }
    return out
  }
  /** Whatever is left when the upstream closes (a last event with no blank line). */
  rest(): string {
    const r = this.buf
    this.buf = ''
    return r
  }
}

/** The text and tool-call arguments of relayed chat chunks, parsed only when needed. */
export function chatDeltaText(events: string[]): string {
  let text = ''
  for (const ev of events) {
    const data = dataOf(ev)
    if (data === null || data === '[DONE]') continue
    try {
      for (const c of JSON.parse(data).choices ?? []) {
        const d = c?.delta ?? {}
        if (typeof d.content === 'string') text += d.content
        if (typeof d.refusal === 'string') text += d.refusal
        for (const t of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
          if (typeof t?.function?.name === 'string') text += t.function.name
          if (typeof t?.function?.arguments === 'string') text += t.function.arguments
        }
      }
    } catch {
      // not a chat chunk: nothing to count
    }
  }
  return text
}

/** The prompt of a chat body as text: message contents, tool calls and tool definitions. */
export function chatPromptText(body: Body): string {
  const parts: string[] = []
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    const c = (m as Body).content
    if (typeof c === 'string') parts.push(c)
    else if (Array.isArray(c)) for (const p of c) if (typeof (p as Body)?.text === 'string') parts.push((p as Body).text as string)
    for (const t of Array.isArray((m as Body).tool_calls) ? ((m as Body).tool_calls as Body[]) : []) parts.push(JSON.stringify(t.function ?? ''))
  }
  if (Array.isArray(body.tools)) parts.push(JSON.stringify(body.tools))
  return parts.join('\n')
}
