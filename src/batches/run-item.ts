// Runs in a batch worker: one item through the one generation pipeline, as a non-streaming
// request of the batch's key (stream flags are accepted, the result is stored as JSON).
// An upstream 429 or 5xx is tried again with backoff before the item fails. Every record the
// attempts make is collected and kept with the result: the results writer records them in
// the same transaction as the result, so an item is billed exactly once, when it completes.
import type { GenerationInput, GenerationSink } from '../generations/types.ts'
import type { RequestContext } from '../pipeline/context.ts'
import { generateJson } from '../pipeline/generate.ts'
import { jsonText } from '../pipeline/reply.ts'
import { retryAfterMs } from '../providers/http.ts'
import type { GenerationServices, ThreadServices } from '../services.ts'
import { surfaceFor } from './endpoints.ts'
import { usageText } from './shapes.ts'
import type { BatchStore } from './store.ts'
import { isStoreDown } from '../db/unavailable.ts'
import type { ItemError, ItemJob, ItemOutcome } from './types.ts'

/** Item-level backoff: BASE · 2^attempt, capped, jittered to [½, 1] of that. */
export const ITEM_RETRY = { baseMs: 500, capMs: 30_000, maxRetryAfterMs: 60_000 }

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504, 529])

export function itemBackoffMs(attempt: number, retryAfter: string | undefined, random: () => number = Math.random): number {
  const hinted = retryAfterMs(retryAfter)
  if (hinted !== undefined) return Math.min(hinted, ITEM_RETRY.maxRetryAfterMs)
  const exp = Math.min(ITEM_RETRY.capMs, ITEM_RETRY.baseMs * 2 ** attempt)
  return Math.round(exp * (0.5 + random() / 2))
}

const CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  408: 'timeout',
  413: 'request_too_large',
  429: 'rate_limited',
  499: 'cancelled',
  504: 'upstream_timeout',
}

export function codeFor(status: number): string {
  return CODES[status] ?? (status >= 500 ? 'upstream_error' : 'invalid_request')
}

/** Whatever a generation threw, as an item error (and the Retry-After it carried). */
export function itemErrorOf(e: unknown): ItemError & { retryAfter?: string } {
  const o = (typeof e === 'object' && e !== null ? e : {}) as { status?: unknown; message?: unknown; type?: unknown; retryAfter?: unknown }
  const status = typeof o.status === 'number' && o.status >= 400 && o.status <= 599 ? o.status : 500
  const message = typeof o.message === 'string' && o.message !== '' ? o.message : String(e)
  const code = typeof o.type === 'string' && o.type !== '' ? o.type : codeFor(status)
  return { message, code, status, retryAfter: typeof o.retryAfter === 'string' ? o.retryAfter : undefined }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** How often an item's body is read again while the database is away. */
const BODY_RETRY_MS = 500

/**
 * The item's request body. While the database is away it is read again until it answers: the
 * item has not been sent, and it must not fail for an outage (a stop meanwhile ends its worker,
 * and an item whose call had not begun runs after the restart).
 */
async function bodyOf(store: BatchStore, job: ItemJob): Promise<string | null> {
  for (;;) {
    try {
      return await store.body(job.batchId, job.idx)
    } catch (e) {
      if (!isStoreDown(e)) throw e
      await sleep(BODY_RETRY_MS)
    }
  }
}

/**
 * `holdAnew`: a fallback model's hold, asked of the main thread (which holds the item).
 * `calling`: awaited before the item's first upstream call (its worker tells the main thread).
 */
export async function runItem(
  s: GenerationServices & ThreadServices,
  job: ItemJob,
  maxRetries: number,
  store: BatchStore,
  holdAnew?: RequestContext['holdAnew'],
  calling?: () => Promise<void>,
): Promise<ItemOutcome> {
  const records: GenerationInput[] = []
  const late: Promise<unknown>[] = []
  const sink: GenerationSink = {
    record: (i) => void records.push(i),
    recordLater: (p) => void late.push(p.then((i) => records.push(i))),
  }
  // the usage is the last record's once every record is in: one may come late (its count, or
  // the look at the key's grants of a container its reply made)
  const done = async (o: Omit<ItemOutcome, 'records' | 'requestId' | 'usage'>): Promise<ItemOutcome> => {
    await Promise.allSettled(late)
    return { ...o, usage: usageText(records.at(-1)?.usage), requestId: job.requestId, records }
  }
  const body = await bodyOf(store, job)
  if (body === null) return done({ status: 'failed', error: { status: 500, code: 'item_missing', message: `batch item ${job.idx} is not in the database` } })
  await calling?.()
  for (let attempt = 0; ; attempt++) {
    const rc: RequestContext = { apiKey: job.apiKey, requestId: job.requestId, signal: new AbortController().signal, batchId: job.batchId, betas: [], holdAnew }
    try {
      const spec = surfaceFor(s, job.endpoint)
      // results are stored as JSON: a streaming item runs as a non-streaming one
      // this item's records come to its sink, stored with its result
      const reply = await generateJson(s, spec, JSON.parse(body) as Record<string, unknown>, rc, sink)
      const text = jsonText(reply)
      if (reply.status < 300) return done({ status: 'succeeded', response: text })
      throw { status: reply.status, message: text.slice(0, 2000) }
    } catch (e) {
      const { retryAfter, ...error } = itemErrorOf(e)
      if (attempt < maxRetries && RETRYABLE.has(error.status)) {
        await sleep(itemBackoffMs(attempt, retryAfter))
        continue
      }
      return done({ status: 'failed', error })
    }
  }
}
