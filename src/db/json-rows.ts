// Large JSON columns read and cut off the request thread (json-rows-worker.ts), then parsed a
// piece at a time with a turn of the loop between: a 10 MB stored thread held /health for
// 200–400 ms read, parsed and collected in one go. The worker starts with the first large read
// and never keeps the process alive; should it be unavailable (or fail), the same read and
// parse run here as before.
import { nextTurn } from '../lib/turn.ts'
import { startWorker } from '../lib/worker-url.ts'
import type { JsonRowsJob, JsonRowsReply } from './json-rows-worker.ts'

/** Text is cut into pieces of about this many characters (a piece parses in a few ms). */
export const PIECE_CHARS = 256 * 1024

type BunWorker = Worker & { ref(): void; unref(): void }

/** What a job has been sent so far: its pieces by column ('' for a cut), then its row. */
interface Answer {
  pieces: Map<string, string[]>
  row?: Record<string, unknown> | null
}
interface Waiting {
  answer: Answer
  resolve: (a: Answer) => void
  reject: (e: Error) => void
}
type Job = JsonRowsJob extends infer J ? (J extends unknown ? Omit<J, 'id'> : never) : never

export class JsonRows {
  private worker: BunWorker | null | undefined
  private opened: Promise<void> | undefined
  private nextId = 1
  private readonly waiting = new Map<number, Waiting>()

  /** `file`: the SQLite database a read is of (none: only text already read is cut). */
  constructor(private readonly file?: string) {}

  private start(): BunWorker | null {
    if (this.worker !== undefined) return this.worker
    try {
      const w = startWorker(import.meta.url, 'db/json-rows-worker.ts') as BunWorker
      w.onmessage = (e: MessageEvent<JsonRowsReply>) => {
        const r = e.data
        const job = this.waiting.get(r.id)
        if (!job) return
        if (r.piece !== undefined) {
          const column = r.column ?? ''
          const got = job.answer.pieces.get(column)
          if (got) got.push(r.piece)
          else job.answer.pieces.set(column, [r.piece])
          return
        }
        this.waiting.delete(r.id)
        if (this.waiting.size === 0) w.unref()
        if (r.error !== undefined) return job.reject(new Error(r.error))
        job.answer.row = r.row
        job.resolve(job.answer)
      }
      w.onerror = (e) => this.fail(`json rows worker failed: ${e.message}`)
      w.unref()
      this.worker = w
    } catch {
      this.worker = null
    }
    return this.worker
  }

  private fail(why: string) {
    this.worker?.terminate()
    this.worker = null
    for (const job of this.waiting.values()) job.reject(new Error(why))
    this.waiting.clear()
  }

  private post(job: Job): Promise<Answer> {
    const w = this.start()
    if (!w) return Promise.reject(new Error('no json rows worker'))
    const id = this.nextId++
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { answer: { pieces: new Map() }, resolve, reject })
      w.ref()
      w.postMessage({ ...job, id })
    })
  }

  /** Whether reads can go to the worker (a SQLite file, and a worker that started). */
  get reads(): boolean {
    return this.file !== undefined && this.start() !== null
  }

  /**
   * The row `query` reads, its `cut` columns (JSON arrays' text) each as pieces to parse with
   * `parsePieces`; null when there is none. Read on the worker's connection: what it reads is
   * what is committed.
   */
  async read(query: string, params: (string | number | null)[], cut: string[]): Promise<Record<string, unknown> | null> {
    if (!this.file) throw new Error('no database file to read')
    this.opened ??= this.post({ op: 'open', file: this.file }).then(() => {})
    await this.opened
    const got = await this.post({ op: 'read', query, params, cut, pieceChars: PIECE_CHARS })
    if (!got.row) return null
    for (const column of cut) if (got.pieces.has(column)) got.row[column] = got.pieces.get(column)
    return got.row
  }

  /** `text` (a JSON array) cut into pieces on the worker, or whole when there is none to cut it. */
  async cut(text: string): Promise<string[]> {
    if (text.length < 2 * PIECE_CHARS || !this.start()) return [text]
    const got = await this.post({ op: 'cut', text, pieceChars: PIECE_CHARS }).catch(() => undefined)
    return got?.pieces.get('') ?? [text]
  }

  close() {
    this.worker?.terminate()
    this.worker = null
  }
}

/** The items of a JSON array's pieces, parsed one a turn (each piece let go once parsed). */
export async function parsePieces<T>(pieces: string[], into: T[] = []): Promise<T[]> {
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) await nextTurn()
    for (const it of JSON.parse(pieces[i]!) as T[]) into.push(it)
    pieces[i] = ''
  }
  return into
}
