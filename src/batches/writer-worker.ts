// Runs in a Bun Worker of the batch pool (pool.ts): the results writer. It takes the outcomes
// of every item worker (worker.ts) over a port of each, stores them with their generation
// records (results-writer.ts) at normal priority, and tells the main thread what it stored.
// A thread of its own, apart from the item worker's module: it imports only what storing uses.
import { boundHeap } from '../lib/heap-bound.ts'
import { ResultsWriter, type CountFirst } from './results-writer.ts'
import { resultsSpool } from './results-spool.ts'
import { BatchStore } from './store.ts'
import type { FromWorker, Outcome, ToWorker } from './types.ts'
import { buildWriterServices, type WriterServices } from './writer-services.ts'
import { AFTER_STORE_TELL_MS, crashAfterStoreAsked, HOOKED } from './test-crash.ts'

declare const self: Worker

// the writer's garbage (the outcomes once stored) is collected as it grows (lib/heap-bound.ts)
boundHeap()

let s: WriterServices | undefined
let writer: ResultsWriter | undefined
const post = (m: FromWorker) => self.postMessage(m)

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  const m = e.data
  switch (m.type) {
    case 'init':
      try {
        // never at a lower priority: a transaction must not wait for a CPU while it holds SQLite's write lock
        s = await buildWriterServices(m.config)
        // results the database cannot take yet are kept on the disk meanwhile (results-spool.ts)
        // with Redis, a write's costs are counted there (by the main thread) before it begins
        const first = m.config.redis ? countFirst : undefined
        writer = new ResultsWriter(s, new BatchStore(s.storage), (done, settled, records) => tellRan(() => post({ type: 'ran', done, settled, records })), resultsSpool(m.config.dataDir), first)
        post({ type: 'ready' })
      } catch (err) {
        post({ type: 'init-failed', error: (err as Error)?.stack ?? String(err) })
      }
      return
    case 'outcomes':
      if (HOOKED) itemPorts.push(m.port)
      m.port.onmessage = (ev: MessageEvent<Outcome[]>) => {
        for (const o of ev.data) writer!.add(o)
      }
      return
    case 'counted':
      counting.get(m.n)?.()
      counting.delete(m.n)
      return
    case 'stop': {
      await writer?.writeAll()
      // what the database did not take stays in the spool: the next start stores it
      const left = writer?.close() ?? 0
      if (left > 0) s?.log.warn('batches: results kept in the spool for the next start', { results: left })
      try {
        await s?.storage.close()
      } catch {}
      s = undefined
      post({ type: 'stopped' })
      return
    }
  }
}

/** A write's costs, asked of the main thread to count before the write begins (results-writer.ts), by ask. */
const counting = new Map<number, () => void>()
let asks = 0
const countFirst: CountFirst = {
  count: (settled) =>
    new Promise<void>((resolve) => {
      const n = ++asks
      counting.set(n, resolve)
      post({ type: 'storing', n, settled })
    }),
  takeBack: (settled) => post({ type: 'not-stored', settled }),
}

/** Its item workers' ports (the crash test hook speaks to them). */
const itemPorts: MessagePort[] = []
/** Tells the main thread of a write, at once unless the crash test hook asks otherwise (test-crash.ts). */
function tellRan(tell: () => void) {
  if (!crashAfterStoreAsked()) return tell()
  for (const p of itemPorts) p.postMessage('crash')
  setTimeout(tell, AFTER_STORE_TELL_MS)
}
