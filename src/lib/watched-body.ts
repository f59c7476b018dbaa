// A body passed on as it arrives, watched on the way: each chunk shown to `chunk`, and `end` told
// once how it ended — read to its end, failed (with the error), or cancelled by its reader (a
// client that left; an adapter that stops at a stream's last event). The cache keeps an answer
// from it, cassettes record one, a conversation's hold is let go at its end.
export interface BodyWatch {
  chunk?(b: Uint8Array): void
  end(how: { error?: unknown; cancelled?: boolean }): void
}

export function watchedBody(body: ReadableStream<Uint8Array>, w: BodyWatch): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let ended = false
  const end = (how: { error?: unknown; cancelled?: boolean }) => {
    if (ended) return false
    ended = true
    w.end(how)
    return true
  }
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const r = await reader.read()
        // a read that lands after a cancel goes nowhere
        if (ended) return
        if (r.done) {
          end({})
          return c.close()
        }
        w.chunk?.(r.value)
        c.enqueue(r.value)
      } catch (error) {
        if (end({ error })) c.error(error)
      }
    },
    cancel(reason) {
      end({ cancelled: true })
      return reader.cancel(reason)
    },
  })
}

/** `res` with its body watched, status and headers as they were. */
export function watchedResponse(res: Response, w: BodyWatch): Response {
  return new Response(res.body && watchedBody(res.body, w), { status: res.status, statusText: res.statusText, headers: res.headers })
}
