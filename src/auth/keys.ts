// API keys: random `sk-sy-…` strings shown once, stored as SHA-256 hashes. Lookups are
// served from memory: every key is loaded at start, and a key unknown there is looked up
// once (another instance may have made it). A change by the CLI (another process), another
// instance or the admin routes bumps `updated_at`, which running servers poll, so the cache
// never serves a stale key for more than about a second. A rotated key's old secret is dropped
// from memory when its row is read again here, or, when the rotation gave it a grace period,
// once that has passed (checked as it is presented).
import { eq, gt, gte, or, sql } from 'drizzle-orm'
import type { Storage } from '../db/client.ts'
import { names } from '../db/columns.ts'
import type { Param } from '../db/sql.ts'
import { apiKeys } from '../db/schema.ts'
import type { Bus } from '../cluster/bus.ts'
import type { ApiKey } from '../http/context.ts'
import { HttpError } from '../http/errors.ts'
import { ROUND_USD_SQL, roundUsd, USD_PLACES, usd } from '../lib/usd.ts'
import { nextTurn } from '../lib/turn.ts'
import type { WritesInFlight } from '../billing/writes-in-flight.ts'
import { emptyMaps, generateKey, hashKey, hashOf, newKey, prefixOf, put, servesBy, toKey, type KeyInput, type KeyPatch, type Loading, type Row } from './key-rows.ts'

const ak = names(apiKeys)
const ANY_KEY = `SELECT 1 AS one FROM ${ak.$table} LIMIT 1`

/** How far before the latest change read a change's read begins (another writer's clock may be behind this one's). */
const CHANGE_MARGIN_MS = 60_000
/** How often every key is read again all the same. */
const FULL_RELOAD_MS = 5 * 60_000


const NEGATIVE_CACHE_MAX = 10_000

/**
 * Reads of keys' rows on PostgreSQL, at most, while billing's writes keep crossing them: past
 * this the last is taken (a write every few ms under load; each retry waits for one to end).
 */
const READ_TRIES = 4

/** Keys read at a time by `pages`: 100,000 read and mapped at once held the loop about two seconds. */
const PAGE_ROWS = 1000

/** The most a key's credits may be, in USD: far past any real grant, far below where a double loses cents. */
export const MAX_CREDITS = 1e12
/** The longest a rotated key's old secret may keep working, in seconds (30 days). */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600
/** Requests a minute a key may be given, at most: past it a number no column holds (and no limit means anything). */
export const MAX_RPM = 1_000_000_000

export class KeyStore {
  /** Every known key by hash, and hashes known to be no key (null). */
  private maps = emptyMaps()
  private lastSeenUpdate = { m: 0, n: 0 }
  private pendingTouch = new Map<string, number>()
  private timer?: ReturnType<typeof setInterval>
  private reloading?: Promise<void>
  private reloadAgain = false
  private reloadFull = false
  /** The maps a full load is filling, page by page, until it swaps them in. */
  private loading?: Loading
  private bus?: Bus
  /**
   * Costs charged by this instance and not stored yet, which every `spent` shown here includes
   * (billing sets it, and moves the cached keys' `spent` as it charges; see billing/billing.ts).
   */
  unwrittenOf: (keyId: string) => number = () => 0
  /** Billing's writes of those costs under way: a row read on PostgreSQL across one is read again. */
  writes?: WritesInFlight

  constructor(private storage: Storage) {}

  private toKey(r: Row): ApiKey {
    return toKey(r, this.unwrittenOf(r.id))
  }

  private get db() {
    return this.storage.db
  }

  private get t() {
    return this.storage.t.apiKeys
  }

  private remember(r: Row): ApiKey {
    const k = this.toKey(r)
    put(this.maps, r, k)
    // a full load under way may have read the row before this: it would swap in the older one
    if (this.loading) put(this.loading, r, k)
    return k
  }

  /**
   * Keys changed through this store, and when (`performance.now()`): a reload whose read began
   * before such a change may have read the row as it was, and must not put it back over the
   * change (an operator's credit cut or disable, undone in memory until the next read; a
   * fallback's hold was seen made on the credit just cut). Forgotten once a reload begun after
   * them has ended.
   */
  private changedHere = new Map<string, number>()
  /** Whether `r` was read by a read begun at `began`, before a change made here since. */
  private readBefore = (r: Row, began: number) => (this.changedHere.get(r.id) ?? -1) > began
  private forgetChanges(began: number) {
    for (const [id, at] of this.changedHere) if (at <= began) this.changedHere.delete(id)
  }

  /** The latest `updated_at` of the rows read so far: a change reads the rows changed since (CHANGE_MARGIN_MS before it). */
  private readUpTo = 0
  private fullAt = 0

  /**
   * Loads every key into memory (at start, now and then, and when unknown secrets crowd the
   * cache): read a page at a time into maps of its own, swapped in at the end, so 100,000 keys do
   * not hold the loop (read at once, 1–3 s). Meanwhile lookups are served from the maps they
   * replace, and what changes a key (a charge, a key made or read again) moves the new maps' copy
   * too (`current`, `remember`). A key changed once the read began may be read by its page before
   * or after the change: what it read up to is its start, so the next change's read takes it.
   */
  async load(): Promise<void> {
    const began = Date.now()
    const t0 = performance.now()
    this.fullAt = began
    const next = emptyMaps()
    let upTo = 0
    this.loading = next
    try {
      const pages = this.rowPages((rows) => {
        for (const r of rows) {
          // a key changed here since holds its newer row in `next` already (remember)
          if (!this.readBefore(r, t0)) put(next, r, this.toKey(r))
          if (r.updatedAt > upTo) upTo = r.updatedAt
        }
      })
      for await (const _ of pages);
    } finally {
      this.loading = undefined
    }
    this.maps = next
    this.readUpTo = Math.min(upTo, began)
    this.forgetChanges(t0)
  }

  /**
   * The keys changed lately, read again: a change costs what changed, not every key ever made (a
   * gateway that makes a key a CI job read thousands of rows at each, on the thread that serves).
   * The margin covers writers whose clocks are behind this one's.
   */
  private async loadChanged(): Promise<void> {
    const since = this.readUpTo - CHANGE_MARGIN_MS
    const t0 = performance.now()
    await this.read(
      () => this.db.select().from(this.t).where(gte(this.t.updatedAt, since)),
      (rows) => {
        // never past this clock: a writer whose clock is ahead must not hide the others' changes
        const now = Date.now()
        for (const r of rows) {
          if (!this.readBefore(r, t0)) this.remember(r)
          if (r.updatedAt > this.readUpTo) this.readUpTo = Math.min(r.updatedAt, now)
        }
      },
    )
    this.forgetChanges(t0)
  }

  /**
   * Rows read and made keys in one step. A key's `spent` is its row's plus what billing charged
   * and has not stored; on SQLite both are read between transactions (Sql.between), since a
   * write still open on the one connection, or one committed whose charges billing has not
   * ended yet, shows a cost in the row that is still counted as not stored: twice.
   */
  private async read<T>(query: () => PromiseLike<unknown[]> & { all(): unknown[] }, use: (rows: Row[]) => T): Promise<T> {
    const sql = this.storage.sql
    if (sql.between) return sql.between(() => use(query().all() as Row[]))
    // on PostgreSQL the row comes back on a connection of its own, in either order with a
    // write's commit on another: read across a write (begun or ended meanwhile), it is read again.
    // No row (a secret no key has) holds no spent a write could make wrong: final at once
    for (let tries = 1; ; tries++) {
      const before = this.writes?.mark() ?? 0
      const rows = (await query()) as Row[]
      if (!this.writes || rows.length === 0 || this.writes.clean(before) || tries === READ_TRIES) return use(rows)
      await this.writes.settled()
    }
  }

  async create(input: KeyInput): Promise<{ key: string; record: ApiKey }> {
    const { key, row } = newKey(input)
    await this.db.insert(this.t).values(row)
    this.remember(row)
    this.onChange?.(row.id)
    void this.bus?.publish('keys', row.id)
    return { key, record: toKey(row) }
  }

  /**
   * The first key, made only if there is none yet: instances that start together on an empty
   * shared database make one between them (the check and the insert hold a lock: SQLite's
   * write lock, a transaction-scoped advisory lock on PostgreSQL). Undefined when one existed.
   */
  async createFirst(input: KeyInput): Promise<{ key: string; record: ApiKey } | undefined> {
    const { key, row } = newKey(input)
    const insert = this.db.insert(this.t).values(row).toSQL()
    const made = await this.storage.sql.tx(async (q) => {
      if (q.dialect === 'pg') await q.get("SELECT pg_advisory_xact_lock(hashtext('switchyard first key ' || current_schema())) AS locked")
      if (await q.get(ANY_KEY)) return false
      await q.run(insert.sql, insert.params as Param[])
      return true
    })
    if (!made) return undefined
    this.remember(row)
    return { key, record: toKey(row) }
  }

  async list(): Promise<ApiKey[]> {
    return this.read(
      () => this.db.select().from(this.t).orderBy(this.t.createdAt),
      (rows) => rows.map((r) => this.toKey(r)),
    )
  }

  /**
   * Every key, PAGE_ROWS at a time in the order of their ids (each page a walk of the primary
   * key's index from where the last ended), with a turn of the loop between pages.
   */
  async *pages(): AsyncGenerator<ApiKey[]> {
    yield* this.rowPages((rows) => rows.map((r) => this.toKey(r)))
  }

  /** Every row, PAGE_ROWS at a time by id, each page handed to `use` as `read` hands rows, a turn of the loop between. */
  private async *rowPages<T>(use: (rows: Row[]) => T): AsyncGenerator<T> {
    let after = ''
    for (;;) {
      let n = 0
      const page = await this.read(
        () => this.db.select().from(this.t).where(gt(this.t.id, after)).orderBy(this.t.id).limit(PAGE_ROWS),
        (rows) => {
          n = rows.length
          if (n > 0) after = rows[n - 1]!.id
          return use(rows)
        },
      )
      if (n > 0) yield page
      if (n < PAGE_ROWS) return
      await nextTurn()
    }
  }

  /**
   * The accounts that have keys, each once, sorted (the dashboard's account filter), from the
   * keys in memory (every key, within a second of a change): a DISTINCT over 100,000 rows held
   * SQLite's thread 100–200 ms, reading them all near a second.
   */
  accounts(): string[] {
    const seen = new Set<string>()
    for (const k of this.maps.byId.values()) seen.add(k.account)
    return [...seen].sort()
  }

  get(id: string): Promise<ApiKey | undefined> {
    return this.read(this.byIdQuery(id), ([r]) => (r ? this.toKey(r) : undefined))
  }

  private byIdQuery(id: string) {
    return () => this.db.select().from(this.t).where(eq(this.t.id, id)).limit(1)
  }

  async count(): Promise<number> {
    return (await this.storage.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${ak.$table}`))!.n
  }

  async hasAny(): Promise<boolean> {
    return (await this.storage.sql.get(ANY_KEY)) !== null
  }

  async update(id: string, patch: KeyPatch): Promise<ApiKey | undefined> {
    const set: Partial<Row> = { updatedAt: Date.now() }
    if (patch.name !== undefined) set.name = patch.name
    if (patch.account !== undefined) set.account = patch.account
    if (patch.status !== undefined) set.status = patch.status
    if (patch.credits !== undefined) set.credits = patch.credits === null ? null : roundUsd(patch.credits)
    if (patch.rpm !== undefined) set.rpm = patch.rpm
    const [r] = (await this.db.update(this.t).set(set).where(eq(this.t.id, id)).returning()) as Row[]
    return r ? this.changed(r) : undefined
  }

  /**
   * A new secret for the key: the same id (what the key owns and has spent stays with it), a new
   * hash and prefix. With no grace period the old secret is refused at once here, and on other
   * instances when they hear of the change (the bus, within about a second; else their poll of
   * the database: 1 s on SQLite, 5 s on PostgreSQL). With one (`graceMs`), the old secret keeps
   * working until it ends, so that clients can move to the new one without a gap; one previous
   * secret at most: a rotation replaces the previous one with the secret it replaces (or with
   * none, without a grace period). A disabled key stays disabled.
   */
  async rotate(id: string, graceMs = 0): Promise<{ key: string; record: ApiKey } | undefined> {
    const key = generateKey()
    const now = Date.now()
    const [r] = (await this.db
      .update(this.t)
      .set({
        keyHash: hashKey(key),
        keyPrefix: prefixOf(key),
        updatedAt: now,
        // the right side reads the row as it was: the secret replaced
        previousKeyHash: graceMs > 0 ? sql`${this.t.keyHash}` : null,
        previousExpiresAt: graceMs > 0 ? now + graceMs : null,
      })
      .where(eq(this.t.id, id))
      .returning()) as Row[]
    return r ? { key, record: this.changed(r) } : undefined
  }

  /**
   * The secret a rotation replaced stops working now, before its grace period ends (every client
   * has moved to the new one, or the old one leaked); the key's current secret stays. A key with
   * no previous secret is answered as it is.
   */
  async revokePrevious(id: string): Promise<ApiKey | undefined> {
    const [r] = (await this.db
      .update(this.t)
      .set({ previousKeyHash: null, previousExpiresAt: null, updatedAt: Date.now() })
      .where(eq(this.t.id, id))
      .returning()) as Row[]
    return r ? this.changed(r) : undefined
  }

  /**
   * Grant more credits: adds to the granted amount (an unlimited key becomes a funded one). A
   * grant that would take the key past MAX_CREDITS is a 400: a sum that overflowed to Infinity
   * would read as unlimited (and PostgreSQL refuses the overflow outright). So is one too small
   * to move the sum at all (5e-324, or 1e-11 on a million): it was a 200 that changed nothing.
   * The sum is rounded as every money sum is (lib/usd.ts), in the statement that adds.
   */
  async credit(id: string, amount: number): Promise<ApiKey | undefined> {
    const held = sql`coalesce(${this.t.credits}, 0)`
    const [before, after] = ROUND_USD_SQL[this.storage.sql.dialect]
    const total = sql`${sql.raw(before)}${held} + ${amount}${sql.raw(after)}`
    const [r] = (await this.db
      .update(this.t)
      .set({ credits: total, updatedAt: Date.now() })
      .where(sql`${this.t.id} = ${id} AND ${total} <= ${MAX_CREDITS} AND ${total} > ${held}`)
      .returning()) as Row[]
    if (r) return this.changed(r)
    const k = await this.get(id)
    if (!k) return undefined
    const has = k.credits ?? 0
    if (has + amount <= MAX_CREDITS) throw new HttpError(400, `amount: ${amount} USD is too small to change the key's credits (${k.credits === null ? 'unlimited' : `${has} USD`}), which are kept to ${10 ** -USD_PLACES} USD`)
    throw new HttpError(400, `amount: the key's credits would pass the most a key may hold (${usd(MAX_CREDITS)}); it holds ${usd(has)}`)
  }

  /** Told of every change made through this store (another instance may cache the key). */
  onChange?: (keyId: string) => void

  /** A key changed here: the cache shows it at once, and is reloaded for whatever else moved. */
  private changed(r: Row): ApiKey {
    this.changedHere.set(r.id, performance.now())
    const k = this.remember(r)
    void this.invalidate()
    this.onChange?.(r.id)
    void this.bus?.publish('keys', r.id)
    return k
  }

  /**
   * The key for a presented secret: from memory when known (the hot path, no await), else
   * looked up once (a key another instance or process just made).
   */
  authenticate(secret: string): ApiKey | undefined | Promise<ApiKey | undefined> {
    const h = hashKey(secret)
    const cached = this.maps.byHash.get(h)
    if (cached !== undefined) return cached === null ? undefined : this.served(cached, h)
    return this.lookup(h)
  }

  /** The key for a secret as memory holds it: null when known to be no key, undefined when not in memory. */
  known(secret: string): ApiKey | null | undefined {
    const h = hashKey(secret)
    const cached = this.maps.byHash.get(h)
    return cached ? (this.served(cached, h) ?? null) : cached
  }

  /** `k`, held under `h`, if `h` may still serve it; a previous secret whose grace has ended is known to be no key from then on. */
  private served(k: ApiKey, h: string): ApiKey | undefined {
    if (servesBy(k, h)) return k
    if (this.maps.byHash.get(h) === k) this.maps.byHash.set(h, null)
    return undefined
  }

  private async lookup(h: string): Promise<ApiKey | undefined> {
    const found = await this.read(
      () => this.db.select().from(this.t).where(or(eq(this.t.keyHash, h), eq(this.t.previousKeyHash, h))).limit(1),
      // memory holds another secret of this key: one of the two was read before a rotation
      // (this lookup, begun before it, would bring the old secret back), so its row is read again
      ([r]) => (!r ? undefined : this.heldOtherwise(r) ? r.id : this.remember(r)),
    )
    if (typeof found === 'object' && servesBy(found, h)) return found
    if (typeof found === 'string') {
      const again = await this.read(this.byIdQuery(found), ([r]) => r && this.remember(r))
      if (again && servesBy(again, h)) return again
    }
    if (this.maps.byHash.size >= NEGATIVE_CACHE_MAX + this.maps.byId.size) this.invalidate(true)
    this.maps.byHash.set(h, null)
    return undefined
  }

  private heldOtherwise(r: Row): boolean {
    const held = hashOf(this.maps.byId.get(r.id))
    return held !== undefined && held !== r.keyHash && held !== r.previousKeyHash
  }

  /**
   * The freshest view of a key for admission: the cached object (which settlements update in
   * place). A request may hold an older object from before a reload, whose `spent` no longer moves.
   */
  current(id: string): ApiKey | undefined {
    // during a full load, the copy it has read is the one that will stay
    return this.loading?.byId.get(id) ?? this.maps.byId.get(id)
  }

  /**
   * Read one key's row again, now (after a write elsewhere changed it). A reload already under
   * way is waited for first, so its older figure cannot land after this one.
   */
  async reloadOne(id: string): Promise<void> {
    await this.reloading
    const t0 = performance.now()
    await this.read(this.byIdQuery(id), ([r]) => r && !this.readBefore(r, t0) && this.remember(r))
  }

  /** Note a use; written to the database in the background, not on the hot path. */
  touch(id: string, now = Date.now()) {
    this.pendingTouch.set(id, now)
    const at = Math.floor(now / 1000)
    const k = this.maps.byId.get(id)
    if (k) k.lastUsedAt = at
    // a full load under way keeps its own copy (on every request: no array made for the two)
    const next = this.loading?.byId.get(id)
    if (next) next.lastUsedAt = at
  }

  async flushTouches() {
    if (this.pendingTouch.size === 0) return
    const touches = [...this.pendingTouch]
    this.pendingTouch.clear()
    await this.storage.sql.tx(async (q) => {
      for (const [id, at] of touches) await q.run(`UPDATE ${ak.$table} SET ${ak.lastUsedAt} = ? WHERE ${ak.id} = ?`, [Math.floor(at / 1000), id])
    })
  }

  /**
   * Other instances hear of key changes through the bus (Redis pub/sub, or PostgreSQL
   * LISTEN/NOTIFY; within a second or two), beside the poll below that serves the
   * CLI and writers that do not publish.
   */
  attachBus(bus: Bus): () => void {
    this.bus = bus
    return bus.subscribe('keys', () => void this.invalidate())
  }

  /**
   * Something changed: the keys changed lately are read again (`full`: every key), at most one
   * reload at a time, and one more after it. Every FULL_RELOAD_MS the reload is a full one, for
   * what the margin of a change's read cannot see (a row edited by hand with an old time).
   */
  invalidate(full = false): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true
      this.reloadFull ||= full
      return this.reloading
    }
    this.reloadFull = full
    this.reloading = (async () => {
      try {
        do {
          this.reloadAgain = false
          const whole = this.reloadFull || Date.now() - this.fullAt >= FULL_RELOAD_MS
          this.reloadFull = false
          await (whole ? this.load() : this.loadChanged())
        } while (this.reloadAgain)
      } catch {
        // the store is down or closing: the cache stays as it was, the next change tries again
      } finally {
        this.reloading = undefined
      }
    })()
    return this.reloading
  }

  /** Poll for changes made elsewhere (the CLI on the same data dir, another instance). */
  async watch(intervalMs = 1000) {
    this.lastSeenUpdate = await this.latestUpdate()
    await this.load()
    this.timer = setInterval(() => void this.poll(), intervalMs)
    this.timer.unref?.()
  }

  private polling = false
  private async poll() {
    if (this.polling) return
    this.polling = true
    try {
      const latest = await this.latestUpdate()
      const seen = this.lastSeenUpdate
      if (latest.m !== seen.m || latest.n !== seen.n) {
        this.lastSeenUpdate = latest
        // fewer rows (a key deleted by hand): only a full read drops it
        await this.invalidate(latest.n < seen.n)
      } else if (Date.now() - this.fullAt >= FULL_RELOAD_MS) await this.invalidate(true)
      await this.flushTouches()
    } catch {
      // the database may be down, or closing during shutdown
    } finally {
      this.polling = false
    }
  }

  async stop() {
    if (this.timer) clearInterval(this.timer)
    await this.flushTouches().catch(() => {})
  }

  /** The latest change and the number of keys (which catches a deletion, leaving the latest change as it was). */
  private async latestUpdate(): Promise<{ m: number; n: number }> {
    const r = (await this.storage.sql.get<{ m: number | string; n: number | string }>(`SELECT coalesce(max(${ak.updatedAt}), 0) AS m, count(*) AS n FROM ${ak.$table}`))!
    return { m: Number(r.m), n: Number(r.n) }
  }
}
