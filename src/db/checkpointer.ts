// The server's WAL checkpoints, moved to a Worker (see checkpoint-worker.ts). Until the
// worker reports that it runs, and after it stops, SQLite's automatic checkpoint stays on.
import type { Logger } from '../http/log.ts'
import type { Storage } from './client.ts'
import { startWorker } from '../lib/worker-url.ts'

const DEFAULT_AUTOCHECKPOINT = 1000


export async function startCheckpointer(storage: Storage, log: Logger, intervalMs = 1000): Promise<() => Promise<void>> {
  const sqlite = storage.sqlite
  // PostgreSQL checkpoints itself
  if (!sqlite || !storage.file) return async () => {}
  let worker: Worker
  try {
    worker = startWorker(import.meta.url, 'db/checkpoint-worker.ts')
  } catch (e) {
    log.warn('checkpoint worker unavailable: SQLite checkpoints inline', { error: String(e) })
    return async () => {}
  }
  const reply = (what: string, ms: number) =>
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
  worker.postMessage({ start: { file: storage.file, intervalMs } })
  if (!(await started)) {
    log.warn('checkpoint worker did not start: SQLite checkpoints inline')
    worker.terminate()
    return async () => {}
  }
  log.debug('checkpoint worker started', { interval_ms: intervalMs })
  sqlite.exec('PRAGMA wal_autocheckpoint = 0')
  // Bun's Worker can be unref'd (the DOM type does not say so): it never holds the process up
  ;(worker as unknown as { unref(): void }).unref()
  return async () => {
    sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`)
    const stopped = reply('stopped', 2000)
    worker.postMessage({ stop: true })
    await stopped
    worker.terminate()
  }
}
