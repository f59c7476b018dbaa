// Batch items handed out and then kept waiting, never sent: admission refused them for now
// (credit the key's other requests hold, the shared store away), or their worker never took
// them or never began their upstream call. A mark (a claim on PostgreSQL) is taken for sent when
// this process dies, so theirs goes: one statement a turn for every item waiting, in the batch's
// chain (active.ts), so that it never takes the mark of an item handed out again meanwhile,
// which was marked again to be sent. Alone on SQLite they wait with the batch's items put back,
// handed out again first (marks.ts); on PostgreSQL their claims go back to every instance, and
// this one's next claim takes them again in input order (leases.ts).
import type { BatchServices } from '../services.ts'
import { serial, SHARED_DOWN_RETRY_MS, type Active } from './active.ts'
import type { ItemLeases } from './leases.ts'
import type { InFlightMarks } from './marks.ts'

/** What giving back the marks of items waiting needs of the scheduler. */
export interface UnsentDeps {
  s: BatchServices
  /** Instances sharing a database: items are claimed under a lease; else none. */
  leases?: ItemLeases
  /** Alone on SQLite: items are marked in flight as they are handed out. */
  marks?: InFlightMarks
  closed(): boolean
}

export class Unsent {
  constructor(private readonly d: UnsentDeps) {}

  /**
   * An item refused for now waits, never sent: not in flight, so its mark (claim) goes, with the
   * others of the turn, in one statement. Alone it waits here; shared, its claim goes back to
   * every instance (this one's next claim takes it again, in input order).
   */
  waitUnsent(a: Active, idx: number): void {
    if (!this.d.leases) a.again.push(idx)
    a.back.push(idx)
    this.backSoon(a)
  }

  private backSoon(a: Active): void {
    if (a.backDue) return
    a.backDue = true
    serial(a, this.d.s.log, () => this.giveBackWaiting(a))
  }

  /**
   * In the batch's chain, so no fill is half done: only the items waiting now lose their marks.
   * One handed out again meanwhile (in flight, read ahead, put back) was marked again, to be sent.
   */
  private async giveBackWaiting(a: Active): Promise<void> {
    a.backDue = false
    const back = new Set(a.back.splice(0))
    const again = new Set(a.again)
    const out = new Set([...a.inflight, ...a.ahead.map((i) => i.idx)])
    // alone an item waiting is put back here; shared it is nowhere here once its claim is back
    const waiting = [...back].filter((i) => !out.has(i) && (this.d.leases ? !again.has(i) : again.has(i)))
    if (waiting.length === 0) return
    try {
      if (this.d.marks) await this.d.marks.unmark(a.id, waiting)
      else {
        await this.d.leases!.release(a.id, waiting)
        // the claims let go may be this instance's next
        a.exhausted = false
      }
    } catch (e) {
      this.d.s.log.warn('batches: giving back the marks of items waiting unsent failed', { batch_id: a.id, error: (e as Error).message })
      // alone they keep their marks: lost after a kill -9, never sent twice. Shared they would
      // stay claimed here and never run: tried again (a release that did land is a no-op then)
      if (this.d.leases && !this.d.closed()) {
        a.back.push(...waiting)
        setTimeout(() => this.backSoon(a), SHARED_DOWN_RETRY_MS).unref?.()
      }
    }
  }
}
