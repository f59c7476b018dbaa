// How money moves, in one place. A request with a funded key is
//   admitted:  its worst case is held against the key (reserve; 402 when nothing is left),
//   charged:   when it ends, its priced cost replaces the hold (charge, at record time),
//   stored:    the cost reaches the key's row in the transaction that stores the record,
//   or released: it ended with no record and no cost (release).
// Interactive requests and batch items go the same way; a batch worker stores its items' costs
// itself and the main thread hears of them (fromWorker). Nothing else changes a key's spend or
// a reservation.
//
// Invariants (test/billing/invariants.test.ts states them):
//   - never more than one request past a credit: admission reads credits − spent − reserved,
//     and `spent` counts a charged cost at once, stored or not;
//   - each record is billed once: its cost is charged once, stored once with it, and taken back
//     (giveUp) only when the record itself will never be stored;
//   - a cost is always visible to admission, held or charged or stored, on every instance.
import type { KeyStore } from '../auth/keys.ts'
import type { Catalog } from '../config/catalog.ts'
import { RedisUnavailable } from '../cluster/redis.ts'
import { names } from '../db/columns.ts'
import { apiKeys } from '../db/schema.ts'
import type { Piece, Sql } from '../db/sql.ts'
import type { ApiKey } from '../http/context.ts'
import { CreditsExhausted, sharedStoreDown, worstCase, type Admission, type AdmitInput } from './admission.ts'
import { MemoryLedger, RESERVATION_TTL_MS, type Hold, type Ledger, type LedgerWrite } from './ledger.ts'
import { SpendByKey } from './spend.ts'
import { WritesInFlight } from './writes-in-flight.ts'
import { roundUsd, roundUsdSql } from '../lib/usd.ts'

/** A key's stored spend grows by a cost, the sum rounded (lib/usd.ts; its columns by the table declaration). */
const k = names(apiKeys)
const ADD_SPENT = {
  sqlite: `UPDATE ${k.$table} SET ${k.spent} = ${roundUsdSql('sqlite', `${k.spent} + ?`)} WHERE ${k.id} = ?`,
  pg: `UPDATE ${k.$table} SET ${k.spent} = ${roundUsdSql('pg', `${k.spent} + ?`)} WHERE ${k.id} = ?`,
}
/** A key's stored spend. */
const STORED_SPENT = `SELECT ${k.spent} AS spent FROM ${k.$table} WHERE ${k.id} = ?`
/** PostgreSQL: the same for many keys at once, `[{id, usd}]` as one JSON parameter. */
const ADD_SPENT_JSON = `UPDATE ${k.$table} AS k SET ${k.spent} = ${roundUsdSql('pg', `k.${k.spent} + v.usd`)} FROM json_to_recordset(?::text::json) AS v(id text, usd double precision) WHERE k.${k.id} = v.id`

export interface BillingDeps {
  keys: KeyStore
  catalog: Catalog
  sql: Sql
  /** With a shared ledger (Redis) that does not answer: refuse (503), or admit on this instance's own figures. */
  onSharedDown?: 'deny' | 'allow'
  /** Told when admission falls back to this instance's figures. */
  degraded?: () => void
}

/** Costs per key that a batch worker stored since it last said. */
export type StoredSpend = [keyId: string, usd: number][]

/** One write of charged costs (see Recorder.write): taken with its records, before any await. */
export interface SpendWrite {
  /** In the transaction: its statements are issued first, the records' after them without waiting. */
  begin(q: Sql): Promise<void>
  /**
   * In the transaction: the costs of the records it stores, onto their keys' rows, all sent at
   * once. A negative amount takes back what was added for a record that was not stored.
   */
  store(q: Sql, costs: Map<string, number>): Promise<void>
  /**
   * PostgreSQL, in place of `begin` and `store`: the same statements as parts of the records'
   * one statement (GenerationStore.insertWhole). If that fails, `begin` and `store` may follow.
   */
  inline(costs: Map<string, number>): Piece[]
  /**
   * After the transaction; `costs` are what `store` wrote, when it committed. Called from the
   * transaction's `committed` (Sql.tx) where there is one, so that no read of a key's row sees
   * the cost stored and still counted as not stored; only the first call counts.
   */
  end(committed: boolean, costs?: Map<string, number>): void
}

/** How often the holds of requests in progress are renewed: well within their lapse. */
const RENEW_EVERY_MS = RESERVATION_TTL_MS / 3
/** A request in progress longer than this is taken for one whose end was lost: its hold is left to lapse. */
const RENEWED_AT_MOST_MS = 24 * 3_600_000
/** What `keep` gives a request that holds nothing (most: keys without credits). */
const NOTHING_KEPT = () => {}

/** A worker's stored spend, its positive amounts summed by key. */
function positiveByKey(stored: StoredSpend): Map<string, number> {
  const keys = new Map<string, number>()
  for (const [keyId, usd] of stored) if (usd > 0) keys.set(keyId, (keys.get(keyId) ?? 0) + usd)
  return keys
}

/** Costs onto their keys' stored spend, in the transaction `q`, all sent at once (a negative amount takes back). */
async function addSpent(q: Sql, costs: Map<string, number>): Promise<void> {
  const runs: Promise<number>[] = []
  for (const [keyId, usd] of costs) if (usd !== 0) runs.push(q.run(ADD_SPENT[q.dialect], [usd, keyId]))
  await Promise.all(runs)
}

export class Billing {
  /** Holds of requests in progress, by id, with when they were made: renewed until the request ends (`keep`). */
  private readonly kept = new Map<string, number>()
  private renewTimer: ReturnType<typeof setInterval> | undefined

  /** Charged here and not stored yet: every `spent` the key cache shows includes it. */
  private readonly unwrittenSpend = new SpendByKey()
  /** Writes of those costs under way: a key's row read across one is read again (KeyStore). */
  private readonly writes = new WritesInFlight()
  /** With Redis: admission on this instance's figures while it is away (`on_error: allow`). */
  private readonly fallback?: MemoryLedger
  /** A batch worker's: what it stored, for the main thread. */
  private readonly journal?: SpendByKey
  /**
   * Charges the recorder has taken for the next turn of the loop (a reply it read after handing
   * it over): run before an admission, so that a client's next request, sent the moment the last
   * one ended, never finds the last one's hold still open.
   */
  chargesDue: () => void = () => {}

  constructor(
    private readonly deps: BillingDeps,
    readonly ledger: Ledger = new MemoryLedger(),
    opts: { journal?: boolean } = {},
  ) {
    deps.keys.unwrittenOf = (id) => this.unwrittenSpend.get(id)
    deps.keys.writes = this.writes
    ledger.readUnwritten?.((id) => this.unwrittenSpend.get(id))
    ledger.readStored?.(async (id) => {
      const row = await deps.sql.get<{ spent: number }>(STORED_SPENT, [id])
      return row ? Number(row.spent) : null
    })
    if (ledger.kind === 'redis') this.fallback = new MemoryLedger()
    if (opts.journal) this.journal = new SpendByKey()
  }

  /**
   * Admit a generation: throws 402 when the key's balance less what its requests in progress hold
   * is not above zero, else holds the request's worst case. At once on the memory ledger (no
   * await on the hot path); a promise on a shared one.
   */
  admit(input: AdmitInput): Admission | Promise<Admission> {
    if (input.apiKey.credits === null) return undefined // unlimited: nothing to guard
    // the cached key is the one charges move; the request's copy may predate a reload
    const key = this.deps.keys.current(input.apiKey.id) ?? input.apiKey
    if (key.credits === null) return undefined
    this.chargesDue()
    const funded = key as ApiKey & { credits: number }
    const usd = worstCase(this.deps.catalog, input)
    let hold: Hold | Promise<Hold>
    try {
      hold = this.ledger.reserve(funded, usd)
    } catch (e) {
      return this.whenDown(e, funded, usd)
    }
    if (hold instanceof Promise) return this.held(hold, funded, usd)
    return admitted(hold, funded.credits)
  }

  /** A shared ledger's answer (no closures a request, as `then` would take). */
  private async held(hold: Promise<Hold>, key: ApiKey & { credits: number }, usd: number | null): Promise<Admission> {
    let h: Hold
    try {
      h = await hold
    } catch (e) {
      return this.whenDown(e, key, usd)
    }
    return admitted(h, key.credits)
  }

  private whenDown(e: unknown, key: ApiKey & { credits: number }, usd: number | null): Admission {
    if (!(e instanceof RedisUnavailable)) throw e
    if (!this.fallback || this.deps.onSharedDown !== 'allow') throw sharedStoreDown(e)
    this.deps.degraded?.()
    return admitted(this.fallback.reserve(key, usd), key.credits)
  }

  /** The request ended with no record and no cost (nothing went upstream). Harmless after a charge. */
  release(admission: Admission): void {
    const id = admission?.reservationId
    if (id === undefined) return
    this.fallback?.settle(id)
    this.ledger.settle(id, undefined, 0)
  }

  /**
   * A request ended, costing `usd` (priced at record time): its hold ends and the cost counts
   * against the key at once, stored or not. Once per record. Never throws.
   */
  charge(keyId: string, reservationId: string | undefined, usd: number | null): void {
    const cost = usd !== null && Number.isFinite(usd) && usd > 0 ? usd : 0
    this.fallback?.settle(reservationId)
    this.ledger.settle(reservationId, keyId, cost, reservationId === undefined && this.deps.keys.current(keyId)?.credits === null)
    if (cost === 0) return
    this.unwrittenSpend.add(keyId, cost)
    this.moveCached(keyId, cost)
  }

  /** Start a write of the records charged so far (call as they are taken, before any await). */
  startWrite(): SpendWrite {
    const ledgerWrite: LedgerWrite | undefined = this.ledger.startWrite?.()
    const written = this.writes.begin()
    let ended = false
    return {
      begin: async (q) => {
        await ledgerWrite?.begin(q)
      },
      store: addSpent,
      inline: (costs) => {
        const pieces: Piece[] = []
        const first = ledgerWrite?.inline()
        if (first) pieces.push(first)
        const adds = [...costs].filter(([, usd]) => usd !== 0).map(([id, usd]) => ({ id, usd }))
        if (adds.length > 0) pieces.push({ text: ADD_SPENT_JSON, params: [JSON.stringify(adds)] })
        return pieces
      },
      end: (committed, costs) => {
        if (ended) return
        ended = true
        // stored: no longer only in memory (the cache already shows it; a reload reads the row).
        // Before the ledger's end: admission waits for that, then reads row + unwritten once.
        if (committed && costs) {
          for (const [keyId, usd] of costs) {
            this.unwrittenSpend.add(keyId, -usd)
            this.journal?.add(keyId, usd)
          }
        }
        ledgerWrite?.end(committed)
        written()
      },
    }
  }

  /**
   * A write of records no charge of this process counted (the spool of a gateway killed while its
   * database was away, whose charges died with it, or live on in a shared ledger): their costs
   * go onto the keys' rows only. After its commit, `reread` their keys.
   */
  storeOnly(): Pick<SpendWrite, 'store'> {
    return { store: addSpent }
  }

  /** Keys whose stored spend another write moved (`storeOnly`): the cache reads their rows again. */
  async reread(keyIds: Iterable<string>): Promise<void> {
    for (const id of keyIds) {
      try {
        await this.deps.keys.reloadOne(id)
      } catch {
        // the database did not answer: the next reload of the keys reads it
      }
    }
  }

  /** Charged costs whose records will never be stored: taken back everywhere they were counted. */
  giveUp(costs: Map<string, number>): void {
    for (const [keyId, usd] of costs) {
      if (!(usd > 0)) continue
      this.unwrittenSpend.add(keyId, -usd)
      this.moveCached(keyId, -usd)
      this.ledger.unsettle(keyId, usd)
    }
  }

  /**
   * A batch worker is about to store these costs (with Redis, writer-worker.ts asks before each
   * write's transaction, as a recorder's write sends first: `storing`): a shared ledger counts
   * them now, and the worker begins its write once this resolves (answered, or kept owed with
   * Redis away). A kill after its commit then leaves Redis no cost short of the database.
   */
  workerStoring(stored: StoredSpend): Promise<void> {
    const keys = positiveByKey(stored)
    for (const [keyId, usd] of keys) this.ledger.settle(undefined, keyId, usd)
    return this.ledger.sendNow(keys.keys())
  }

  /** What `workerStoring` counted and the write did not store after all (it failed, or an item had a result already): taken back. */
  workerNotStored(stored: StoredSpend): void {
    for (const [keyId, usd] of positiveByKey(stored)) this.ledger.unsettle(keyId, usd)
  }

  /**
   * A batch worker stored these costs (a shared ledger counted them before: `workerStoring`): the
   * cache shows them once it has read the keys' rows again (resolved then: the items' holds go
   * after it). Not moved by the amounts, as a charge here is: a reload of the cache may already
   * have read a row with the cost before this message came, and would then count it twice.
   */
  async fromWorker(stored: StoredSpend): Promise<void> {
    for (const [keyId, usd] of positiveByKey(stored)) {
      try {
        await this.deps.keys.reloadOne(keyId)
      } catch {
        // the database did not answer: counted by the amount, at worst twice, never not at all
        this.moveCached(keyId, usd)
      }
    }
  }

  /**
   * These keys' records are about to be stored: a shared ledger gets their costs first (Ledger's
   * sendNow), so that it is never short of the database if the instance is killed in between.
   */
  storing(keyIds: Iterable<string>): void {
    void this.ledger.sendNow(keyIds)
  }

  /** A batch worker's: what it stored since the last call. */
  drain(): StoredSpend {
    return this.journal?.drain() ?? []
  }

  /** Add to a key's spend at once, stored and shown (operator tools and tests; requests are charged instead). */
  async addSpent(keyId: string, usd: number): Promise<void> {
    if (!(usd > 0)) return
    await this.deps.sql.run(ADD_SPENT[this.deps.sql.dialect], [usd, keyId])
    await this.deps.keys.reloadOne(keyId)
  }

  /** Charged by this instance and not stored yet. */
  unwritten(keyId: string): number {
    return this.unwrittenSpend.get(keyId)
  }

  /** Held against the key by this instance's requests in progress. */
  reserved(keyId: string): number {
    return this.ledger.reserved(keyId) + (this.fallback?.reserved(keyId) ?? 0)
  }

  /**
   * A request's hold stays while the request is in progress, however long (a stream of an hour,
   * a reply a slow model thinks over): renewed every RENEW_EVERY_MS until the returned function is
   * called. Without it, a hold lapsed after RESERVATION_TTL_MS and the key's credit was free to
   * admit again while the first requests still ran.
   */
  keep(admission: Admission): () => void {
    const id = admission?.reservationId
    if (id === undefined) return NOTHING_KEPT
    this.kept.set(id, Date.now())
    if (!this.renewTimer) {
      this.renewTimer = setInterval(() => this.renew(), RENEW_EVERY_MS)
      this.renewTimer.unref?.()
    }
    return () => {
      this.kept.delete(id)
      if (this.kept.size === 0 && this.renewTimer) {
        clearInterval(this.renewTimer)
        this.renewTimer = undefined
      }
    }
  }

  /** Every kept hold lapses a full term from now (tests call it; the timer does every RENEW_EVERY_MS). */
  renew(now = Date.now()): void {
    const ids: string[] = []
    for (const [id, since] of this.kept) {
      if (now - since > RENEWED_AT_MOST_MS) this.kept.delete(id)
      else ids.push(id)
    }
    if (ids.length === 0) return
    this.ledger.renew(ids)
    this.fallback?.renew(ids)
  }

  /** Reservations (and, on Redis, settlements) this instance has open. */
  get open(): number {
    return this.ledger.open + (this.fallback?.open ?? 0)
  }

  /** The shared store's figures for a key (Redis; undefined on the other ledgers). */
  figures(keyId: string): Promise<{ spent: number | null; reserved: number }> | undefined {
    return this.ledger.figures?.(keyId)
  }

  async stop(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer)
    this.renewTimer = undefined
    await this.ledger.stop?.()
  }

  /** The cached key's spent, which admission reads, moves with every charge. */
  private moveCached(keyId: string, usd: number) {
    const k = this.deps.keys.current(keyId)
    if (k) k.spent = roundUsd(k.spent + usd)
  }
}

function admitted(h: Hold, credits: number): Admission {
  if (!h.admitted) throw new CreditsExhausted(credits, h.spent, h.reserved)
  return h.reservationId === undefined ? undefined : { reservationId: h.reservationId }
}
