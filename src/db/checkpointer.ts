// The server's SQLite write thread (checkpoint-worker.ts): the WAL's checkpoints and the batched
// writes of write-jobs.ts, off the request thread. Until the worker reports that it runs, and
// after it stops or fails, SQLite's automatic checkpoint stays on and the writes run in-thread
// (Storage.writer is set only meanwhile).
import type { Logger } from '../http/log.ts'
import type { Storage } from './client.ts'
import type { WriterMessage, WriterReply } from './checkpoint-worker.ts'
import type { BackgroundWriter } from './write-jobs.ts'

const DEFAULT_AUTOCHECKPOINT = 1000

/** Bun's Worker can be ref'd and unref'd (the DOM type does not say so). */
type BunWorker = Worker & { ref(): void; unref(): void }

/**
 * From source, the worker sits beside this file. In the compiled binary every bundled
 * module has the executable's URL, and the worker entry point is embedded at its path
 * below the bundle root (src/): `db/checkpoint-worker`.
 */
function workerUrl(): string {
  return import.meta.url.includes('/$bunfs/')
    ? new URL('./db/checkpoint-worker.ts', import.meta.url).href
    : new URL('./checkpoint-worker.ts', import.meta.url).href
}

export async function startCheckpointer(storage: Storage, log: Logger, intervalMs = 1000): Promise<() => Promise<void>> {
  const sqlite = storage.sqlite
  // PostgreSQL checkpoints itself
  if (!sqlite || !storage.file) return async () => {}
  let worker: BunWorker
  try {
    worker = new Worker(workerUrl()) as BunWorker
  } catch (e) {
    log.warn('checkpoint worker unavailable: SQLite checkpoints and writes inline', { error: String(e) })
    return async () => {}
  }
  const post = (m: WriterMessage) => worker.postMessage(m)
  const reply = (what: WriterReply, ms: number) =>
    new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), ms)
      worker.addEventListener('message', function on(e: MessageEvent) {
        if (e.data !== what) return
        clearTimeout(t)
        worker.removeEventListener('message', on)
        resolve(true)
      })
    })
  const started = reply('started', 5000)
  post({ start: { file: storage.file, intervalMs } })
  if (!(await started)) {
    log.warn('checkpoint worker did not start: SQLite checkpoints and writes inline')
    worker.terminate()
    return async () => {}
  }
  log.debug('checkpoint worker started', { interval_ms: intervalMs })
  sqlite.exec('PRAGMA wal_autocheckpoint = 0')
  // an idle worker never holds the process up; one that owes an answer does
  worker.unref()

  const owed = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let nextId = 1
  worker.addEventListener('message', (e: MessageEvent<WriterReply>) => {
    const m = e.data
    if (typeof m !== 'object') return
    const job = owed.get(m.done)
    owed.delete(m.done)
    if (owed.size === 0) worker.unref()
    if (m.error !== undefined) job?.reject(new Error(m.error))
    else job?.resolve(m.result)
  })
  const writer: BackgroundWriter = {
    run: (name, payload) =>
      new Promise((resolve, reject) => {
        const id = nextId++
        owed.set(id, { resolve: resolve as (v: unknown) => void, reject })
        worker.ref()
        post({ job: { id, name, payload } })
      }),
  }
  // A worker that dies fails what it owes (the recorder and thread store keep such writes and
  // try again, in-thread from then on) and hands the checkpoints back to SQLite.
  const failOwed = (why: string) => {
    for (const job of owed.values()) job.reject(new Error(why))
    owed.clear()
  }
  const inThread = () => {
    if (storage.writer === writer) delete storage.writer
    sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`)
  }
  worker.addEventListener('error', (e) => {
    log.error('SQLite write thread failed: writes and checkpoints run in-thread', { error: String((e as ErrorEvent).message ?? e) })
    inThread()
    failOwed('the SQLite write thread failed')
  })
  storage.writer = writer
  return async () => {
    // later writes (a last flush at shutdown) run in-thread; the worker finishes what it has
    inThread()
    const stopped = reply('stopped', 5000)
    post({ stop: true })
    await stopped
    // answered before 'stopped' unless the worker hung: then they are tried again in-thread
    failOwed('the SQLite write thread stopped')
    worker.terminate()
  }
}
