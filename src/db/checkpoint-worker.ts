// Runs in a Bun Worker: checkpoints the WAL on its own connection, so the fsync of a
// checkpoint never stalls the request thread (SQLite's automatic checkpoint runs inside
// whichever commit crosses the threshold — there, a recorder flush every few ms).
import { Database } from 'bun:sqlite'

declare const self: Worker

let db: Database | undefined
let timer: ReturnType<typeof setInterval> | undefined

self.onmessage = (e: MessageEvent<{ start?: { file: string; intervalMs: number }; stop?: true }>) => {
  if (e.data.start) {
    db = new Database(e.data.start.file)
    db.exec('PRAGMA busy_timeout = 5000')
    timer = setInterval(() => {
      try {
        // PASSIVE: copies what it can without waiting on readers or blocking writers
        db!.exec('PRAGMA wal_checkpoint(PASSIVE)')
      } catch {
        // busy: the next tick tries again
      }
    }, e.data.start.intervalMs)
    self.postMessage('started')
  }
  if (e.data.stop) {
    clearInterval(timer)
    db?.close()
    self.postMessage('stopped')
  }
}
