// Experiment (docs/bench.md, long streams): a preload for a checkout with push-relay.patch applied.
// A streamed upstream call (a string body with "stream":true) goes over socket-fetch.ts's
// socketPush; its Response has no body but a handle (under PUSH) through which the patched relay
// takes each read inside the socket's own callback. Reads that come before it listens are queued.
// Every other call goes to fetch.
import { socketPush } from './socket-fetch.ts'
const PUSH = Symbol.for('switchyard.push')
const realFetch = globalThis.fetch
const pushFetch = (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
  if (typeof url !== 'string' || typeof init?.body !== 'string' || !init.signal || !init.body.includes('"stream":true')) return realFetch(url, init)
  const signal = init.signal
  return new Promise((resolve, reject) => {
    let sink: { piece(b: Uint8Array): boolean; end(err?: unknown): void } | undefined
    let queue: Uint8Array[] = []
    let ended: { err?: unknown } | undefined
    const call = socketPush(new URL(url), { method: 'POST', headers: init.headers as Record<string, string>, body: init.body as string }, {
      head(res) {
        const handle = {
          listen(s: typeof sink) {
            sink = s
            const q = queue
            queue = []
            for (const b of q) s!.piece(b)
            if (ended) s!.end(ended.err)
          },
          resume: () => call.resume(),
          cancel: () => call.cancel(),
        }
        const r = new Response(null, { status: res.status, headers: res.headers })
        ;(r as any)[PUSH] = handle
        resolve(r)
      },
      piece(b) {
        if (sink) return sink.piece(b)
        queue.push(Uint8Array.prototype.slice.call(b))
        return true
      },
      end(err) {
        signal.removeEventListener('abort', onAbort)
        if (sink) sink.end(err)
        else if (!ended) { ended = { err }; if (err) reject(err) }
      },
    })
    const onAbort = () => call.cancel()
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
globalThis.fetch = Object.assign(pushFetch, { preconnect: realFetch.preconnect }) as typeof fetch
