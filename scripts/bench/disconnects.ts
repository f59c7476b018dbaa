// Clients that give up mid-stream: each starts a streamed request, reads the first body
// chunk and aborts. The gateway must drop what it held for the stream (upstream request,
// taps, buffers); the memory phase watches its peak RSS while thousands of these go by.
import { send, type Call } from './call.ts'

export interface DisconnectResult {
  /** Streams started. */
  started: number
  /** Aborted after their first chunk, as intended. */
  aborted: number
  /** Non-200 answers, streams that ended before a chunk, transport errors, by kind. */
  errors: Record<string, number>
  ms: number
}

/** Open one stream, read its first chunk, abort. Resolves with an error kind, or null when it went as intended. */
async function oneDisconnect(call: Call, timeoutMs: number): Promise<string | null> {
  const ac = new AbortController()
  const timer = setTimeout(() => ac.abort(new Error('timeout')), timeoutMs)
  try {
    const res = await send(call, ac.signal)
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel()
      return `HTTP ${res.status}`
    }
    const first = await res.body.getReader().read()
    if (first.done) return 'ended before a chunk'
    return null
  } catch (e) {
    return ac.signal.aborted ? 'timeout' : (e as Error).name || 'error'
  } finally {
    clearTimeout(timer)
    // aborting also cancels the body, which closes the connection: what a client that goes away does
    ac.abort()
  }
}

/**
 * `total` disconnecting streams, `concurrency` at a time, taking the calls in turn (the
 * surfaces' streams one after another).
 */
export async function disconnects(calls: Call[], total: number, concurrency: number, timeoutMs = 15_000): Promise<DisconnectResult> {
  if (calls.length === 0) throw new Error('disconnects: no stream to open')
  const errors: Record<string, number> = {}
  let next = 0
  let aborted = 0
  const t0 = performance.now()
  const lane = async () => {
    while (next < total) {
      const call = calls[next++ % calls.length]!
      const kind = await oneDisconnect(call, timeoutMs)
      if (kind === null) aborted++
      else errors[kind] = (errors[kind] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane))
  return { started: next, aborted, errors, ms: performance.now() - t0 }
}
