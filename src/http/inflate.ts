// A compressed request body, decompressed by a worker (inflate-worker.ts) and read here as a
// stream: the request thread only passes chunks, so a bomb read up to the body limit costs it
// no more than a plain body of that size. A body waits for the worker to say it is loaded;
// with no worker to be had (one that cannot start), it is decompressed here, as before.
import { startWorker } from '../lib/worker-url.ts'
import type { InflateJob, InflateReply } from './inflate-worker.ts'

type BunWorker = Worker & { ref(): void; unref(): void }

/** What a body being read is owed: its stream's controller, and chunks not yet pulled. */
interface Reading {
  controller: ReadableStreamDefaultController<Uint8Array>
  queue: Uint8Array[]
  ended: boolean
  failed?: Error
}

/** The worker once it said it is loaded; null when it could not start (bodies are inflated here then). */
let ready: Promise<BunWorker | null> | undefined
let worker: BunWorker | undefined
let nextId = 1
const readings = new Map<number, Reading>()

/** A worker that stopped after it started: every body it was reading fails as undecompressable (a TypeError, as DecompressionStream's); the next body starts another. */
function lose(message: string) {
  worker?.terminate()
  worker = undefined
  ready = undefined
  for (const r of readings.values()) fail(r, message)
  readings.clear()
}

function fail(r: Reading, message: string) {
  r.failed = new TypeError(message)
  if (r.queue.length === 0) r.controller.error(r.failed)
}

function onReply(e: MessageEvent<InflateReply>) {
  const m = e.data
  if (m.t === 'ready') return
  const r = readings.get(m.id)
  if (!r) return
  if (m.t === 'out') r.queue.push(m.chunk)
  else {
    finished(m.id)
    if (m.t === 'end') r.ended = true
    else return fail(r, m.message)
  }
  deliver(r, m.id)
}

function started(): Promise<BunWorker | null> {
  if (ready) return ready
  ready = new Promise<BunWorker | null>((resolve) => {
    let w: BunWorker
    try {
      w = startWorker(import.meta.url, 'http/inflate-worker.ts') as BunWorker
    } catch {
      return resolve(null)
    }
    w.onmessage = (e: MessageEvent<InflateReply>) => {
      if (e.data.t !== 'ready') return
      w.onmessage = onReply
      w.onerror = () => lose('the decompressing worker stopped')
      w.unref()
      worker = w
      resolve(w)
    }
    // it never loaded: bodies are inflated on this thread from now on
    w.onerror = () => {
      w.terminate()
      resolve(null)
    }
  })
  return ready
}

/** Hands the reader what it has asked for: one chunk a pull (each acknowledged to the worker), then the end. */
function deliver(r: Reading, id: number) {
  const c = r.controller
  while ((c.desiredSize ?? 0) > 0 && r.queue.length > 0) {
    const chunk = r.queue.shift()!
    c.enqueue(chunk)
    post({ t: 'ack', id, n: chunk.byteLength })
  }
  if (r.queue.length > 0) return
  if (r.failed) c.error(r.failed)
  else if (r.ended) c.close()
}

/** A body no longer read: the worker may let the process exit once none is. */
function finished(id: number): boolean {
  const was = readings.delete(id)
  if (readings.size === 0) worker?.unref()
  return was
}

function post(job: InflateJob) {
  worker?.postMessage(job)
}

/** `source` decompressed as `format` says, in a worker when one can be started. */
export function inflated(source: ReadableStream<Uint8Array<ArrayBuffer>>, format: CompressionFormat): ReadableStream<Uint8Array> {
  const id = nextId++
  let reading: Reading | undefined
  /** The body inflated on this thread, when no worker could start. */
  let here: ReadableStreamDefaultReader<Uint8Array> | undefined
  let input: ReadableStreamDefaultReader<Uint8Array> | undefined
  return new ReadableStream<Uint8Array>(
    {
      async start(controller) {
        const w = await started()
        if (!w) {
          here = source.pipeThrough(new DecompressionStream(format)).getReader()
          return
        }
        const r: Reading = (reading = { controller, queue: [], ended: false })
        readings.set(id, r)
        w.ref()
        post({ t: 'start', id, format })
        const from = (input = source.getReader())
        // the compressed bytes go over as they arrive (they are what the client sent, within its limits)
        void (async () => {
          try {
            for (;;) {
              const { done, value } = await from.read()
              if (!readings.has(id)) return
              if (done) return post({ t: 'end', id })
              post({ t: 'in', id, chunk: value })
            }
          } catch (e) {
            // the client's body failed (it left): the reader hears it
            if (finished(id)) {
              post({ t: 'cancel', id })
              r.failed = e instanceof Error ? e : new Error(String(e))
              controller.error(r.failed)
            }
          }
        })()
      },
      async pull(controller) {
        if (reading) return deliver(reading, id)
        const { done, value } = await here!.read()
        if (done) controller.close()
        else controller.enqueue(value)
      },
      cancel(reason) {
        if (here) return here.cancel(reason)
        if (finished(id)) post({ t: 'cancel', id })
        input?.cancel().catch(() => {})
      },
    },
    { highWaterMark: 1 },
  )
}
