// What the batch engine knows about a batch and its items, apart from how either API family
// shows them (shapes.ts, anthropic/shapes.ts), and the messages between the scheduler (main
// thread) and the worker pool.
import type { AdmitAsk } from '../billing/admission.ts'
import type { StoredSpend } from '../billing/billing.ts'
import type { ApiKey } from '../http/context.ts'
import type { Config } from '../config/load.ts'
import type { batches } from '../db/schema.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { RecordTotals } from '../metrics/batches.ts'

export type BatchRow = typeof batches.$inferSelect
export type BatchStatus = BatchRow['status']
export type BatchFamily = BatchRow['family']

/** What a batch's creation said of it, apart from its items. */
export interface Envelope {
  endpoint: string
  inputFileId: string | null
  completionWindow: string
  /** JSON text of the metadata object, or null. */
  metadata: string | null
  concurrency: number | null
  /** Seconds the output files live after they are written (OpenAI `output_expires_after`), or null. */
  outputExpiresAfter: number | null
}

/** Finished states: nothing will run any more (in-flight items may still land their results). */
export const FINAL: ReadonlySet<BatchStatus> = new Set(['completed', 'cancelled', 'expired', 'failed'])

/** An item's error: its message, its code and the HTTP status an interactive request would have got. */
export interface ItemError {
  message: string
  code: string
  status: number
}

/** Codes of the items a batch's end fails without running them. */
export const ITEM_CODES = { cancelled: 'batch_cancelled', expired: 'batch_expired', failed: 'batch_failed', lost: 'batch_item_lost' } as const

/**
 * An item whose instance stopped (kill -9, a crash) while it held it: it may have reached the
 * upstream, so it is not sent again (each item goes upstream at most once) and fails with this.
 */
export const LOST_ITEM: ItemError = {
  code: ITEM_CODES.lost,
  status: 503,
  message: 'the gateway instance running this item stopped before its result was stored; it may have reached the upstream, so it was not sent again',
}

/** An item as the scheduler hands it to a worker (which reads its body from the database). */
export interface ItemJob {
  batchId: string
  idx: number
  endpoint: string
  /** The batch's key, without its credit figures: admission happened on the main thread. */
  apiKey: ApiKey
  requestId: string
  /** The key has a credit: a fallback model is held before it is called, asked of the main thread. */
  funded?: boolean
}

/** What running an item came to, in its worker. */
export interface ItemOutcome {
  status: 'succeeded' | 'failed'
  /** The endpoint's JSON reply (succeeded). */
  response?: string
  error?: ItemError
  /** Usage of the last attempt in the generation record's words, JSON (shapes.ts usageText); null when none. */
  usage: string | null
  requestId: string
  /** Every generation record of the item's attempts, oldest first: stored with the result. */
  records: GenerationInput[]
}

/** A generation record on its way to the results writer: the model by id, the key apart (it is the item's). */
export type LeanRecord = Omit<GenerationInput, 'model' | 'apiKey' | 'reservationId'> & { modelId: string }

/** An item whose result (and records) its worker has stored. */
export interface ItemDone {
  id: number
  status: 'succeeded' | 'failed'
  /** This write stored the result (false: the item had one already, stored and counted elsewhere). */
  stored: boolean
}

/** Spend a worker wrote to a key (USD), for the main thread's ledger. */
export type Settled = StoredSpend

/** A create body for a worker to check and store the items of. */
export interface IngestJob {
  batchId: string
  family: BatchFamily
  /** The creating key, without its credit figures. */
  apiKey: ApiKey
  /** The raw create body (JSON text): parsed off the main thread. */
  text: string
  /** Items per batch (config). */
  maxItems: number
}

export type IngestResult = { ok: true; total: number; envelope: Envelope } | { ok: false; status: number; message: string }

/** An item worker's outcome, on its way to the results writer (lean: only what it stores). */
export interface Outcome {
  id: number
  batchId: string
  idx: number
  key: { id: string; account: string }
  outcome: Omit<ItemOutcome, 'records'> & { records: LeanRecord[] }
}

export type ToWorker =
  | { type: 'init'; config: Config; role: 'writer' }
  /** An item worker, with its end of the channel to the results writer (and a line to the token worker). */
  | { type: 'init'; config: Config; role: 'items'; port: MessagePort; tokens?: MessagePort }
  /** To the writer: the other end of an item worker's channel. */
  | { type: 'outcomes'; port: MessagePort }
  | { type: 'ingest'; id: number; job: IngestJob }
  | { type: 'run'; jobs: { id: number; job: ItemJob }[]; maxRetries: number }
  /** To an item worker: the answer to its ask `n` (hold-asks.ts). */
  | { type: 'held'; n: number; ok: boolean }
  /** To an item worker: its jobs of `calling` message `n` are in the journal of items sent (`ok`), or cannot be (sent-journal.ts). */
  | { type: 'journaled'; n: number; ok: boolean }
  /** To the writer: the costs of its `storing` message `n` are counted by the shared ledger; its write may begin. */
  | { type: 'counted'; n: number }
  | { type: 'stop' }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'init-failed'; error: string }
  | { type: 'ingested'; id: number; result: IngestResult }
  /** An item worker's jobs about to make their first upstream call (said before any makes it; they wait for `journaled` `n`). */
  | { type: 'calling'; ids: number[]; n: number }
  /** An item worker's job `id` reached a fallback model: hold its price for the item (ask `n`). */
  | { type: 'hold'; id: number; n: number; ask: AdmitAsk }
  /** The writer, with a shared ledger: the costs a write may store; it waits for `counted` `n` before it begins. */
  | { type: 'storing'; n: number; settled: Settled }
  /** The writer: what a `storing` message counted and its write did not store (it failed, or stored less); taken back. */
  | { type: 'not-stored'; settled: Settled }
  /** Items stored, the spend written, and the stored records' tokens and cost (for the metrics). */
  | { type: 'ran'; done: ItemDone[]; settled: Settled; records: RecordTotals[] }
  | { type: 'stopped' }
