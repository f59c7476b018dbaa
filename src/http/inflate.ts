// A compressed request body, decompressed by a worker (inflate-worker.ts) and read here as a
// stream: the request thread only passes chunks, so a bomb read up to the body limit costs it
// no more than a plain body of that size. With no worker to be had, it is decompressed here.
import { workerUrl } from '../lib/worker-url.ts'
import type { InflateJob, InflateReply } from './inflate-worker.ts'

type BunWorker = Worker & { ref(): void; unref(): void }

/** What a body being read is owed: its stream's controller, and chunks not yet pulled. */
interface Reading {
  controller: ReadableStreamDefaultController<Uint8Array>
  queue: Uint8Array[]
  ended: boolean
  failed?: Error
}

let worker: BunWorker | null | undefined
let nextId = 1
const readings = new Map<number, Reading>()

/** Every body being read fails as a decompression failure (a TypeError, as DecompressionStream's); the next body starts a new worker. */
function lose(message: string) {
  worker?.terminate()
  worker = undefined
  for (const r of readings.values()) fail(r, message)
  readings.clear()
}

function fail(r: Reading, message: string) {
  r.failed = new TypeError(message)
  if (r.queue.length === 0) r.controller.error(r.failed)
}

function start(): BunWorker | null {
  if (worker !== undefined) return worker
  try {
    const w = new Worker(workerUrl(import.meta.url, 'http/inflate-worker.ts')) as BunWorker
    w.onmessage = (e: MessageEvent<InflateReply>) => {
      const m = e.data
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
    w.onerror = () => lose('the decompressing worker stopped')
    w.unref()
    worker = w
  } catch {
    worker = null
  }
  return worker
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
  const w = start()
  if (!w) return source.pipeThrough(new DecompressionStream(format))
  const id = nextId++
  const input = source.getReader()
  let reading: Reading
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        reading = { controller, queue: [], ended: false }
        readings.set(id, reading)
        w.ref()
        post({ t: 'start', id, format })
        // the compressed bytes go over as they arrive (they are what the client sent, within its limits)
        void (async () => {
          try {
            for (;;) {
              const { done, value } = await input.read()
              if (!readings.has(id)) return
              if (done) return post({ t: 'end', id })
              post({ t: 'in', id, chunk: value })
            }
          } catch (e) {
            // the client's body failed (it left): the reader hears it
            if (finished(id)) {
              post({ t: 'cancel', id })
              reading.failed = e instanceof Error ? e : new Error(String(e))
              controller.error(reading.failed)
            }
          }
        })()
      },
      pull() {
        deliver(reading, id)
      },
      cancel() {
        if (finished(id)) post({ t: 'cancel', id })
        input.cancel().catch(() => {})
      },
    },
    { highWaterMark: 1 },
  )
}
