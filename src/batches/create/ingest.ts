// Runs in a batch worker: a create body → its items checked and stored, or the first problem
// as a 400 that names the line (or inline item). A JSONL file is read as a stream, line by
// line; nothing holds the whole file.
import { echo, HttpError } from '../../http/errors.ts'
import { parseJsonSafe } from '../../http/json-safe.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import type { GenerationServices, ThreadServices } from '../../services.ts'
import { surfaceFor } from '../endpoints.ts'
import type { IngestJob, IngestResult } from '../types.ts'
import { parseCreate } from './envelope.ts'
import { jsonlLines } from './lines.ts'
import { ItemChecker } from './validate.ts'
import { ItemWriter } from './writer.ts'

/** The size limits: a JSONL line after encoding, and a whole batch. */
export const MAX_LINE_BYTES = 256 * 1024
export const MAX_BATCH_BYTES = 500 * 1024 * 1024

/** Give the worker's loop a turn (other items run on it) every so many items. */
const YIELD_EVERY = 256
const turn = () => new Promise((r) => setTimeout(r, 0))

async function* bytesOf(s: Pick<GenerationServices, 'files'>, ownerId: string, fileId: string): AsyncGenerator<Uint8Array> {
  const rec = await s.files.get(ownerId, fileId)
  if (!rec) throw new HttpError(400, `input_file_id: no file ${echo(fileId)}`)
  if (rec.bytes > MAX_BATCH_BYTES) throw new HttpError(400, `input_file_id: the file is ${rec.bytes} bytes; a batch takes at most ${MAX_BATCH_BYTES}`)
  const blob = await s.files.open(rec)
  if (!blob) throw new HttpError(400, `input_file_id: no file ${echo(fileId)}`)
  const body = blob.kind === 'redirect' ? (await fetch(blob.url)).body : blob.body instanceof Blob ? blob.body.stream() : blob.body
  if (!body) return
  yield* body as unknown as AsyncIterable<Uint8Array>
}

export async function ingest(s: ThreadServices & Pick<GenerationServices, 'catalog' | 'files'>, job: IngestJob): Promise<IngestResult> {
  let writer: ItemWriter | undefined
  try {
    const { envelope, requests } = parseCreate(job.family, parseJsonSafe(job.text))
    const spec = surfaceFor(s, envelope.endpoint)
    const rc: RequestContext = { apiKey: job.apiKey, requestId: `batch-create-${job.batchId}`, signal: new AbortController().signal, betas: [], batchId: job.batchId }
    const checker = new ItemChecker(s, spec, job.family, envelope.endpoint, rc)
    writer = new ItemWriter(s.storage.sql, job.batchId)
    await writer.begin()
    let total = 0
    if (requests) {
      if (requests.length > job.maxItems) throw new HttpError(400, `requests: ${requests.length} items; a batch holds at most ${job.maxItems}`)
      for (const [i, raw] of requests.entries()) {
        await writer.add(i, await checker.check(raw, `requests[${i}]`))
        if (++total % YIELD_EVERY === 0) await turn()
      }
    } else {
      const lines = jsonlLines(bytesOf(s, job.apiKey.id, envelope.inputFileId!), { maxLineBytes: MAX_LINE_BYTES, maxTotalBytes: MAX_BATCH_BYTES })
      for await (const line of lines) {
        if (line.text.trim() === '') continue
        if (total >= job.maxItems) throw new HttpError(400, `line ${line.n}: a batch holds at most ${job.maxItems} items`)
        let raw: unknown
        try {
          raw = parseJsonSafe(line.text, 'JSON')
        } catch (e) {
          throw new HttpError(400, `line ${line.n}: ${(e as Error).message}`)
        }
        await writer.add(total++, await checker.check(raw, `line ${line.n}`))
        if (total % YIELD_EVERY === 0) await turn()
      }
      if (total === 0) throw new HttpError(400, 'input_file_id: the file holds no requests (one JSON object per line)')
    }
    await writer.flush()
    return { ok: true, total, envelope }
  } catch (e) {
    await writer?.discard().catch(() => {})
    if (e instanceof HttpError) return { ok: false, status: e.status, message: e.message }
    // not the client's doing (the database refused the items, the file's store is away): its
    // words are for the log (a database's can name its host), a retry for the client
    s.log.error('batches: a create could not store its items', { batch_id: job.batchId, error: (e as Error)?.message ?? String(e) })
    return { ok: false, status: 503, message: 'the batch could not be stored now; nothing was created, retry shortly' }
  }
}
