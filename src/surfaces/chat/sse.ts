// An SSE response body fed by an async source of frames: written as produced, with
// `: ping` comments while the source is silent for long (pitfall 18: load balancers drop
// idle streams after about 60 s), and a client disconnect handed back to the caller so
// it can abort the upstream request.
export const PING_FRAME = ': ping\n\n'
export const DEFAULT_PING_MS = 15_000
const FLUSH_MS = 25

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // nginx and similar proxies would otherwise buffer the stream
  'x-accel-buffering': 'no',
}

export interface SseOptions {
  pingMs?: number
  /** The client went away before the source ended. */
  onCancel?: () => void
}

/** The frames of `source` as bytes; `source` yields frame text ('' is skipped). */
export function sseBody(source: AsyncIterator<string>, opts: SseOptions = {}): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  const pingMs = opts.pingMs ?? DEFAULT_PING_MS
  let pending: Promise<IteratorResult<string>> | null = null
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        pending ??= source.next()
        let timer: ReturnType<typeof setTimeout> | undefined
        const tick = new Promise<'ping'>((r) => (timer = setTimeout(() => r('ping'), pingMs)))
        let got: IteratorResult<string> | 'ping'
        try {
          got = await Promise.race([pending, tick])
        } catch (e) {
          clearTimeout(timer)
          // The source failed mid-stream: end the body abruptly, which chat clients read as an
          // error (§7.8) — a clean close would pass for a finished answer. Erroring at once
          // can make the server reset the socket before the frames already written are
          // flushed, so the client first gets what was produced.
          await Bun.sleep(FLUSH_MS)
          controller.error(e)
          return
        } finally {
          clearTimeout(timer)
        }
        if (got === 'ping') {
          controller.enqueue(enc.encode(PING_FRAME))
          return
        }
        pending = null
        if (got.done) {
          controller.close()
          return
        }
        if (got.value !== '') {
          controller.enqueue(enc.encode(got.value))
          return
        }
      }
    },
    async cancel() {
      opts.onCancel?.()
      // Let the source run its cleanup (it sees the abort the caller raised in onCancel).
      await source.return?.(undefined).catch(() => {})
    },
  })
}
