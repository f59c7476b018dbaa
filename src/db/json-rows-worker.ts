// Runs in a Bun Worker: reads a row whose columns hold large JSON arrays on its own read-only
// connection to the SQLite file (WAL lets it read beside the request thread's writes), and cuts
// each such column's text into pieces of whole items, each a JSON array of its own. The request
// thread then never makes the whole text (one synchronous call of 30–130 ms for 10 MB) and
// parses it a piece at a time, a turn of the loop between (json-rows.ts). The same cut serves
// text the request thread already holds (a row not written yet, PostgreSQL's reads).
import { Database, type Statement } from 'bun:sqlite'
import { cutJsonArray } from './json-cut.ts'

declare const self: Worker

export type JsonRowsJob =
  | { id: number; op: 'open'; file: string }
  | { id: number; op: 'read'; query: string; params: (string | number | null)[]; cut: string[]; pieceChars: number }
  | { id: number; op: 'cut'; text: string; pieceChars: number }
/**
 * The answer to a job: each piece first, a message of its own (`column` is the row's column it
 * is of; none for a `cut`), then the row's other columns (`done`). A message of flat fields is
 * passed without a copy; one holding an array is copied whole, on the receiving thread too.
 */
export type JsonRowsReply = { id: number; error?: string; piece?: string; column?: string; done?: true; row?: Record<string, unknown> | null }

let db: Database | undefined
const stmts = new Map<string, Statement>()

function answer(job: JsonRowsJob, send: (r: JsonRowsReply) => void) {
  if (job.op === 'open') {
    db = new Database(job.file, { readonly: true, strict: true })
    db.exec('PRAGMA busy_timeout = 5000')
    return send({ id: job.id, done: true })
  }
  if (job.op === 'cut') {
    for (const piece of cutJsonArray(job.text, job.pieceChars)) send({ id: job.id, piece })
    return send({ id: job.id, done: true })
  }
  if (!db) throw new Error('no database open')
  let stmt = stmts.get(job.query)
  if (!stmt) stmts.set(job.query, (stmt = db.prepare(job.query)))
  const row = (stmt.get(...job.params) as Record<string, unknown> | null) ?? null
  if (row) {
    for (const column of job.cut) {
      if (typeof row[column] !== 'string') continue
      for (const piece of cutJsonArray(row[column] as string, job.pieceChars)) send({ id: job.id, column, piece })
      delete row[column]
    }
  }
  send({ id: job.id, done: true, row })
}

self.onmessage = (e: MessageEvent<JsonRowsJob>) => {
  try {
    answer(e.data, (r) => self.postMessage(r))
  } catch (err) {
    self.postMessage({ id: e.data.id, error: err instanceof Error ? err.message : String(err) } satisfies JsonRowsReply)
  }
  // what it read is garbage now, as large as the row: collected at once, here, where it holds
  // no request (else this thread's heap keeps a copy of the largest rows read a while)
  if (e.data.op !== 'open') Bun.gc(true)
}
