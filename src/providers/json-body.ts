// An upstream request body, encoded. Most are small and become one JSON string. One that
// carries a long conversation (a responses thread of tens of MiB loaded from the store, a
// Claude Code session) is encoded item by item, giving the loop back every few MiB, and sent
// as a stream of those parts with its length declared, each part turned into UTF-8 only as
// the upload reaches it: the encode never holds the loop for the whole body, and the body is
// never one string plus a whole UTF-8 copy of it.
import { nextTurn } from '../lib/turn.ts'

/** The body as parts of JSON text and its total length in UTF-8 (sent with Content-Length). */
export interface ChunkedBody {
  parts: string[]
  length: number
}

/** Below this much text in its conversation, a body is one string. */
const LARGE = 1024 * 1024
/** Text encoded between two turns of the loop. */
const SLICE = 2 * 1024 * 1024
/** The array fields a conversation sits in, on each wire. */
const CONVERSATION = ['input', 'messages'] as const


/** Whether the strings under `v` add up to at least `limit` characters (stops as soon as they do). */
function holdsText(v: unknown, limit: number): boolean {
  let total = 0
  const stack: unknown[] = [v]
  while (stack.length > 0) {
    const x = stack.pop()
    if (typeof x === 'string') {
      total += x.length
      if (total >= limit) return true
    } else if (Array.isArray(x)) {
      for (const c of x) stack.push(c)
    } else if (x !== null && typeof x === 'object') {
      for (const k in x) stack.push((x as Record<string, unknown>)[k])
    }
  }
  return false
}

export async function encodeJson(body: Record<string, unknown>): Promise<string | ChunkedBody> {
  const field = CONVERSATION.find((k) => Array.isArray(body[k]))
  const items = field ? (body[field] as unknown[]) : undefined
  if (!field || !items || items.length < 2 || !holdsText(items, LARGE)) return JSON.stringify(body)
  // the rest of the body around a marker no client text can spell (a fresh nonce)
  const token = `\u0000sy-${crypto.randomUUID()}`
  const marker = JSON.stringify(token)
  const frame = JSON.stringify({ ...body, [field]: token })
  const at = frame.indexOf(marker)
  const parts: string[] = [frame.slice(0, at) + '[']
  let since = 0
  for (let i = 0; i < items.length; i++) {
    const s = (i > 0 ? ',' : '') + JSON.stringify(items[i])
    parts.push(s)
    since += s.length
    if (since >= SLICE) {
      since = 0
      await nextTurn()
    }
  }
  parts.push(']' + frame.slice(at + marker.length))
  let length = 0
  for (const p of parts) length += Buffer.byteLength(p)
  return { parts, length }
}

/**
 * The parts as a stream of UTF-8, each encoded only when the upload asks for it and let go
 * once handed over: a body is sent once (a retry encodes it again).
 */
export function chunkStream(body: ChunkedBody): ReadableStream<Uint8Array> {
  let i = 0
  return new ReadableStream({
    pull(controller) {
      if (i >= body.parts.length) return controller.close()
      const part = body.parts[i]!
      body.parts[i++] = ''
      controller.enqueue(Buffer.from(part))
    },
  })
}
