// The output and error files of a finished batch (OpenAI's batch output format),
// owned by the batch's key: written from the stored results as a stream, a few hundred
// rows at a time, straight into the blob store.
import type { FilesService } from '../files/service.ts'
import { outputLineText } from './shapes.ts'
import type { BatchStore } from './store.ts'
import type { BatchRow } from './types.ts'

const ROWS = 200

async function* lines(store: BatchStore, b: BatchRow, status: 'succeeded' | 'failed'): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder()
  for (let from = 0; ; ) {
    const rows = await store.results(b.id, from, Number.MAX_SAFE_INTEGER, ROWS, status)
    if (rows.length === 0) return
    yield enc.encode(rows.map((r) => outputLineText(b, r)).join('\n') + '\n')
    from = rows.at(-1)!.idx + 1
    // the next chunk after a turn of the loop: interactive requests go first
    await new Promise((r) => setTimeout(r, 0))
  }
}

async function writeFile(files: FilesService, store: BatchStore, b: BatchRow, status: 'succeeded' | 'failed'): Promise<string> {
  const now = Date.now()
  const blob = await files.store(lines(store, b, status))
  const rec = await files.commit(b.apiKeyId, 'openai', now, blob, {
    filename: `${b.id}_${status === 'succeeded' ? 'output' : 'error'}.jsonl`,
    purpose: 'batch_output',
    mimeType: 'application/jsonl',
    // anchored at the file's own creation, not the batch's (OpenAI: "the anchor is the file creation time")
    expiresAt: b.outputExpiresAfter !== null ? now + b.outputExpiresAfter * 1000 : null,
  })
  return rec.id
}

/** The output file (if any item succeeded) and the error file (if any failed). */
export async function writeOutputFiles(files: FilesService, store: BatchStore, b: BatchRow): Promise<{ outputFileId: string | null; errorFileId: string | null }> {
  return {
    outputFileId: b.succeeded > 0 ? await writeFile(files, store, b, 'succeeded') : null,
    errorFileId: b.failed > 0 ? await writeFile(files, store, b, 'failed') : null,
  }
}
