// API keys: random `sk-sy-…` strings shown once, stored as SHA-256 hashes. Lookups are
// served from memory; a change by the CLI (another process) or the admin routes bumps
// `updated_at`, which running servers poll, so the cache never serves a stale key for
// more than about a second.
import { eq, sql } from 'drizzle-orm'
import type { Statement } from 'bun:sqlite'
import type { Storage } from '../db/client.ts'
import { apiKeys } from '../db/schema.ts'
import type { Bus } from '../cluster/bus.ts'
import type { ApiKey } from './context.ts'
import { CreditLedger, type SharedCredits } from './credits.ts'

export const KEY_PREFIX = 'sk-sy-'

export function hashKey(key: string): string {
  return new Bun.CryptoHasher('sha256').update(key).digest('hex')
}

export function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return KEY_PREFIX + Buffer.from(bytes).toString('base64url')
}

export interface KeyInput {
  name: string
  account?: string
  credits?: number | null
  rpm?: number | null
  /** Use this exact key (bootstrap); otherwise one is generated. */
  key?: string
}

export interface KeyPatch {
  name?: string
  account?: string
  status?: 'active' | 'inactive'
  credits?: number | null
  rpm?: number | null
}

type Row = typeof apiKeys.$inferSelect

/** `unflushed`: costs settled in memory but not yet written (see credits.ts). */
function toKey(r: Row, unflushed = 0): ApiKey {
  return {
    id: r.id,
    account: r.account,
    name: r.name,
    keyPrefix: r.keyPrefix,
    status: r.status,
    credits: r.credits,
    spent: r.spent + unflushed,
    rpm: r.rpm,
    createdAt: r.createdAt,
    lastUsedAt: r.lastUsedAt,
  }
}

const NEGATIVE_CACHE_MAX = 10_000

export class KeyStore {
  private byHash = new Map<string, ApiKey | null>()
  private byId = new Map<string, ApiKey>()
  private lastSeenUpdate = 0
  private pendingTouch = new Map<string, number>()
  private timer?: ReturnType<typeof setInterval>
  private addSpentStmt?: Statement
  /** Reservations and settled-but-unwritten costs; every `spent` this store shows includes the latter. */
  readonly ledger = new CreditLedger()
  /** Credits shared with other instances (Redis), when configured: admission and settlement go there too. */
  shared?: SharedCredits
  private bus?: Bus

  constructor(private storage: Storage) {}

  private toKey(r: Row): ApiKey {
    return toKey(r, this.ledger.unflushed(r.id))
  }

  private get db() {
    return this.storage.db
  }

  create(input: KeyInput): { key: string; record: ApiKey } {
    const key = input.key ?? generateKey()
    const now = Date.now()
    const row: Row = {
      id: 'key_' + Bun.randomUUIDv7().replaceAll('-', '').slice(-20),
      account: input.account ?? 'default',
      name: input.name,
      keyHash: hashKey(key),
      keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
      status: 'active',
      credits: input.credits ?? null,
      spent: 0,
      rpm: input.rpm ?? null,
      createdAt: Math.floor(now / 1000),
      lastUsedAt: null,
      updatedAt: now,
    }
    this.db.insert(apiKeys).values(row).run()
    this.changed()
    return { key, record: toKey(row) }
  }

  list(): ApiKey[] {
    return this.db.select().from(apiKeys).orderBy(apiKeys.createdAt).all().map((r) => this.toKey(r))
  }

  get(id: string): ApiKey | undefined {
    const r = this.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
    return r ? this.toKey(r) : undefined
  }

  count(): number {
    return (this.storage.sqlite.query('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n
  }

  hasAny(): boolean {
    return this.storage.sqlite.query('SELECT 1 FROM api_keys LIMIT 1').get() !== null
  }

  update(id: string, patch: KeyPatch): ApiKey | undefined {
    const set: Partial<Row> = { updatedAt: Date.now() }
    if (patch.name !== undefined) set.name = patch.name
    if (patch.account !== undefined) set.account = patch.account
    if (patch.status !== undefined) set.status = patch.status
    if (patch.credits !== undefined) set.credits = patch.credits
    if (patch.rpm !== undefined) set.rpm = patch.rpm
    const r = this.db.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning().get()
    this.changed()
    return r ? this.toKey(r) : undefined
  }

  /** Grant more credits: adds to the granted amount (an unlimited key becomes a funded one). */
  credit(id: string, amount: number): ApiKey | undefined {
    const r = this.db
      .update(apiKeys)
      .set({ credits: sql`coalesce(${apiKeys.credits}, 0) + ${amount}`, updatedAt: Date.now() })
      .where(eq(apiKeys.id, id))
      .returning()
      .get()
    this.changed()
    return r ? this.toKey(r) : undefined
  }

  /** The key for a presented secret, from memory when cached. */
  authenticate(secret: string): ApiKey | undefined {
    const h = hashKey(secret)
    const cached = this.byHash.get(h)
    if (cached !== undefined) return cached ?? undefined
    const r = this.db.select().from(apiKeys).where(eq(apiKeys.keyHash, h)).get()
    if (!r) {
      if (this.byHash.size >= NEGATIVE_CACHE_MAX) this.byHash.clear()
      this.byHash.set(h, null)
      return undefined
    }
    const k = this.toKey(r)
    this.byHash.set(h, k)
    this.byId.set(k.id, k)
    return k
  }

  /**
   * The freshest view of a key for admission: the cached object (which settlements update in
   * place), or the stored row when the cache was just invalidated. A request may hold an
   * older object from before an invalidation, whose `spent` no longer moves.
   */
  current(id: string): ApiKey | undefined {
    const cached = this.byId.get(id)
    if (cached) return cached
    const r = this.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
    if (!r) return undefined
    const k = this.toKey(r)
    this.byId.set(id, k)
    return k
  }

  /** A request's real cost, known at record time: visible to the next admission at once, written later. */
  settle(id: string, usd: number) {
    if (!(usd > 0)) return
    this.ledger.addUnflushed(id, usd)
    const k = this.byId.get(id)
    if (k) k.spent += usd
  }

  /**
   * Write settled spend to the database. Only the row changes: the cache already counts it.
   * Call inside the recorder's transaction, then `written` after it commits; if it rolls
   * back, nothing in memory moved, so the cache never runs ahead of the database + the queue.
   */
  writeSpent(id: string, usd: number) {
    if (!(usd > 0)) return
    // a statement prepared once: drizzle would rebuild and re-prepare the query on every flush
    this.addSpentStmt ??= this.storage.sqlite.prepare('UPDATE api_keys SET spent = spent + ? WHERE id = ?')
    this.addSpentStmt.run(usd, id)
  }

  /** Settled spend is now in the database: no longer counted as unflushed. */
  written(id: string, usd: number) {
    if (usd > 0) this.ledger.addUnflushed(id, -usd)
  }

  /** Settled spend that will never be written (its record was given up): take it back out of memory. */
  unsettle(id: string, usd: number) {
    if (!(usd > 0)) return
    this.ledger.addUnflushed(id, -usd)
    const k = this.byId.get(id)
    if (k) k.spent -= usd
  }

  /** Add to a key's spend at once, in the database and the cache (for tools and tests; the recorder settles instead). */
  addSpent(id: string, usd: number) {
    if (!(usd > 0)) return
    this.writeSpent(id, usd)
    const k = this.byId.get(id)
    if (k) k.spent += usd
  }

  /** Note a use; written to the database in the background, not on the hot path. */
  touch(id: string, now = Date.now()) {
    this.pendingTouch.set(id, now)
    const k = this.byId.get(id)
    if (k) k.lastUsedAt = Math.floor(now / 1000)
  }

  flushTouches() {
    if (this.pendingTouch.size === 0) return
    const q = this.storage.sqlite.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
    this.storage.sqlite.transaction(() => {
      for (const [id, at] of this.pendingTouch) q.run(Math.floor(at / 1000), id)
    })()
    this.pendingTouch.clear()
  }

  invalidate() {
    this.byHash.clear()
    this.byId.clear()
  }

  /**
   * Other instances hear of key changes through the bus (within a second or two, issue 13),
   * beside the data-dir poll below that serves the CLI and a shared SQLite file.
   */
  attachBus(bus: Bus): () => void {
    this.bus = bus
    return bus.subscribe('keys', () => this.invalidate())
  }

  /** This instance changed a key: drop the cache here and tell the others. */
  private changed() {
    this.invalidate()
    void this.bus?.publish('keys', 'changed')
  }

  /** Poll for changes made elsewhere (the CLI on the same data dir). */
  watch(intervalMs = 1000) {
    this.lastSeenUpdate = this.latestUpdate()
    this.timer = setInterval(() => {
      try {
        const latest = this.latestUpdate()
        if (latest !== this.lastSeenUpdate) {
          this.lastSeenUpdate = latest
          this.invalidate()
        }
        this.flushTouches()
      } catch {
        // the database may be closing during shutdown
      }
    }, intervalMs)
    this.timer.unref?.()
  }

  stop() {
    if (this.timer) clearInterval(this.timer)
    this.flushTouches()
  }

  private latestUpdate(): number {
    const r = this.storage.sqlite.query('SELECT coalesce(max(updated_at), 0) AS m, count(*) AS n FROM api_keys').get() as { m: number; n: number }
    // count catches a deletion, which leaves max(updated_at) unchanged
    return r.m * 1000 + r.n
  }
}
