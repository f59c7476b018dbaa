// Which open batches this instance runs, taken up at its start and kept in step with the other
// instances on its store. At a start, the items of creates a crash cut short are swept, what a
// killed process had marked in flight fails as lost, and every open batch resumes. Instances on
// one PostgreSQL database each run a part of every batch (leases.ts): every second or so one
// renews its leases, fails as lost the claims of an instance that stopped, takes up the batches
// made elsewhere and stops those ended there; the bus tells of those at once, the look finds what
// it lost. Several gateways on one SQLite data dir (sharing Redis): one runs the batches, the
// holder of the runner lock (runner-lock.ts); the others store the batches they are given and tell
// it, and one that takes the lock later starts as the runner, as a restart does.
import type { Bus } from '../cluster/bus.ts'
import type { BatchServices } from '../services.ts'
import { SHARED_DOWN_RETRY_MS, type Active } from './active.ts'
import { STALE_INGEST_MS, sweepIngests } from './create/writer.ts'
import type { ItemLeases } from './leases.ts'
import type { InFlightMarks } from './marks.ts'
import type { RunnerLock } from './runner-lock.ts'
import { releaseNeverSent } from './sent-release.ts'
import type { BatchStore } from './store.ts'
import { FINAL, LOST_ITEM, type BatchRow } from './types.ts'

const EXPIRY_CHECK_MS = 30_000
/** Instances sharing a database: how often leases are renewed and other instances' batches looked for. */
const SHARE_MS = 1_000
/**
 * …and, with no batch open here and a change bus that tells of new ones, how many of those
 * periods go by between two looks (for a message the bus lost).
 */
const QUIET_SHARES = 5
const TOPIC = 'batches'
/** One SQLite data dir, another gateway running its batches: how often this one tries the runner lock. */
const TAKE_OVER_MS = 2_000

/** What sharing needs of the scheduler. */
export interface SharingDeps {
  s: BatchServices
  store: BatchStore
  /** Instances sharing a database: items are claimed under a lease (leases.ts); else none. */
  leases?: ItemLeases
  /** Alone on SQLite: items are marked in flight as they are handed out (marks.ts). */
  marks?: InFlightMarks
  /** SQLite: this process runs the batches while it holds this (runner-lock.ts). */
  runner?: RunnerLock
  /** SQLite, other gateways may serve from the data dir: the runner looks at the open batches they store. */
  looks: boolean
  /** The batches open here. */
  active: Map<string, Active>
  closed(): boolean
  /** Counts items ended here, for the metrics. */
  ended(status: 'succeeded' | 'failed', n?: number): void
  /** The batch's state here, made once. */
  track(row: BatchRow): Active
  fill(a: Active): void
  maybeEnd(a: Active): void
  failIfInputGone(row: BatchRow): Promise<void>
  checkExpiry(): Promise<void>
}

export class Sharing {
  private readonly runner?: RunnerLock
  private readonly looks: boolean
  private expiryTimer?: ReturnType<typeof setInterval>
  /** The open batches were resumed here: a look may take up new ones (before, it would pass over a dead runner's marks). */
  private resumed = false
  private shareTimer?: ReturnType<typeof setInterval>
  /** The other instances' word of batches made or ended: looked for at once, not at the next share. */
  private bus?: Bus
  private quietTicks = 0

  constructor(private readonly d: SharingDeps) {
    this.runner = d.runner
    this.looks = d.looks
  }

  /** Another gateway on this SQLite data dir runs the batches: this one stores them and tells it. */
  get standby(): boolean {
    return this.runner !== undefined && !this.runner.held
  }

  /** Tells the other instances that a batch was made or ended. */
  tell(id: string): void {
    void this.bus?.publish(TOPIC, id)
  }

  /** Resume after a start: sweep half-made batches, fail what a killed process had in flight, carry on. */
  async start(): Promise<void> {
    // one SQLite data dir: another gateway runs its batches; this one runs them once it stops
    if (this.runner && !this.runner.take()) {
      this.d.s.log.info('batches: another gateway on this data dir runs the batches; this one stores those it is given, and takes over if that one stops')
      this.runner.wait(TAKE_OVER_MS, () => void this.takeOver())
      return
    }
    await this.sweep()
    await this.resume()
  }

  /**
   * The items of creates a crash cut short go: every one when this process is alone on its store
   * (at its start), else only those older than any create takes (other gateways may be creating
   * batches now: create/writer.ts).
   */
  async sweep(now = Date.now()): Promise<void> {
    const shared = this.d.leases !== undefined || this.looks
    const swept = await sweepIngests(this.d.store.sql, shared ? now - STALE_INGEST_MS : Infinity)
    if (swept > 0) this.d.s.log.info('batches: removed items of batches whose creation did not finish', { items: swept })
  }

  /**
   * The runner of this SQLite data dir stopped (or was killed): this process runs the batches now,
   * and what that one marked in flight fails as lost, as at a restart. Creations in progress on the
   * gateways still running are not swept (they may be this one's): only those a crash left long ago.
   */
  private async takeOver(again = false): Promise<void> {
    if (this.d.closed()) return
    if (!again) this.d.s.log.info('batches: this process runs the batches now (the gateway that ran them stopped)')
    try {
      await this.resume()
    } catch (e) {
      this.d.s.log.error('batches: taking over the batches failed; trying again', { error: (e as Error).message })
      if (!this.d.closed()) setTimeout(() => void this.takeOver(true), SHARED_DOWN_RETRY_MS).unref?.()
    }
  }

  private async resume(): Promise<void> {
    const open = await this.d.store.open()
    // before any fails as lost: the items a dead process claimed and, by its journal, never sent
    // run here (sent-journal.ts)
    await releaseNeverSent(this.d.store.sql, this.d.s.config.dataDir, open.map((r) => r.id), this.d.s.log)
    for (const row of open) {
      if (this.d.active.has(row.id)) continue
      // what the last process to run the batches marked and did not store may have reached the upstream
      const lost = this.d.marks ? await this.d.marks.failLost(row.id, LOST_ITEM) : 0
      this.d.ended('failed', lost)
      if (lost > 0) this.d.s.log.warn('batches: items in flight when the last process stopped failed, not sent again', { batch_id: row.id, items: lost })
      const a = this.d.track(row)
      if (row.succeeded + row.failed > 0 && !a.stopped) this.d.s.log.info('batches: resuming', { batch_id: row.id, done: row.succeeded + row.failed, total: row.total })
      await this.d.failIfInputGone(row)
    }
    void this.d.checkExpiry()
    this.expiryTimer ??= setInterval(() => void this.d.checkExpiry(), EXPIRY_CHECK_MS)
    this.expiryTimer.unref?.()
    if (this.d.leases || this.looks) {
      this.shareTimer ??= setInterval(this.shareTick, this.d.leases ? Math.min(SHARE_MS, this.d.leases.leaseMs / 3) : SHARE_MS)
      this.shareTimer.unref?.()
    }
    this.resumed = true
    for (const a of this.d.active.values()) this.d.fill(a)
  }

  /**
   * Instances sharing a database, every second or so: renew this instance's leases, take up
   * batches made or resumed elsewhere, stop those another instance ended or cancelled. The runner
   * of a SQLite data dir other gateways serve from: take up the batches they stored, stop those
   * they cancelled (no leases).
   */
  private sharing = false
  private shareAgain = false
  private async share(): Promise<void> {
    if (this.sharing || this.d.closed() || !(this.d.leases || (this.looks && this.resumed))) return
    this.sharing = true
    try {
      if (this.d.leases) for (const a of this.d.active.values()) {
        await this.d.leases.renew(a.id)
        if (a.stopped) continue
        const lost = await this.d.leases.failLost(a.id, LOST_ITEM)
        this.d.ended('failed', lost)
        if (lost > 0) this.d.s.log.warn('batches: items of a stopped instance failed, not sent again', { batch_id: a.id, items: lost })
      }
      const open = new Map((await this.d.store.open()).map((r) => [r.id, r]))
      for (const [id, a] of this.d.active) {
        const row = open.get(id)
        // ended by another instance (its files written): nothing left here
        if (!row) {
          if (!a.finalizing && a.inflight.size === 0 && a.queued === 0) this.d.active.delete(id)
          continue
        }
        if (FINAL.has(row.status) && !a.stopped) {
          a.status = row.status
          a.stopped = true
          this.d.maybeEnd(a)
        }
      }
      for (const row of open.values()) {
        if (this.d.active.has(row.id)) continue
        this.d.fill(this.d.track(row))
      }
    } catch (e) {
      this.d.s.log.warn('batches: sharing work with other instances failed; trying again', { error: (e as Error).message })
    } finally {
      this.sharing = false
      if (this.shareAgain) {
        this.shareAgain = false
        void this.share()
      }
    }
  }

  /** Leases to renew every period; with nothing open here and a bus to say otherwise, a look every few. */
  private readonly shareTick = () => {
    if (this.d.active.size > 0 || !this.bus || ++this.quietTicks % QUIET_SHARES === 0) void this.share()
  }

  /** Instances sharing a database hear of each other's new and ended batches on the bus. Returns the unsubscribe. */
  attachBus(bus: Bus): () => void {
    this.bus = bus
    // a look under way may have read the open batches before this one was made: another after it
    const off = bus.subscribe(TOPIC, () => (this.sharing ? (this.shareAgain = true) : void this.share()))
    return () => {
      off()
      this.bus = undefined
    }
  }

  /** At a close: no more looks nor expiry passes. */
  stop(): void {
    if (this.expiryTimer) clearInterval(this.expiryTimer)
    if (this.shareTimer) clearInterval(this.shareTimer)
  }

  /** Last at a close: another gateway on the data dir takes over once its marks are as they stay. */
  release(): void {
    this.runner?.release()
  }
}
