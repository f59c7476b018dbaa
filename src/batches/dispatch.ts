// One batch item handed out: admitted against its key's credit on the main thread (item-hold.ts:
// the hold an interactive request of the same body would take), then sent to the worker pool,
// and what comes of it. Admission waiting for a shared ledger keeps the item's place, and the
// items after it wait behind it (input order). Refused for now (the shared store away, credit
// the key's other requests hold) the item waits unsent (unsent.ts); refused for good, it fails
// as an interactive request would (landing.ts). Its worker's answer is stored by the results
// writer, and its hold ends after the costs that answer stored have come back to billing. A
// worker that died with it: if it never began its upstream call the item waits unsent and runs
// again; if it may have, the item fails with LOST_ITEM at once, never sent twice.
import type { ApiKey } from '../http/context.ts'
import { HttpError } from '../http/errors.ts'
import { isStoreAway } from '../db/unavailable.ts'
import { CreditsExhausted, type Admission, type AdmitInput } from '../billing/admission.ts'
import type { BatchServices } from '../services.ts'
import { SHARED_DOWN_RETRY_MS, type Active } from './active.ts'
import { itemAdmitInput, ItemHold } from './item-hold.ts'
import { CallStartedError, NotTakenError, type WorkerPool } from './pool.ts'
import { itemErrorOf } from './run-item.ts'
import { batchRequestId } from './shapes.ts'
import type { SentJournal } from './sent-journal.ts'
import type { ClaimedItem } from './store.ts'
import { LOST_ITEM, type BatchRow, type ItemError } from './types.ts'

/** An item refused while only the key's other requests held its credit: looked at again this soon. */
const CREDIT_HELD_RETRY_MS = 100

/** What an item's way needs of the scheduler. */
export interface DispatchDeps {
  s: BatchServices
  pool: WorkerPool
  /** Items sent, named before their upstream call (by the pool): those stored need not be any more. */
  journal: SentJournal
  closed(): boolean
  /** Counts items ended here, for the metrics. */
  ended(status: 'succeeded' | 'failed', n?: number): void
  /** Queues the result of an item that ran nowhere (landing.ts). */
  land(a: Active, idx: number, requestId: string, error: ItemError, stored?: () => void): void
  /** An item handed out waits, never sent (unsent.ts). */
  waitUnsent(a: Active, idx: number): void
  fill(a: Active): void
  fillLater(a: Active): void
  /** An item ended: batches held back by their share may have room now. */
  wakeThrottled(): void
  maybeEnd(a: Active): void
}

export class Dispatch {
  constructor(private readonly d: DispatchDeps) {}

  /** Admits `item` under `key` and sends it to a worker with `workerKey` (the key without its credit figures). */
  dispatch(a: Active, key: ApiKey, workerKey: ApiKey, item: ClaimedItem): void {
    const requestId = batchRequestId({ id: a.id } as BatchRow, item.idx)
    const model = this.d.s.catalog.resolve(item.model)
    if (!model) return this.d.land(a, item.idx, requestId, { status: 400, message: `model: unknown model "${item.model.slice(0, 80)}"`, code: 'invalid_request' })
    // in flight from here: an admission that waits for a shared ledger still holds its place
    a.inflight.add(item.idx)
    const refused = (e: unknown) => {
      a.inflight.delete(item.idx)
      // the shared store (Redis) is away, or the database that holds the credit (PostgreSQL):
      // the item waits for it rather than fail
      if ((e instanceof HttpError && e.status === 503) || isStoreAway(e)) {
        this.d.waitUnsent(a, item.idx)
        return void setTimeout(() => this.d.fill(a), SHARED_DOWN_RETRY_MS).unref?.()
      }
      // 402 while the key's requests in progress hold its credit (this batch's other items among
      // them): they end at their real cost, below what they hold, and may leave room. The item
      // waits for them; an item that ends wakes the batch, the key's other requests do not
      if (e instanceof CreditsExhausted && e.held > 0) {
        this.d.waitUnsent(a, item.idx)
        if (a.inflight.size === 0) setTimeout(() => this.d.fill(a), CREDIT_HELD_RETRY_MS).unref?.()
        return
      }
      // 402: the key's credit is spent; the item fails as an interactive request would
      const { retryAfter: _, ...error } = itemErrorOf(e)
      this.d.land(a, item.idx, requestId, error)
    }
    let input: AdmitInput
    let admission: Admission | Promise<Admission>
    try {
      input = itemAdmitInput(key, model, item)
      // behind an admission still waiting for a shared ledger: items are admitted in input order
      admission = a.admitting ? a.admitting.then(() => this.d.s.billing.admit(input)) : this.d.s.billing.admit(input)
    } catch (e) {
      return refused(e)
    }
    if (admission instanceof Promise) {
      const settled = (a.admitting = admission.then(
        () => {},
        () => {},
      ))
      void settled.then(() => {
        if (a.admitting === settled) a.admitting = undefined
      })
      admission.then((ad) => this.send(a, workerKey, item, requestId, new ItemHold(this.d.s, input, ad)), refused)
    } else this.send(a, workerKey, item, requestId, new ItemHold(this.d.s, input, admission))
  }

  private send(a: Active, workerKey: ApiKey, item: ClaimedItem, requestId: string, hold: ItemHold): void {
    // shutting down: never sent, so its mark goes back at the close and it runs after the restart
    if (this.d.closed()) {
      a.inflight.delete(item.idx)
      return hold.end()
    }
    // the worker runs it with no credit figures: admission was here (a fallback's too, when its
    // worker asks); its spend comes back (settled)
    const job = { batchId: a.id, idx: item.idx, endpoint: a.endpoint, apiKey: workerKey, requestId, funded: hold.funded }
    this.d.pool.run(job, this.d.s.config.batches.maxRetries, (ask) => hold.anew(ask)).then(
      (status) => {
        this.d.journal.stored(a.id, item.idx)
        if (status) this.d.ended(status)
        // stored, with its records; the spend they wrote is in the ledger already
        hold.end()
        a.inflight.delete(item.idx)
        this.d.fillLater(a)
        this.d.wakeThrottled()
        this.d.maybeEnd(a)
      },
      (e: Error) => {
        a.inflight.delete(item.idx)
        this.lostItem(a, item.idx, hold, e)
      },
    )
  }

  /** The worker died with the item: one that never left runs again; one that may have, fails as lost. */
  private lostItem(a: Active, idx: number, hold: ItemHold, e: Error) {
    hold.end()
    // shutting down: a worker that had it may have sent it, so it stays marked (lost after the
    // restart); one that never took it (never started, or stopped with it still in the outbox)
    // or never began its call did not, and it runs after the restart
    if (this.d.closed()) {
      if (!(e instanceof NotTakenError)) a.cut.push(idx)
      return
    }
    // it never left (its worker never started, never took it, or died before its call began):
    // no mark against it, and it waits unsent as an item refused for now does, its mark (claim)
    // given back meanwhile, so a kill -9 before it is handed out again does not count it lost
    if (e instanceof NotTakenError) {
      this.d.waitUnsent(a, idx)
      return this.d.fillLater(a)
    }
    // its upstream call may have begun (a CallStartedError; anything else its worker cannot have
    // said otherwise): it may have reached the upstream, and been billed there, so it fails as
    // lost at once, as a restart fails a killed process's marks, and is never sent again
    const why = e instanceof CallStartedError ? e.message : `batch worker: ${e.message}`
    // said once the failure is stored: a result its writer stored meanwhile stands, and is no loss
    const said = () => this.d.s.log.warn('batches: an item lost its worker after its upstream call may have begun; failed, not sent again', { batch_id: a.id, index: idx, error: why })
    this.d.land(a, idx, batchRequestId({ id: a.id } as BatchRow, idx), LOST_ITEM, said)
  }
}
