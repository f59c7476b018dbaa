// Runs in a Bun Worker of the batch pool (pool.ts): checks and stores the items of a new
// batch (create/ingest.ts), and runs items through the generation pipeline (run-item.ts),
// so the parsing, checking and translating of batch work never holds the loop that serves
// interactive traffic. Many items run at once on one worker; each is mostly waiting on I/O.
import type { Services } from '../services.ts'
import { ingest } from './create/ingest.ts'
import { runItem } from './run-item.ts'
import type { FromWorker, ToWorker } from './types.ts'
import { buildWorkerServices } from './worker-services.ts'

declare const self: Worker

let s: Services | undefined
const post = (m: FromWorker) => self.postMessage(m)

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  const m = e.data
  switch (m.type) {
    case 'init':
      try {
        s = buildWorkerServices(m.config)
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
    case 'run': {
      // runItem turns every failure into a failed item; this is for a bug of ours
      const outcome = await runItem(s!, m.job, m.maxRetries).catch((err) => ({
        status: 'failed' as const,
        error: { message: `batch worker: ${(err as Error)?.message ?? String(err)}`, code: 'worker_error', status: 500 },
        requestId: m.job.requestId,
        usage: null,
        records: [],
      }))
      post({ type: 'ran', id: m.id, outcome })
      return
    }
    case 'stop':
      try {
        s?.storage.close()
      } catch {}
      s = undefined
      post({ type: 'stopped' })
      return
  }
}
