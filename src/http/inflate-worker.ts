// Runs in a Bun Worker (inflate.ts): decompresses request bodies off the request thread. Bun's
// DecompressionStream inflates on the thread that reads it, without giving the event loop back
// between chunks, so one kilobyte-sized brotli or gzip bomb read up to the body limit held every
// other request for a few hundred milliseconds. Here it holds nobody's. Output goes back in
// chunks, never more than WINDOW bytes ahead of what the request thread has taken, so a bomb is
// inflated only as far as its reader reads.
import { lowerThreadPriority } from '../lib/priority.ts'

declare const self: Worker

/** Bytes inflated and sent ahead of the reader's acknowledgements, per body. */
export const WINDOW = 1 << 20

export type InflateJob =
  | { t: 'start'; id: number; format: CompressionFormat }
  | { t: 'in'; id: number; chunk: Uint8Array<ArrayBuffer> }
  | { t: 'end'; id: number }
  | { t: 'ack'; id: number; n: number }
  | { t: 'cancel'; id: number }

/** `ready`: the worker is loaded and takes bodies (sent once, first). */
export type InflateReply = { t: 'ready' } | { t: 'out'; id: number; chunk: Uint8Array } | { t: 'end'; id: number } | { t: 'error'; id: number; message: string }

interface Body {
  writer: WritableStreamDefaultWriter<BufferSource>
  reader: ReadableStreamDefaultReader<Uint8Array>
  /** Bytes it may still send before an acknowledgement. */
  credit: number
  wake?: () => void
}

const bodies = new Map<number, Body>()

lowerThreadPriority()

function reply(r: InflateReply, transfer: Transferable[] = []) {
  self.postMessage(r, transfer)
}

async function pump(id: number, body: Body) {
  try {
    for (;;) {
      while (body.credit <= 0) await new Promise<void>((r) => (body.wake = r))
      body.wake = undefined
      if (bodies.get(id) !== body) return
      const { done, value } = await body.reader.read()
      if (bodies.get(id) !== body) return
      if (done) {
        bodies.delete(id)
        return reply({ t: 'end', id })
      }
      body.credit -= value.byteLength
      // a chunk that is the whole of its buffer moves without a copy
      const own = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : value.slice()
      reply({ t: 'out', id, chunk: own }, [own.buffer as ArrayBuffer])
    }
  } catch (e) {
    if (bodies.get(id) === body) {
      bodies.delete(id)
      reply({ t: 'error', id, message: (e as Error)?.message ?? String(e) })
    }
  }
}

self.onmessage = (e: MessageEvent<InflateJob>) => {
  const m = e.data
  if (m.t === 'start') {
    const ds = new DecompressionStream(m.format)
    const body: Body = { writer: ds.writable.getWriter(), reader: ds.readable.getReader(), credit: WINDOW }
    bodies.set(m.id, body)
    void pump(m.id, body)
    return
  }
  const body = bodies.get(m.id)
  if (!body) return
  // a write's or close's failure (bytes that do not decompress) reaches the reader, which reports it
  if (m.t === 'in') body.writer.write(m.chunk).catch(() => {})
  else if (m.t === 'end') body.writer.close().catch(() => {})
  else if (m.t === 'ack') {
    body.credit += m.n
    body.wake?.()
  } else {
    bodies.delete(m.id)
    body.reader.cancel().catch(() => {})
    body.writer.abort().catch(() => {})
    body.wake?.()
  }
}

reply({ t: 'ready' })
