// Whole SSE events as raw text, for the pass-through relay: each event is forwarded byte
// for byte as soon as its blank line arrives, and the tap of its wire reads the fields.
// (The adapters' own parsing goes through eventsource-parser, which does not hand back
// the raw bytes a relay must forward.)

import type { TapState } from './contract.ts'

/** Index just past the first blank line (event end) in `buf`, or -1. */
export function eventEnd(buf: string): number {
  const a = buf.indexOf('\n\n')
  const b = buf.indexOf('\r\n\r\n')
  if (a < 0) return b < 0 ? -1 : b + 4
  if (b < 0 || a < b) return a + 2
  return b + 4
}

/** Splits upstream text into whole SSE events as they complete; nothing waits for the rest. */
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
  /** Whether no part of an event waits for the rest. */
  get empty(): boolean {
    return this.buf === ''
  }
  /** Whatever is left when the upstream closes (a last event with no blank line). */
  rest(): string {
    const r = this.buf
    this.buf = ''
    return r
  }
}

/** The `event:` name and joined `data:` lines of one raw event (data null when it has none). */
export function eventFields(raw: string): { event: string | null; data: string | null } {
  let data: string | null = null
  let event: string | null = null
  for (const line of raw.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line
    if (l.startsWith('data:')) {
      const v = l.charCodeAt(5) === 32 ? l.slice(6) : l.slice(5)
      data = data === null ? v : data + '\n' + v
    } else if (l.startsWith('event:')) event = l.slice(6).trim()
  }
  return { event, data }
}

export function parseJsonObject(text: string): Record<string, any> | null {
  try {
    const v = JSON.parse(text)
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null
  } catch {
    return null
  }
}

/**
 * A relayed event's data as a JSON object, for a tap; null for an event not to send on: one of
 * empty data (it says nothing, and a client's parser would fail on it), or one that is not a
 * JSON object, which is noted on the tap's state (relay.ts fails the stream there).
 */
export function eventJson(data: string, state: TapState): Record<string, any> | null {
  if (data.trim() === '') return null
  const j = parseJsonObject(data)
  if (!j) state.unreadable = true
  return j
}
