// How a batch ends. It ends when nothing of it is pending, running or waiting to be written:
// one instance (here, or the first of those sharing a database to take the batch row's lease)
// writes the output files, then the batch is completed, unless a cancel came meanwhile. An early
// end (a cancel, its completion window past, a failure: a key gone, an endpoint off, its input
// file deleted) gives the batch its status first, then fails its items not yet run, a chunk a
// transaction, with the code of that end; those in flight end with their results. On PostgreSQL
// the items another instance holds are waited for, never failed under it; a gateway that does not
// run the batches of its SQLite data dir fails only the items the runner has not marked, and tells
// it (sharing.ts). Each step runs in the batch's chain (active.ts), after its fills.
import type { DeleteReason, FileRecord } from '../files/types.ts'
import { HttpError } from '../http/errors.ts'
import type { BatchServices } from '../services.ts'
import { nextTurn } from '../lib/turn.ts'
import { isStoreAway } from '../db/unavailable.ts'
import { firstUnsent, RECHECK_MS, serial, SHARED_DOWN_RETRY_MS, type Active } from './active.ts'
import { INPUT_GONE, inputFileGone, inputGoneMessage } from './input-file.ts'
import type { ItemLeases } from './leases.ts'
import { writeOutputFiles } from './output-files.ts'
import type { BatchStore, EndKind } from './store.ts'
import { FINAL, ITEM_CODES, type BatchRow, type ItemError } from './types.ts'

/** Pending items failed per transaction when a batch ends early. */
const END_CHUNK = 2_000

/** What the items not yet run of a batch ended early fail with. */
const END_ERRORS: Record<EndKind, ItemError> = {
  cancelled: { code: ITEM_CODES.cancelled, status: 499, message: 'the batch was cancelled before this item ran' },
  expired: { code: ITEM_CODES.expired, status: 408, message: 'the batch expired before this item ran' },
  failed: { code: ITEM_CODES.failed, status: 410, message: 'the batch failed before this item ran' },
}

/** What ending needs of the scheduler. */
export interface EndingDeps {
  s: BatchServices
  store: BatchStore
  /** Instances sharing a database: items are claimed under a lease; else none. */
  leases?: ItemLeases
  /** The batches open here. */
  active: Map<string, Active>
  closed(): boolean
  /** Counts items ended here, for the metrics. */
  ended(status: 'succeeded' | 'failed', n?: number): void
  fill(a: Active): void
  fillLater(a: Active): void
  /** The batch's state here, made once. */
  track(row: BatchRow): Active
  /** Another gateway on this SQLite data dir runs the batches. */
  standby(): boolean
  /** Tells the other instances that the batch changed (the bus). */
  tell(id: string): void
  /** The store is shared (a database, or a data dir other gateways serve from): half-made creates are swept with each expiry pass. */
  shared: boolean
  sweep(): Promise<void>
}

export class Ending {
  /** Output files being written (idle waits for them). */
  readonly finalizing = new Set<Promise<void>>()

  constructor(private readonly d: EndingDeps) {}

  /** Batches whose end check the database could not answer, to be looked at again. */
  private readonly again = new Set<Active>()

  /** When nothing of the batch is pending, running or waiting to be written: its end. */
  maybeEnd(a: Active): void {
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    serial(a, this.d.s.log, () =>
      this.endCheck(a).catch((e) => {
        // the database away: looked at again in a second, as no item may be left whose end
        // would wake the batch (a fill's end check is tried again with its fill)
        if (isStoreAway(e) && !this.again.has(a) && !this.d.closed()) {
          this.again.add(a)
          setTimeout(() => {
            this.again.delete(a)
            this.maybeEnd(a)
          }, SHARED_DOWN_RETRY_MS).unref?.()
        }
        throw e
      }),
    )
  }

  async endCheck(a: Active): Promise<void> {
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    if (!a.stopped && !(a.exhausted && a.ahead.length === 0 && a.again.length === 0)) return
    const left = await this.d.store.unfinished(a.id)
    if (a.finalizing || a.ending || a.inflight.size > 0 || a.queued > 0) return
    if (left > 0) {
      // nothing is in flight: whatever has no result yet is pending, wherever it is
      a.cursor = 0
      a.again = []
      a.ahead = []
      if (a.stopped) return this.endItems(a, a.status as EndKind)
      a.exhausted = false
      // shared: those may be another instance's, in flight there; look again a little later
      if (this.d.leases) return void setTimeout(() => this.d.fill(a), RECHECK_MS).unref?.()
      return this.d.fillLater(a)
    }
    // shared: one instance writes the output files; another one doing so keeps this one out, and
    // once it has ended the batch, this one lets it go (looking again would go on for ever)
    if (this.d.leases) {
      const who = await this.d.leases.finalizer(a.id)
      if (who === 'ended') return void this.forget(a)
      if (who === 'other') return void setTimeout(() => this.maybeEnd(a), RECHECK_MS).unref?.()
    }
    a.finalizing = true
    const done = this.finalize(a).finally(() => this.finalizing.delete(done))
    this.finalizing.add(done)
  }

  /** A batch another instance ended: nothing of it is left to run or write here. */
  private forget(a: Active): void {
    if (this.d.active.get(a.id) === a) this.d.active.delete(a.id)
  }

  private async finalize(a: Active): Promise<void> {
    try {
      const row = await this.d.store.byId(a.id)
      if (!row) return
      const files = row.family === 'openai' ? await writeOutputFiles(this.d.s.files, this.d.store, row) : { outputFileId: null, errorFileId: null }
      // a cancel may have come while the files were written (here or elsewhere): its status stands
      const now = Date.now()
      let status: BatchRow['status'] = 'completed'
      if (!(await this.d.store.transition(a.id, ['queued', 'processing'], { ...files, status, endedAt: now, completedAt: now }))) {
        await this.d.store.update(a.id, { ...files, endedAt: now })
        status = (await this.d.store.byId(a.id))?.status ?? a.status
      }
      a.status = status
      this.d.active.delete(a.id)
      this.d.s.log.info('batches: ended', { batch_id: a.id, status, total: row.total, succeeded: row.succeeded, failed: row.failed })
      this.d.s.tracing?.batchEnded({ ...row, status })
    } catch (e) {
      this.d.s.log.error('batches: writing the output files failed; retrying', { batch_id: a.id, error: (e as Error).message })
      a.finalizing = false
      if (!this.d.closed()) setTimeout(() => this.maybeEnd(a), 1_000).unref?.()
    }
  }

  /** An early end: the batch takes `status`, and its items not yet run fail with `kind`'s code. */
  private async end(id: string, status: 'cancelled' | 'expired' | 'failed', set: Partial<BatchRow>): Promise<BatchRow | null> {
    const row = await this.d.store.byId(id)
    if (!row || FINAL.has(row.status)) return row
    if (!(await this.d.store.transition(id, ['queued', 'processing'], { status, ...set }))) return this.d.store.byId(id)
    if (this.d.standby()) {
      await this.endElsewhere(id, status)
      return this.d.store.byId(id)
    }
    const a = this.d.track({ ...row, status })
    a.status = status
    a.stopped = true
    this.endItems(a, status)
    return this.d.store.byId(id)
  }

  /**
   * An early end on a gateway that does not run the batches of its SQLite data dir: the items the
   * runner has not marked fail now; those it marked are in flight there and end with their results.
   * The runner, told, sees the end at its next look, stops and writes the output files.
   */
  private async endElsewhere(id: string, kind: EndKind): Promise<void> {
    let failed
    while ((failed = await this.d.store.failPending(id, kind, END_ERRORS[kind], END_CHUNK, 0, undefined, undefined, true)) > 0) {
      this.d.ended('failed', failed)
      await nextTurn()
    }
    this.d.tell(id)
  }

  endItems(a: Active, kind: EndKind) {
    if (a.ending) return
    a.ending = true
    const error = END_ERRORS[kind]
    // items put back after their worker died have smaller indexes than the cursor
    const again = a.again
    const from = firstUnsent(a)
    a.again = []
    a.ahead = []
    a.cursor = from
    const leases = this.d.leases
    let failed = 0
    void (async () => {
      try {
        if (leases) {
          // shared: every pending item no live lease holds (in flight here or elsewhere, an
          // item finishes); what this instance claimed and will not run is let go first
          await leases.dropExcept(a.id, [...a.inflight])
          while ((failed = await this.d.store.failPending(a.id, kind, error, END_CHUNK, 0, undefined, Date.now())) > 0) {
            this.d.ended('failed', failed)
            await nextTurn()
          }
          return
        }
        if (again.length > 0) this.d.ended('failed', await this.d.store.failPending(a.id, kind, error, END_CHUNK, from, again))
        while ((failed = await this.d.store.failPending(a.id, kind, error, END_CHUNK, from)) > 0) {
          this.d.ended('failed', failed)
          await nextTurn()
        }
      } catch (e) {
        this.d.s.log.error('batches: failing the items of an ended batch failed', { batch_id: a.id, error: (e as Error).message })
      } finally {
        a.ending = false
        // shared: items another instance runs are waited for, not spun on
        if (leases && failed === 0) setTimeout(() => this.maybeEnd(a), RECHECK_MS).unref?.()
        else this.maybeEnd(a)
      }
    })()
  }

  /** Cancel: a queued or processing batch → cancelled; a finished one → 400. */
  async cancel(row: BatchRow): Promise<BatchRow> {
    if (FINAL.has(row.status)) throw new HttpError(400, `Batch ${row.id} is ${row.status}; only a queued or processing batch can be cancelled`)
    if (this.d.active.get(row.id)?.finalizing) throw new HttpError(400, `Batch ${row.id} has run every item; it is completed once its output files are written`)
    const ended = (await this.end(row.id, 'cancelled', { cancelledAt: Date.now() })) ?? row
    this.d.tell(row.id)
    return ended
  }

  /** → failed, with the reason in `errors`. */
  async fail(id: string, code: string, message: string): Promise<void> {
    try {
      await this.end(id, 'failed', { failedAt: Date.now(), errors: JSON.stringify([{ code, message, line: null, param: null }]) })
    } catch (e) {
      this.d.s.log.error('batches: failing a batch failed', { batch_id: id, code, error: (e as Error).message })
    }
  }

  /** Batches past their completion window expire; their items not yet run fail with batch_expired. */
  async checkExpiry(now = Date.now()): Promise<void> {
    try {
      // shared: a create another gateway's crash cut short goes once it is old enough
      if (this.d.shared) await this.d.sweep()
      for (const a of [...this.d.active.values()]) {
        if (a.stopped) continue
        const row = await this.d.store.byId(a.id)
        if (row && !FINAL.has(row.status) && row.expiresAt <= now) await this.end(a.id, 'expired', { expiredAt: now })
      }
    } catch (e) {
      this.d.s.log.error('batches: checking expiry failed', { error: (e as Error).message })
    }
  }

  /** The files service's delete hook: a queued or processing batch reading the file fails. */
  async onFileDeleted(file: FileRecord, reason: DeleteReason): Promise<void> {
    for (const row of await this.d.store.readingFile(file.id)) {
      if (row.apiKeyId !== file.apiKeyId || FINAL.has(row.status)) continue
      await this.fail(row.id, INPUT_GONE, inputGoneMessage(file.id, reason))
    }
  }

  /**
   * A delete removes the file's record, then fails the batches reading it (onFileDeleted): a
   * crash between the two leaves one open on a file that is gone, failed here at the next start.
   * A file that expired while the gateway was down is failed here too, before the expiry pass
   * removes its record: the message says it expired.
   */
  async failIfInputGone(row: BatchRow): Promise<void> {
    if (row.inputFileId === null || FINAL.has(row.status)) return
    const why = await inputFileGone(this.d.s.files, row.apiKeyId, row.inputFileId)
    if (!why) return
    // its record just removed here (the expiry pass at start): the hook fails it, saying how
    if (why === 'unknown' && this.d.s.files.telling(row.inputFileId)) return
    this.d.s.log.warn('batches: the input file of an open batch is gone; failing it', { batch_id: row.id, file_id: row.inputFileId, why })
    await this.fail(row.id, INPUT_GONE, inputGoneMessage(row.inputFileId, why))
  }
}
