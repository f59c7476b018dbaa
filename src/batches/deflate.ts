// The exports' gzip and ZIP compression on a worker (deflate-worker.ts): the request thread only
// hands it bytes and passes on the bytes it answers. The worker starts with the first compressed
// export and never keeps the process alive; should none start, the streams are compressed here,
// as before. A worker that stops fails the exports it was compressing (the next starts another).
import { startWorker } from '../lib/worker-url.ts'
import { DeflateStream, type DeflateStep } from './deflate-streams.ts'
import type { DeflateJob, DeflateReply } from './deflate-worker.ts'

type BunWorker = Worker & { ref(): void; unref(): void }
type Job = DeflateJob extends infer J ? (J extends unknown ? Omit<J, 'n'> : never) : never

/** A gzip or ZIP being written: the bytes each step makes; `close` once done or given up. */
export interface Deflating {
  step(s: DeflateStep): Promise<Uint8Array[]>
  close(): void
}

let worker: BunWorker | null | undefined
let nextN = 1
let nextId = 1
const waiting = new Map<number, { resolve: (made: Uint8Array[]) => void; reject: (e: Error) => void }>()

function start(): BunWorker | null {
  if (worker !== undefined) return worker
  try {
    const w = startWorker(import.meta.url, 'batches/deflate-worker.ts') as BunWorker
    w.onmessage = (e: MessageEvent<DeflateReply>) => {
      const job = waiting.get(e.data.n)
      if (!job) return
      waiting.delete(e.data.n)
      if (waiting.size === 0) w.unref()
      if (e.data.error !== undefined) job.reject(new Error(`export compression failed: ${e.data.error}`))
      else job.resolve(e.data.made ?? [])
    }
    w.onerror = (e) => lose(`the export compression worker stopped: ${e.message}`)
    w.unref()
    worker = w
  } catch {
    worker = null
  }
  return worker
}

function lose(why: string) {
  worker?.terminate()
  worker = undefined
  for (const job of waiting.values()) job.reject(new Error(why))
  waiting.clear()
}

function ask(w: BunWorker, job: Job): Promise<Uint8Array[]> {
  if (worker !== w) return Promise.reject(new Error('the export compression worker stopped'))
  const n = nextN++
  return new Promise((resolve, reject) => {
    waiting.set(n, { resolve, reject })
    w.ref()
    // the bytes a step adds are handed over, not copied: a copy of a page's text (100-200 KB)
    // held this thread several ms a step
    w.postMessage({ ...job, n }, job.op === 'step' && job.step.op === 'data' ? [job.step.data.buffer] : [])
  })
}

/** A gzip or ZIP stream, compressed on the worker (or here, with none). */
export function deflating(kind: 'gzip' | 'zip'): Deflating {
  const w = start()
  if (!w) {
    const here = new DeflateStream(kind)
    return { step: async (s) => here.step(s), close() {} }
  }
  const id = nextId++
  const opened = ask(w, { id, op: 'open', kind })
  return {
    async step(step) {
      await opened
      return ask(w, { id, op: 'step', step })
    },
    close: () => void ask(w, { id, op: 'close' }).catch(() => {}),
  }
}
