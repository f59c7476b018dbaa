// An SSE response body fed by an async source of frames: written as produced, with
// `: ping` comments while the source is silent for long (load balancers drop
// idle streams after about 60 s), and a client disconnect handed back to the caller so
// it can abort the upstream request.
import { nextTurn } from '../lib/turn.ts'
export const PING_FRAME = ': ping\n\n'
export const DEFAULT_PING_MS = 15_000

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
  /**
   * The surface's in-band error frame for a mid-stream failure, written before the
   * body ends. It tells the client what failed; a bare close would only say that it did.
   */
  errorFrame?: (e: unknown) => string
}

/** How long a stream may keep the loop busy before it lets timers and other requests in. */
export const YIELD_AFTER_MS = 1

/**
 * The event loop's turns, counted by one shared setImmediate while streams are written: a
 * stream whose source waited on I/O has let the loop turn and owes it no yield (a 50 ms gap
 * between two chunks is not 50 ms of hogging it); only a source that never waits does.
 */
let turns = 0
let counting = false
const countTurn = () => {
  turns++
  counting = false
}
function watchTurns(): number {
  if (!counting) {
    counting = true
    setImmediate(countTurn)
  }
  return turns
}

let open = 0
/** SSE bodies of this thread begun and not yet ended or cancelled (the metrics' open streams). */
export const openStreams = (): number => open


/** A frame to send: SSE text, or bytes relayed as they came. */
export type Frame = string | Uint8Array

/**
 * The frames of `source` as bytes; `source` yields frames (an empty one is skipped). A direct stream
 * (Bun's `type: 'direct'`): each frame is written to the response and flushed as it comes, with
 * no queue between, where a queued stream paid a read, a promise and a copy a frame on Bun's side.
 * Read in JavaScript (tests, `Response.text()`), it gives the same bytes.
 */
export function sseBody(source: AsyncIterator<Frame>, opts: SseOptions = {}): ReadableStream<Uint8Array> {
  const pingMs = opts.pingMs ?? DEFAULT_PING_MS
  // One timer a stream, not one a chunk: it pings when nothing was written for pingMs.
  let lastWrite = performance.now()
  let lastYield = lastWrite
  let seenTurn = -1
  let timer: ReturnType<typeof setInterval> | undefined
  let begun = false
  let cancelled = false
  // every end of the body stops here (its source done or failed, a cancel, a closed body): counted once
  let ended = false
  const stop = () => {
    clearInterval(timer)
    if (begun && !ended) open--
    ended = true
  }
  /**
   * One frame written and flushed; a promise while the socket cannot take more (a slow client
   * then holds the source, not memory).
   */
  const send = (c: ReadableStreamDirectController, frame: Frame): Promise<number> | undefined => {
    const written = c.write(frame)
    if (typeof written !== 'number') return written
    const flushed = c.flush()
    return typeof flushed === 'number' ? undefined : flushed
  }
  const direct: Bun.DirectUnderlyingSource<Uint8Array> = {
    type: 'direct',
    async pull(controller: ReadableStreamDirectController) {
      // called once by the server; a reader would call it again only after it settled
      if (cancelled || begun) return
      begun = true
      open++
      lastWrite = lastYield = performance.now()
      timer = setInterval(() => {
        if (ended || performance.now() - lastWrite < pingMs) return
        lastWrite = performance.now()
        try {
          void send(controller, PING_FRAME)?.catch(stop)
        } catch {
          stop() // the body is already closed
        }
      }, Math.max(1, Math.floor(pingMs / 4)))
      for (;;) {
        // A source that never waits on I/O (the mock, a translated reply already in
        // memory) is one long chain of microtasks, which starves timers (the recorder's
        // flush, key reloads) and every other request. Step out to the event loop.
        const turn = watchTurns()
        if (turn !== seenTurn) {
          seenTurn = turn
          lastYield = performance.now()
        } else if (performance.now() - lastYield >= YIELD_AFTER_MS) {
          await nextTurn()
          lastYield = performance.now()
        }
        let got: IteratorResult<Frame>
        try {
          got = await source.next()
        } catch (e) {
          stop()
          if (cancelled) return
          // The source failed mid-stream: say so in band, then end without the surface's
          // normal terminator. Erroring the body (the fallback with no error frame) resets
          // the socket, which can drop frames already written before they are flushed.
          if (!opts.errorFrame) throw e
          const frame = opts.errorFrame(e)
          if (frame !== '') await send(controller, frame)
          controller.close()
          return
        }
        // the client went away while the source was read: cancel() has ended everything
        if (cancelled) return
        if (got.done) {
          stop()
          controller.close()
          return
        }
        if (got.value.length !== 0) {
          lastWrite = performance.now()
          const wait = send(controller, got.value)
          if (wait) await wait
        }
      }
    },
    async cancel() {
      cancelled = true
      stop()
      opts.onCancel?.()
      // Let the source run its cleanup (it sees the abort the caller raised in onCancel).
      await source.return?.(undefined).catch(() => {})
    },
  }
  // the DOM's ReadableStream type, which this project's types resolve to, has no direct sources
  return new ReadableStream<Uint8Array>(direct as unknown as UnderlyingDefaultSource<Uint8Array>)
}
