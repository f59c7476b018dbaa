// Runs in a Bun Worker of the batch pool (pool.ts): an item worker. It checks and stores the
// items of a new batch (create/ingest.ts) and runs items through the generation pipeline
// (run-item.ts), at a lower CPU priority than the request thread; it hands each outcome to the
// results writer, a thread of its own (writer-worker.ts), which stores results with their
// generation records. So the parsing, checking, translating and recording of batch work never
// holds the loop that serves interactive traffic.
import { lowerThreadPriority } from '../lib/priority.ts'
import { boundHeap } from '../lib/heap-bound.ts'
import { ingest } from './create/ingest.ts'
import { runItem } from './run-item.ts'
import { BatchStore } from './store.ts'
import type { FromWorker, ItemJob, ItemOutcome, Outcome, ToWorker } from './types.ts'
import { buildWorkerServices } from './worker-services.ts'
import { HoldAsks } from './hold-asks.ts'
import type { Services } from '../services.ts'
import { crashIfAsked, crashOnWord } from './test-crash.ts'

declare const self: Worker

// an item worker's garbage (its items' objects once they are handed over) is collected as it
// grows, not left to add up beside the other threads' (lib/heap-bound.ts)
boundHeap()

/** The worker's services, whole: ingest and item runs each take their slice. */
let s: Services | undefined
let store: BatchStore | undefined
/** Where outcomes go. */
let toWriter: MessagePort | undefined
const post = (m: FromWorker) => self.postMessage(m)
/** A fallback's hold, asked of the main thread. */
const holds = new HoldAsks(post)

const bug = (err: unknown, requestId: string): ItemOutcome => ({
  status: 'failed',
  error: { message: `batch worker: ${(err as Error)?.message ?? String(err)}`, code: 'worker_error', status: 500 },
  requestId,
  usage: null,
  records: [],
})

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  const m = e.data
  switch (m.type) {
    case 'init':
      try {
        if (m.role !== 'items') throw new Error('an item worker was started as the results writer (writer-worker.ts is its entry)')
        // item work yields the CPU to the request thread
        lowerThreadPriority()
        s = await buildWorkerServices(m.config, m.tokens)
        store = new BatchStore(s.storage)
        crashOnWord((toWriter = m.port))
        post({ type: 'ready' })
      } catch (err) {
        post({ type: 'init-failed', error: (err as Error)?.stack ?? String(err) })
      }
      return
    case 'ingest': {
      const result = await ingest(s!, m.job).catch((err) => ({ ok: false as const, status: 500, message: `batch worker: ${(err as Error)?.message ?? String(err)}` }))
      post({ type: 'ingested', id: m.id, result })
      return
    }
    case 'run':
      crashIfAsked()
      for (const { id, job } of m.jobs) {
        // runItem turns every failure into a failed item; the catch is for a bug of ours
        // a key with no credit holds nothing: its fallback asks nothing of the main thread
        runItem(s!, job, m.maxRetries, store!, job.funded ? (ask) => holds.ask(id, ask) : undefined, () => calling(id))
          .catch((err) => bug(err, job.requestId))
          .then((outcome) => handOver(lean(id, job, outcome)))
      }
      return
    case 'held':
      holds.answered(m.n, m.ok)
      return
    case 'journaled':
      journaled.get(m.n)?.(m.ok)
      journaled.delete(m.n)
      return
    case 'stop':
      sendNow()
      // what the worker's services keep to write later (the responses surface's pending threads)
      for (const close of s?.onClose ?? []) {
        try {
          await close()
        } catch {}
      }
      try {
        await s?.storage.close()
      } catch {}
      s = undefined
      post({ type: 'stopped' })
      return
  }
}

/**
 * Jobs about to make their first upstream call, said to the main thread in one message a turn.
 * Each job goes on once the main thread has named it in the journal of items sent
 * (sent-journal.ts: a next start gives back the claims of those it does not name) and answered;
 * and should this thread die, the main thread knows which jobs may have reached the upstream
 * (pool.ts). One the journal could not take fails here, never sent.
 */
let aboutToCall: number[] = []
let told: Promise<void> | undefined
let turns = 0
const journaled = new Map<number, (ok: boolean) => void>()
function calling(id: number): Promise<void> {
  aboutToCall.push(id)
  return (told ??= Promise.resolve().then(
    () =>
      new Promise<void>((resolve, reject) => {
        const n = ++turns
        journaled.set(n, (ok) => (ok ? resolve() : reject(new Error('the journal of items sent could not take it; not sent'))))
        post({ type: 'calling', ids: aboutToCall, n })
        aboutToCall = []
        told = undefined
      }),
  ))
}

/** What the writer needs of an outcome: records without their model and key objects. */
function lean(id: number, job: ItemJob, o: ItemOutcome): Outcome {
  const records = o.records.map(({ model, apiKey: _, reservationId: __, ...r }) => ({ ...r, modelId: model.id }))
  return { id, batchId: job.batchId, idx: job.idx, key: { id: job.apiKey.id, account: job.apiKey.account }, outcome: { ...o, records } }
}

/** Outcomes go to the writer a few ms' worth at a time. */
let outgoing: Outcome[] = []
let timer: ReturnType<typeof setTimeout> | undefined
function sendNow() {
  clearTimeout(timer)
  timer = undefined
  if (outgoing.length === 0) return
  toWriter?.postMessage(outgoing)
  outgoing = []
}
function handOver(o: Outcome) {
  outgoing.push(o)
  if (outgoing.length >= 32) sendNow()
  else timer ??= setTimeout(sendNow, 2)
}
