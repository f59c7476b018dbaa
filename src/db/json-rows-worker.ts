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
export type JsonRowsReply = { id: number; error?: string; row?: Record<string, unknown> | null; pieces?: string[] }

let db: Database | undefined
const stmts = new Map<string, Statement>()

function answer(job: JsonRowsJob): JsonRowsReply {
  if (job.op === 'open') {
    db = new Database(job.file, { readonly: true, strict: true })
    db.exec('PRAGMA busy_timeout = 5000')
    return { id: job.id }
  }
  if (job.op === 'cut') return { id: job.id, pieces: cutJsonArray(job.text, job.pieceChars) }
  if (!db) throw new Error('no database open')
  let stmt = stmts.get(job.query)
  if (!stmt) stmts.set(job.query, (stmt = db.prepare(job.query)))
  const row = (stmt.get(...job.params) as Record<string, unknown> | null) ?? null
  if (row) for (const column of job.cut) if (typeof row[column] === 'string') row[column] = cutJsonArray(row[column] as string, job.pieceChars)
  return { id: job.id, row }
}

self.onmessage = (e: MessageEvent<JsonRowsJob>) => {
  let reply: JsonRowsReply
  try {
    reply = answer(e.data)
  } catch (err) {
    reply = { id: e.data.id, error: err instanceof Error ? err.message : String(err) }
  }
  self.postMessage(reply)
  // what it read is garbage now, as large as the row: collected at once, here, where it holds
  // no request (else this thread's heap keeps a copy of the largest rows read a while)
  if (e.data.op !== 'open' && (reply.row || reply.pieces)) Bun.gc(true)
}
