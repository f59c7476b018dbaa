// Runs in a Bun Worker of the batch pool (pool.ts): checks and stores the items of a new
// batch (create/ingest.ts), runs items through the generation pipeline (run-item.ts) and
// stores their results with their generation records (results-writer.ts), so the parsing,
// checking, translating and recording of batch work never holds the loop that serves
// interactive traffic. Many items run at once on one worker; each is mostly waiting on I/O.
import { readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { ingest } from './create/ingest.ts'
import { ResultsWriter } from './results-writer.ts'
import { runItem } from './run-item.ts'
import type { FromWorker, ToWorker } from './types.ts'
import { buildWorkerServices, type WorkerServices } from './worker-services.ts'

declare const self: Worker

/**
 * Batch work yields the CPU to the request thread: this thread (and the helper threads it
 * starts) runs at nice 10. Linux names a thread by /proc/thread-self; elsewhere, or without
 * the right, the thread keeps the process's priority.
 */
function lowerPriority() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.max(getPriority(tid), 10))
  } catch {}
}

let s: WorkerServices | undefined
let writer: ResultsWriter | undefined
const post = (m: FromWorker) => self.postMessage(m)

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  const m = e.data
  switch (m.type) {
    case 'init':
      try {
        lowerPriority()
        s = buildWorkerServices(m.config)
        writer = new ResultsWriter(s, (done, settled) => post({ type: 'ran', done, settled }))
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
      for (const { id, job } of m.jobs) {
        // runItem turns every failure into a failed item; the catch is for a bug of ours
        runItem(s!, job, m.maxRetries)
          .catch((err) => ({
            status: 'failed' as const,
            error: { message: `batch worker: ${(err as Error)?.message ?? String(err)}`, code: 'worker_error', status: 500 },
            requestId: job.requestId,
            usage: null,
            records: [],
          }))
          .then((outcome) => writer!.add(id, job.batchId, job.idx, outcome))
      }
      return
    case 'stop':
      writer?.write()
      try {
        s?.storage.close()
      } catch {}
      s = undefined
      post({ type: 'stopped' })
      return
  }
}
