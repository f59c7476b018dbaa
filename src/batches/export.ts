// Exports of a batch's results: NDJSON, one item result per line (the default);
// gzipped NDJSON; or a ZIP of results.jsonl (succeeded), errors.jsonl (failed) and
// batch.json. Each is a pull stream: rows are read from the database a few hundred at a
// time, only when the client has taken what came before, so no export is ever held whole.
// fflate writes the gzip and the ZIP, on a worker of its own (deflate.ts); tests read them back
// with other libraries.
import { HttpError } from '../http/errors.ts'
import { turnOfItsOwn } from '../lib/turn.ts'
import { deflating } from './deflate.ts'
import { itemResultText } from './shapes.ts'
import type { BatchStore, ItemRow } from './store.ts'
import type { BatchRow } from './types.ts'

/**
 * Rows a page. The turn of its own before each page is what keeps exports under way together from
 * holding the loop in proportion to their number; a step of 100 rows (the results pages') shortened
 * that hold a little more (16 ZIP exports: 11–21 ms against 14–27) and made a 50,000-result
 * export a fifth to a third slower (docs/bench.md).
 */
const ROWS = 200

export interface ExportRange {
  /** First index (inclusive). */
  from: number
  /** Past the last index. */
  to: number
}

/**
 * The batch's item results with index in `range`, in index order, a page of rows at a time.
 * A batch deleted while they are read (its row goes first, then its items in chunks) ends the
 * download with an error, never with a short answer that looks whole: each page is read, then
 * the batch is checked to be still there.
 */
export async function* resultPages(store: Pick<BatchStore, 'results' | 'byId'>, batchId: string, range: ExportRange, status?: 'succeeded' | 'failed'): AsyncGenerator<ItemRow[]> {
  for (let from = range.from; from < range.to; ) {
    // a turn of the loop of its own before every page, the first too: the reads answer at once on
    // SQLite, and a fast client's pulls chained a whole export into one stretch (50,000 results:
    // 0.4-1.1 s); exports that began together (their requests, or the compression worker's
    // answers to their ZIP entries, came in one turn) read their first pages back to back, so
    // the loop's hold grew with the exports under way (sixteen ZIP exports: 17 pages in one stretch)
    await turnOfItsOwn()
    const rows = await store.results(batchId, from, range.to, ROWS, status)
    const now = await store.byId(batchId)
    if (!now) throw new Error(`batch ${batchId} was deleted while its results were read`)
    if (now.itemsPrunedAt !== null) throw new Error(`batch ${batchId}: its results were removed (batches.retention_days) while they were read`)
    if (rows.length === 0) return
    yield rows
    from = rows.at(-1)!.idx + 1
  }
}

/** A 404 for the results of a batch the retention has emptied (its row, counts and output files stay). */
export function resultsKept(b: BatchRow): BatchRow {
  if (b.itemsPrunedAt === null) return b
  const on = new Date(b.itemsPrunedAt).toISOString()
  throw new HttpError(404, `batch ${b.id}: its results are no longer kept; they were removed on ${on}, past this gateway's batches.retention_days after the batch ended`)
}

/** Item results with index in `range`, as NDJSON, a chunk of rows at a time. */
export async function* ndjson(store: BatchStore, b: BatchRow, range: ExportRange, status?: 'succeeded' | 'failed'): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder()
  for await (const rows of resultPages(store, b.id, range, status)) yield enc.encode(rows.map(itemResultText).join('\n') + '\n')
}

/** The bytes gzipped, a piece at a time (on the compression worker, which each piece is handed to). */
export async function* gzipped(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const gz = deflating('gzip')
  try {
    for await (const data of source) yield* await gz.step({ op: 'data', data, final: false })
    yield* await gz.step({ op: 'data', data: new Uint8Array(0), final: true })
  } finally {
    gz.close()
  }
}

export interface ZipEntry {
  name: string
  data: AsyncIterable<Uint8Array>
}

/** A ZIP of the entries, each deflated as it streams (on the compression worker); entries are written one after another. */
export async function* zipped(entries: ZipEntry[]): AsyncGenerator<Uint8Array> {
  const zip = deflating('zip')
  try {
    for (const e of entries) {
      yield* await zip.step({ op: 'entry', name: e.name })
      for await (const data of e.data) yield* await zip.step({ op: 'data', data, final: false })
      yield* await zip.step({ op: 'data', data: new Uint8Array(0), final: true })
    }
    yield* await zip.step({ op: 'end' })
  } finally {
    zip.close()
  }
}

async function* once(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text)
}

/** The ZIP layout: results.jsonl, errors.jsonl, batch.json. */
export function zipExport(store: BatchStore, b: BatchRow, range: ExportRange, batchJson: unknown): AsyncGenerator<Uint8Array> {
  return zipped([
    { name: 'results.jsonl', data: ndjson(store, b, range, 'succeeded') },
    { name: 'errors.jsonl', data: ndjson(store, b, range, 'failed') },
    { name: 'batch.json', data: once(JSON.stringify(batchJson, null, 2) + '\n') },
  ])
}

/** A generator as a byte stream that asks it for more only when the reader wants more. */
export function pullStream(gen: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await gen.next()
        if (done) controller.close()
        else controller.enqueue(value)
      },
      async cancel() {
        await gen.return(undefined)
      },
    },
    { highWaterMark: 0 },
  )
}
