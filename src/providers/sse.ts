// Upstream SSE body → messages, one at a time as the bytes arrive. eventsource-parser
// does the framing (split chunks, CRLF, comments, multi-line data); nothing is buffered
// beyond the event being read.
import { EventSourceParserStream } from 'eventsource-parser/stream'

export interface SseMessage {
  event?: string
  data: string
}

/**
 * Reads `body` as SSE. Stopping the iteration early (break / return) cancels the body,
 * which closes the upstream connection.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>).pipeThrough(new EventSourceParserStream()).getReader()
  let done = false
  try {
    while (true) {
      const r = await reader.read()
      if (r.done) {
        done = true
        return
      }
      yield r.value.event ? { event: r.value.event, data: r.value.data } : { data: r.value.data }
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {})
  }
}
