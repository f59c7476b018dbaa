// Runs in a Bun Worker, on its own connection to the SQLite file: the WAL's checkpoints, so the
// fsync of a checkpoint never stalls the request thread (SQLite's automatic checkpoint runs
// inside whichever commit crosses the threshold), and the batched writes of write-jobs.ts
// (records, responses threads), so their commits do not either: on a busy core the kernel puts
// a request ahead of a commit here, where on the request thread it would wait it out (issue 12).
import { Database } from 'bun:sqlite'
import type { Sql } from './sql.ts'
import { SqliteSql } from './sqlite-sql.ts'
import { WRITE_JOBS, type WriteJobName } from './write-jobs.ts'

declare const self: Worker

export type WriterMessage =
  | { start: { file: string; intervalMs: number } }
  | { stop: true }
  | { job: { id: number; name: WriteJobName; payload: unknown } }
export type WriterReply = 'started' | 'stopped' | { done: number; result?: unknown; error?: string }

let db: Database | undefined
let sql: SqliteSql | undefined
let timer: ReturnType<typeof setInterval> | undefined
/** Jobs run one after another, in the order posted; a stop waits for them. */
let work: Promise<unknown> = Promise.resolve()

self.onmessage = (e: MessageEvent<WriterMessage>) => {
  const m = e.data
  if ('start' in m) {
    db = new Database(m.start.file, { strict: true })
    // per connection, as the request thread's (client.ts): WAL without an fsync a commit
    db.exec('PRAGMA busy_timeout = 5000')
    db.exec('PRAGMA synchronous = NORMAL')
    db.exec('PRAGMA foreign_keys = ON')
    sql = new SqliteSql(db)
    timer = setInterval(() => {
      try {
        // PASSIVE: copies what it can without waiting on readers or blocking writers
        db!.exec('PRAGMA wal_checkpoint(PASSIVE)')
      } catch {
        // busy: the next tick tries again
      }
    }, m.start.intervalMs)
    self.postMessage('started' satisfies WriterReply)
  } else if ('job' in m) {
    const { id, name, payload } = m.job
    const run = WRITE_JOBS[name] as (q: Sql, p: unknown) => Promise<unknown>
    work = work.then(() =>
      sql!.tx((q) => run(q, payload)).then(
        (result) => self.postMessage({ done: id, result } satisfies WriterReply),
        (err) => self.postMessage({ done: id, error: String((err as Error)?.message ?? err) } satisfies WriterReply),
      ),
    )
  } else if ('stop' in m) {
    clearInterval(timer)
    void work.then(() => {
      db?.close()
      self.postMessage('stopped' satisfies WriterReply)
    })
  }
}
