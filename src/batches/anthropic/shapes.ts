// A batch and its results in Anthropic's Message Batches shapes, so `@anthropic-ai/sdk`'s
// `messages.batches` works: the MessageBatch object, its list page, and the JSONL result
// lines at `results_url`. Pure.
import { messagesErrorType } from '../../surfaces/messages/errors.ts'
import type { ItemRow } from '../store.ts'
import { oneLine } from '../shapes.ts'
import { ITEM_CODES, type BatchRow } from '../types.ts'

const rfc3339 = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export function processingStatus(b: BatchRow): 'in_progress' | 'canceling' | 'ended' {
  if (b.endedAt !== null) return 'ended'
  return b.status === 'cancelled' ? 'canceling' : 'in_progress'
}

export function resultsUrl(origin: string, id: string): string {
  return `${origin}/api/beta/v1/messages/batches/${id}/results`
}

export function toMessageBatch(b: BatchRow, origin: string) {
  const errored = b.failed - b.cancelledItems - b.expiredItems
  return {
    id: b.id,
    type: 'message_batch' as const,
    processing_status: processingStatus(b),
    request_counts: {
      processing: Math.max(0, b.total - b.succeeded - b.failed),
      succeeded: b.succeeded,
      errored: Math.max(0, errored),
      canceled: b.cancelledItems,
      expired: b.expiredItems,
    },
    ended_at: rfc3339(b.endedAt),
    created_at: rfc3339(b.createdAt)!,
    expires_at: rfc3339(b.expiresAt)!,
    archived_at: null,
    cancel_initiated_at: rfc3339(b.cancelledAt),
    results_url: b.endedAt !== null ? resultsUrl(origin, b.id) : null,
  }
}

export function toMessageBatchList(page: { data: BatchRow[]; hasMore: boolean }, origin: string) {
  const data = page.data.map((b) => toMessageBatch(b, origin))
  return { data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
}

/** One line of the results file: `{custom_id, result: {type: succeeded|errored|canceled|expired, …}}`. */
export function messageResultText(r: ItemRow): string {
  const head = `{"custom_id":${JSON.stringify(r.customId)},"result":`
  if (r.status === 'succeeded') return `${head}{"type":"succeeded","message":${r.response === null ? 'null' : oneLine(r.response)}}}`
  const e = JSON.parse(r.error ?? '{}') as { message?: string; code?: string; status?: number }
  if (e.code === ITEM_CODES.cancelled) return `${head}{"type":"canceled"}}`
  if (e.code === ITEM_CODES.expired) return `${head}{"type":"expired"}}`
  const error = { type: 'error', error: { type: messagesErrorType(e.status ?? 500, e.code), message: e.message ?? '' }, request_id: r.requestId }
  return `${head}{"type":"errored","error":${JSON.stringify(error)}}}`
}
