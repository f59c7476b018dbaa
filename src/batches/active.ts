// A batch open on this instance, as the scheduler keeps it in memory while it runs: what it has
// handed out, read ahead, put back or queued for a write, and whether it is ending; the database
// holds the rest (scheduler.ts). Every part of the scheduler (dispatch.ts, unsent.ts, landing.ts,
// ending.ts, sharing.ts) reads and changes this one object, and the steps that read the database
// (fills, end checks, marks given back) run one after another in the batch's chain (serial), so
// that none sees another half done. Also the times to look again that those parts share.
import type { Logger } from '../http/log.ts'
import type { ClaimedItem } from './store.ts'
import { FINAL, type BatchRow, type BatchStatus } from './types.ts'

/** Instances sharing a database: how soon items held elsewhere, or an end another instance is writing, are looked at again. */
export const RECHECK_MS = 500
/** An item whose admission found the shared store away, or a fill the database could not answer, tries again after this. */
export const SHARED_DOWN_RETRY_MS = 1_000

export interface Active {
  id: string
  keyId: string
  endpoint: string
  status: BatchStatus
  /** Items run at once. */
  cap: number
  /** Indexes handed to a worker and not yet answered. */
  inflight: Set<number>
  /** Results waiting for the next write. */
  queued: number
  /** Every item with a smaller index has been handed out (or has a result). */
  cursor: number
  /** Items put back when their worker died: handed out again first. */
  again: number[]
  /** Pending items read ahead of the cursor's past, not handed out yet. */
  ahead: ClaimedItem[]
  /** No pending row was left past the cursor at the last read. */
  exhausted: boolean
  /** Ended early (cancel, expiry, failure): nothing more is handed out. */
  stopped: boolean
  /** Failing the pending items of an early end, chunk by chunk. */
  ending: boolean
  finalizing: boolean
  /** Indexes a worker held when the pool closed: they may have been sent, and keep their marks (their claims on PostgreSQL). */
  cut: number[]
  /** Indexes refused for now at admission, never sent, whose marks (claims) are to go. */
  back: number[]
  /** A step taking those marks off is in the batch's chain. */
  backDue: boolean
  fillSoon: boolean
  /** A fill the database could not answer is to be tried again (one timer a batch). */
  fillAgain: boolean
  /**
   * Shared: a fill failed part way, so this instance may hold claims it does not know of (a claim
   * that took effect with its answer lost, items claimed and then dropped by a step that failed).
   */
  claimsUnsure: boolean
  /** The batch's fills and end checks, one after another (each reads the database). */
  chain: Promise<void>
  /** The last admission that waits for a shared ledger: the next one waits for it (input order). */
  admitting?: Promise<void>
}

/** A batch as its row stands, nothing of it handed out here yet; `maxConcurrency` caps its own. */
export function newActive(row: BatchRow, maxConcurrency: number): Active {
  return {
    id: row.id,
    keyId: row.apiKeyId,
    endpoint: row.endpoint,
    status: row.status,
    cap: Math.max(1, Math.min(row.concurrency ?? maxConcurrency, maxConcurrency)),
    inflight: new Set(),
    queued: 0,
    cursor: 0,
    again: [],
    ahead: [],
    exhausted: false,
    stopped: FINAL.has(row.status),
    ending: false,
    finalizing: false,
    cut: [],
    back: [],
    backDue: false,
    fillSoon: false,
    fillAgain: false,
    claimsUnsure: false,
    chain: Promise.resolve(),
  }
}

/** The index from which nothing has been handed out (items read ahead included). */
export function firstUnsent(a: Active): number {
  return a.ahead[0]?.idx ?? a.cursor
}

/** Not stopped, with items left to hand out. */
export function wants(a: Active): boolean {
  return !a.stopped && !(a.exhausted && a.ahead.length === 0 && a.again.length === 0)
}

/** Runs `step` after the batch's earlier steps: a fill or an end check never sees another half done. */
export function serial(a: Active, log: Logger, step: () => Promise<void>): void {
  a.chain = a.chain.then(step).catch((e) => log.error('batches: scheduling failed', { batch_id: a.id, error: (e as Error)?.message ?? String(e) }))
}
