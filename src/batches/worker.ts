// Runs in a Bun Worker of the batch pool (pool.ts): checks and stores the items of a new
// batch (create/ingest.ts), and runs items through the generation pipeline (run-item.ts),
// so the parsing, checking and translating of batch work never holds the loop that serves
// interactive traffic. Many items run at once on one worker; each is mostly waiting on I/O.
// Items arrive and their outcomes leave in groups, a few ms' worth per message.
import type { Services } from '../services.ts'
import { ingest } from './create/ingest.ts'
import { runItem } from './run-item.ts'
import type { FromWorker, ItemOutcome, ToWorker } from './types.ts'
import { buildWorkerServices } from './worker-services.ts'

declare const self: Worker

/** Outcomes wait at most this long, or until this many are ready, to go back together. */
const SEND_MS = 2
const SEND_MAX = 64

let s: Services | undefined
const post = (m: FromWorker) => self.postMessage(m)

let ready: { id: number; outcome: ItemOutcome }[] = []
let timer: ReturnType<typeof setTimeout> | undefined
function send() {
  clearTimeout(timer)
  timer = undefined
  if (ready.length === 0) return
  post({ type: 'ran', outcomes: ready })
  ready = []
}
function done(id: number, outcome: ItemOutcome) {
  ready.push({ id, outcome })
  if (ready.length >= SEND_MAX) send()
  else timer ??= setTimeout(send, SEND_MS)
}

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
    case 'run':
      for (const { id, job } of m.jobs) {
        // runItem turns every failure into a failed item; the catch is for a bug of ours
        runItem(s!, job, m.maxRetries).then(
          (outcome) => done(id, outcome),
          (err) => done(id, { status: 'failed', error: { message: `batch worker: ${(err as Error)?.message ?? String(err)}`, code: 'worker_error', status: 500 }, requestId: job.requestId, usage: null, records: [] }),
        )
      }
      return
    case 'stop':
      send()
      try {
        s?.storage.close()
      } catch {}
      s = undefined
      post({ type: 'stopped' })
      return
  }
}
