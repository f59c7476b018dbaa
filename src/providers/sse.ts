// Upstream SSE body → messages, one at a time as the bytes arrive. eventsource-parser
// does the framing (split chunks, CRLF, comments, multi-line data); nothing is buffered
// beyond the chunk being read.
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { StreamEvent } from '../ir/types.ts'
import { UNWATCHED, type Watch } from './idle.ts'
import { UpstreamError } from './types.ts'
import { MAX_EVENT_CHARS, MAX_STREAM_CHARS } from '../routing/sse-events.ts'

export interface SseMessage {
  event?: string
  data: string
}

/** The most an upstream stream may send, in all and in one event (routing/sse-events.ts). */
const LIMITS = { stream: MAX_STREAM_CHARS, event: MAX_EVENT_CHARS }

const tooMuch = (what: string) => new UpstreamError({ status: 502, message: `upstream sent ${what}`, type: 'stream_too_large' }, { retryable: false })

/**
 * Reads `body` as SSE. A last event the upstream did not close with a blank line is still
 * delivered (several real recordings end that way). Stopping the iteration early (break /
 * return) cancels the body, which closes the upstream connection.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>, idle: Watch = UNWATCHED, limits = LIMITS): AsyncGenerator<SseMessage> {
  const pending: SseMessage[] = []
  // bytes read in all, and since the last event ended (what the parser holds of the next)
  let total = 0
  let since = 0
  const parser = createParser({
    // the parser's own message (its id too, which no reader uses): no second object an event
    onEvent: (m: EventSourceMessage) => {
      since = 0
      pending.push(m)
    },
  })
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let done = false
  idle.streaming = true
  try {
    while (!done) {
      idle.asking()
      const r = await reader.read()
      idle.touch()
      if (r.done) {
        done = true
        // Ending the (possibly unterminated) last line and event; a no-op when nothing is pending.
        parser.feed(decoder.decode() + '\n\n')
      } else {
        total += r.value.byteLength
        since += r.value.byteLength
        if (total > limits.stream) throw tooMuch(`a stream of more than ${limits.stream} bytes`)
        parser.feed(decoder.decode(r.value, { stream: true }))
        // what the read brought and no event took (its end, or comments): the next event's
        if (since > limits.event) throw tooMuch(`an SSE event of more than ${limits.event} bytes`)
      }
      while (pending.length) yield pending.shift()!
    }
  } finally {
    idle.end()
    if (!done) await reader.cancel().catch(() => {})
  }
}

/**
 * The error event for a read of the body that failed: the upstream's silence past its timeout
 * (idle.ts) as it was said, anything else (a reset, a close) as a connection closed.
 */
export function readFailure(e: unknown): StreamEvent {
  if (e instanceof UpstreamError) return { type: 'error', error: { status: e.status, message: e.message, type: e.type } }
  return { type: 'error', error: { status: 502, message: 'upstream connection closed mid-stream', type: 'connection_error' } }
}
