// A batch and its results as the OpenAI-shaped routes show them: the Batch
// object the `openai` SDK reads, the list, the results page, one item result, and the lines
// of the output and error files in OpenAI's batch output format. Pure. Results are stored as
// JSON text and go out by concatenation: a page of results is never parsed again.
import { extrasOf, extrasWire } from '../generations/extras.ts'
import type { Usage } from '../ir/types.ts'
import type { ItemRow } from './store.ts'
import { ITEM_CODES, type BatchRow } from './types.ts'

const sec = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000))

const count = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0)

/** An item's usage in the generation record's words, as JSON; null when nothing was used. */
export function usageText(u: Usage | undefined): string | null {
  if (!u) return null
  const read = count(u.cacheReadTokens)
  const write = count(u.cacheWriteTokens)
  const prompt = count(u.inputTokens) + read + write
  const completion = count(u.outputTokens)
  if (prompt + completion === 0) return null
  const out: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  }
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: count(u.reasoningTokens) }
  // what else its cost counts, as the record shows it (hour writes, audio, searches, the image tool)
  const extras = extrasWire(extrasOf(u))
  if (extras) Object.assign(out, extras)
  return JSON.stringify(out)
}

/**
 * OpenAI's Batch object, plus `settings` (the concurrency asked for). A cancelled batch is
 * `cancelling` until its items in flight have landed and its output files are written (its
 * `cancelled_at` then), as OpenAI's is.
 */
export function toOpenAIBatch(b: BatchRow) {
  const cancelling = b.status === 'cancelled' && b.endedAt === null
  return {
    id: b.id,
    object: 'batch' as const,
    endpoint: b.endpoint,
    errors: b.errors ? { object: 'list', data: JSON.parse(b.errors) as unknown[] } : null,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: cancelling ? ('cancelling' as const) : b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: sec(b.createdAt)!,
    in_progress_at: sec(b.inProgressAt),
    expires_at: sec(b.expiresAt),
    finalizing_at: null,
    completed_at: sec(b.completedAt),
    failed_at: sec(b.failedAt),
    expired_at: sec(b.expiredAt),
    cancelling_at: sec(b.cancelledAt),
    // only a batch that ended cancelled was: a completed, failed or expired one ends without it
    cancelled_at: b.status === 'cancelled' && !cancelling ? sec(b.endedAt ?? b.cancelledAt) : null,
    request_counts: { total: b.total, completed: b.succeeded, failed: b.failed },
    metadata: b.metadata ? (JSON.parse(b.metadata) as Record<string, unknown>) : null,
    settings: { concurrency: b.concurrency },
  }
}

export function toOpenAIList(page: { data: BatchRow[]; hasMore: boolean }) {
  const data = page.data.map(toOpenAIBatch)
  return { object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }
}

/** One item result: `{index, status, result, error?, usage?, custom_id?}`, as JSON text. */
export function itemResultText(r: ItemRow): string {
  let out = `{"index":${r.idx},"status":"${r.status}","result":${r.status === 'succeeded' && r.response !== null ? oneLine(r.response) : 'null'}`
  if (r.status === 'failed' && r.error !== null) out += `,"error":${r.error}`
  if (r.usage !== null) out += `,"usage":${r.usage}`
  if (r.customId !== null) out += `,"custom_id":${JSON.stringify(r.customId)}`
  return out + '}'
}

/** The results page's JSON text before its results (itemResultText's, joined by commas), and after them (results-page.ts). */
export const resultsPageHead = (b: BatchRow, offset: number, limit: number) => `{"id":${JSON.stringify(b.id)},"status":"${b.status}","total":${b.total},"offset":${offset},"limit":${limit},"results":[`
export const RESULTS_PAGE_TAIL = ']}'

/** A request id of OpenAI's batch output format: one per item, stable. */
export function batchRequestId(b: BatchRow, idx: number): string {
  return `batch_req_${b.id.replace(/^[a-z]+_/, '')}_${idx}`
}

const ENDED_CODES = new Set<string>(Object.values(ITEM_CODES))

/**
 * One line of the output file (succeeded) or the error file (failed), in OpenAI's batch
 * output format: `{id, custom_id, response: {status_code, request_id, body}, error}`. An
 * item the batch's end failed before it ran has no response, only `error: {code, message}`.
 */
export function outputLineText(b: BatchRow, r: ItemRow): string {
  const head = `{"id":"${batchRequestId(b, r.idx)}","custom_id":${JSON.stringify(r.customId)}`
  const rid = JSON.stringify(r.requestId)
  if (r.status === 'succeeded') return `${head},"response":{"status_code":200,"request_id":${rid},"body":${r.response === null ? 'null' : oneLine(r.response)}},"error":null}`
  const e = JSON.parse(r.error ?? '{}') as { message?: string; code?: string; status?: number }
  if (e.code && ENDED_CODES.has(e.code)) return `${head},"response":null,"error":${JSON.stringify({ code: e.code, message: e.message ?? '' })}}`
  const body = { error: { message: e.message ?? '', type: e.code ?? 'error', param: null, code: e.code ?? null } }
  return `${head},"response":{"status_code":${e.status ?? 500},"request_id":${rid},"body":${JSON.stringify(body)}},"error":null}`
}

/**
 * A stored reply as part of one line of an output file or export (JSONL), whatever the
 * upstream's layout: OpenAI pretty-prints its JSON. A JSON string never holds a raw line break,
 * so each one, with the indentation after it, is whitespace between tokens: taken out, nothing
 * else changes (no number is read and written again).
 */
export function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]+[ \t]*/g, '') : json
}
