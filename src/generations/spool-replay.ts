// Spools left by gateways no longer running (killed while their database was away): their
// records written to the database, each once however often it is tried. The recorder
// (recorder.ts) keeps its own spool while the database is away; this writes those it finds of
// others, and its own at the next start.
import type { Billing, SpendWrite } from '../billing/billing.ts'
import { costsByKey } from '../billing/spend.ts'
import type { Storage } from '../db/client.ts'
import type { Sql } from '../db/sql.ts'
import { isStoreContended, isStoreAway } from '../db/unavailable.ts'
import type { Logger } from '../http/log.ts'
import type { GenerationRow } from './row.ts'
import type { Spool, Orphan } from './spool.ts'
import type { Aside } from './spool-rows.ts'
import type { GenerationStore } from './store.ts'

const DAY_MS = 86_400_000
/** Records a replay writes in one transaction. */
const REPLAY_PART = 1_000

export interface ReplayDeps {
  spool: Spool
  store: GenerationStore
  storage: Storage
  billing: Billing
  log: Logger
  /** How long records are kept (the recorder's): one older than that may have been stored and pruned. */
  retentionDays: () => number
  /** The recorder's write of records and their keys' spend in one transaction. */
  writeIn: (q: Sql, rows: GenerationRow[], spend: Pick<SpendWrite, 'store'>) => Promise<GenerationRow[]>
}

export class SpoolReplay {
  /** The look for dead gateways' spools under way (or the last one), and the one asked after it. */
  private replaying: Promise<void> = Promise.resolve()
  private nextLook?: Promise<void>

  constructor(private readonly deps: ReplayDeps) {}

  /** Writes every spool found of a gateway no longer running (the recorder's `replaySpools` says when and why). */
  look(): Promise<void> {
    // one look at a time; one asked while another runs comes after it (that one may have read
    // the directory before a spool the caller knows of was there)
    if (!this.nextLook) {
      const look = this.replaying.then(() => {
        this.nextLook = undefined
        return this.replayAll()
      })
      this.nextLook = look
      this.replaying = look.catch(() => {})
    }
    return this.nextLook
  }

  /** Once the look under way (if any) has ended. */
  idle(): Promise<void> {
    return this.replaying
  }

  private async replayAll(): Promise<void> {
    for (const orphan of this.deps.spool.orphans()) {
      try {
        const { stored, aside } = await this.replay(orphan)
        const keptIn = orphan.done(aside)
        this.deps.log.info('recorder: spool of a gateway no longer running written', { spool: orphan.id, records: orphan.rows.length, stored, torn: orphan.torn })
        if (keptIn) {
          const reasons = [...new Set(aside.map((a) => a.reason))]
          this.deps.log.error('recorder: spooled generation records not stored, kept beside the spool and not counted', { spool: orphan.id, file: keptIn, records: aside.length, reasons: reasons.slice(0, 3).join(' | ') })
        }
      } catch (e) {
        orphan.leave()
        this.deps.log.error('recorder: spool of a gateway no longer running not written yet; trying again', { spool: orphan.id, records: orphan.rows.length, error: (e as Error).message })
      }
    }
  }

  /**
   * A dead gateway's records, a transaction per REPLAY_PART; one the database refuses (not away, not
   * full, not a race lost to another write) is left out alone, and kept aside with the reason, as
   * is one that may have been stored and pruned since (`unpruned`). Returns how many were stored now.
   */
  private async replay(orphan: Orphan): Promise<{ stored: number; aside: Aside[] }> {
    const aside = [...orphan.aside]
    const rows = await this.unpruned(orphan.rows, aside)
    let stored = 0
    for (let i = 0; i < rows.length; i += REPLAY_PART) {
      const part = rows.slice(i, i + REPLAY_PART)
      try {
        stored += await this.storeReplayed(part)
      } catch (e) {
        if (notTheRecords(e)) throw e
        for (const row of part) {
          try {
            stored += await this.storeReplayed([row])
          } catch (e) {
            if (notTheRecords(e)) throw e
            aside.push({ record: row, reason: `refused by the database: ${(e as Error).message}` })
          }
        }
      }
    }
    return { stored, aside }
  }

  /**
   * The records retention cannot have pruned, and those stored still (the id check skips them).
   * One made before the prune mark (GenerationStore.prunedBefore) whose id is not stored was
   * either stored and pruned since (a kill between a commit and the spool's removal, and no
   * replay until past the retention) or never stored: nothing tells which, so it is kept aside,
   * uncounted, rather than maybe counted twice. With no mark (a database pruned by a version
   * that kept none), the mark is this gateway's retention.
   */
  private async unpruned(rows: GenerationRow[], aside: Aside[]): Promise<GenerationRow[]> {
    const mark = (await this.deps.store.prunedBefore()) ?? Date.now() - this.deps.retentionDays() * DAY_MS
    const out: GenerationRow[] = []
    for (const r of rows) {
      if (!(r.createdAt < mark)) out.push(r)
      else if (!(await this.deps.store.has(r.id))) aside.push({ record: r, reason: `made before ${new Date(mark).toISOString()}, where records have been pruned: stored and pruned since, or never stored (nothing tells which), so not counted` })
    }
    return out
  }

  private async storeReplayed(rows: GenerationRow[]): Promise<number> {
    const spend = this.deps.billing.storeOnly()
    const inserted = await this.deps.storage.sql.tx((q) => this.deps.writeIn(q, rows, spend))
    await this.deps.billing.reread(costsByKey(inserted).keys())
    return inserted.length
  }
}

/**
 * A replay's failure that says nothing against its records (the database away or full, or a
 * deadlock with another write): the spool stays for the next try, as its records may not be given
 * up for it; the spool is the only copy of them.
 */
const notTheRecords = (e: unknown) => isStoreAway(e) || isStoreContended(e)
