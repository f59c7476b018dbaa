// Whole SSE events as raw text, for the pass-through relay: each event is forwarded byte
// for byte as soon as its blank line arrives, and the tap of its wire reads the fields.
// (The adapters' own parsing goes through eventsource-parser, which does not hand back
// the raw bytes a relay must forward.)

import type { TapState } from './contract.ts'
import { UpstreamError } from '../ir/errors.ts'

/**
 * The event ends (each index just past a blank line) in `buf` from `from` on, in order. Each kind
 * of blank line is searched for once past the last end: one that does not occur (a real upstream
 * never sends CRLF) is not searched for again at every event, which made a read's split
 * quadratic in its events (a 3.5 MB read of 20,000 events held the thread 1.3 s).
 */
function eventEnds(buf: string, from: number, out: number[]): number[] {
  let a = buf.indexOf('\n\n', from)
  let b = buf.indexOf('\r\n\r\n', from)
  while (a >= 0 || b >= 0) {
    const end = a >= 0 && (b < 0 || a < b) ? a + 2 : b + 4
    out.push(end)
    if (a >= 0 && a < end) a = buf.indexOf('\n\n', end)
    if (b >= 0 && b < end) b = buf.indexOf('\r\n\r\n', end)
  }
  return out
}

/** Index just past the first blank line (event end) in `buf`, or -1. */
function eventEnd(buf: string): number {
  const a = buf.indexOf('\n\n')
  const b = buf.indexOf('\r\n\r\n')
  if (a < 0) return b < 0 ? -1 : b + 4
  if (b < 0 || a < b) return a + 2
  return b + 4
}

/** The largest SSE event an upstream may send (a generated image's partial in base64 is a few MB). */
export const MAX_EVENT_CHARS = 64 * 1024 * 1024
/**
 * The most text one upstream stream may send: far past any real one (128k tokens of deltas with
 * their log probabilities is some tens of MB). A stream that goes on past it (a compressed
 * stream inflating without end, an upstream that never stops) ends there with an error.
 */
export const MAX_STREAM_CHARS = 1024 * 1024 * 1024

/**
 * Splits upstream text into whole SSE events as they complete; nothing waits for the rest. The
 * part of an event read so far is kept in pieces and only the new text is searched for its end
 * (with the 3 characters before it, where a blank line may begin): a 20 MB event arriving in
 * 64 KiB reads was searched and copied whole at every read. An event past `max` characters is
 * refused (an upstream that never ends one held memory until the process had none), and so is
 * a stream past `maxTotal` characters.
 */
export class EventSplitter {
  private parts: string[] = []
  private size = 0
  private total = 0
  /** The last 3 characters of what waits (no event's end is in it). */
  private tail = ''
  constructor(
    private readonly max = MAX_EVENT_CHARS,
    private readonly maxTotal = MAX_STREAM_CHARS,
  ) {}

  push(text: string): string[] {
    const out: string[] = []
    if (text === '') return out
    this.total += text.length
    if (this.total > this.maxTotal) throw new UpstreamError({ status: 502, message: `upstream sent a stream of more than ${this.maxTotal} characters`, type: 'stream_too_large' }, { retryable: false })
    const first = eventEnd(this.tail + text)
    if (first < 0) {
      this.keep(text)
      return out
    }
    // the blank line ends in the new text: the event is what waited and the text up to it
    const cut = first - this.tail.length
    this.parts.push(text.slice(0, cut))
    out.push(this.parts.length === 1 ? this.parts[0]! : this.parts.join(''))
    this.parts = []
    this.size = 0
    this.tail = ''
    let at = cut
    for (const end of eventEnds(text, at, [])) {
      out.push(text.slice(at, end))
      at = end
    }
    if (at < text.length) this.keep(text.slice(at))
    return out
  }

  private keep(text: string) {
    this.size += text.length
    if (this.size > this.max) throw new UpstreamError({ status: 502, message: `upstream sent an SSE event of more than ${this.max} characters`, type: 'stream_too_large' }, { retryable: false })
    this.parts.push(text)
    this.tail = text.length >= 3 ? text.slice(-3) : (this.tail + text).slice(-3)
  }

  /** Whether no part of an event waits for the rest. */
  get empty(): boolean {
    return this.parts.length === 0
  }
  /** Whatever is left when the upstream closes (a last event with no blank line). */
  rest(): string {
    const r = this.parts.join('')
    this.parts = []
    this.size = 0
    this.tail = ''
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

/**
 * A tap's `opening` after an event of `type` (its data `j`): the stream is still opening only
 * while every event read is one of its wire's opening events (`opening`); any other decides, one
 * that is no JSON too (relay.ts commits, or fails, at the event that decides).
 */
export function stillOpening(state: TapState, j: Record<string, any> | null, type: unknown, opening: ReadonlySet<string>): boolean {
  return state.opening !== false && j !== null && typeof type === 'string' && opening.has(type)
}
