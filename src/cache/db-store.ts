// The response cache in the database (an instance without Redis): one row per answer, its
// last use kept for eviction. The bytes held are counted in memory (read from the table at
// the first store, and again whenever a store would pass the bound), so a store costs a
// lookup and an upsert until the bound is reached; then, before it goes in, expired answers
// are dropped, and the ones used longest ago after them, until it fits.
import { names, selectList } from '../db/columns.ts'
import { responseCache } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import { bytesOf, type CacheStore, type CachedAnswer } from './store.ts'

const c = names(responseCache)
const COLUMNS = ['key', 'status', 'contentType', 'body', 'bytes', 'createdAt', 'expiresAt', 'usedAt'] as const
const GET = `SELECT ${selectList(responseCache, ['status', 'contentType', 'body', 'createdAt', 'expiresAt'])} FROM ${c.$table} WHERE ${c.key} = ?`
const TOUCH = `UPDATE ${c.$table} SET ${c.usedAt} = ? WHERE ${c.key} = ?`
const SIZE_OF = `SELECT ${c.bytes} AS bytes FROM ${c.$table} WHERE ${c.key} = ?`
const PUT = `INSERT INTO ${c.$table} (${COLUMNS.map((k) => c[k]).join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (${c.key}) DO UPDATE SET ${COLUMNS.slice(1).map((k) => `${c[k]} = excluded.${c[k]}`).join(', ')}`
const DROP = `DELETE FROM ${c.$table} WHERE ${c.key} = ?`
const DROP_EXPIRED = `DELETE FROM ${c.$table} WHERE ${c.expiresAt} <= ?`
const OLDEST = `SELECT ${c.key} AS key, ${c.bytes} AS bytes FROM ${c.$table} WHERE ${c.key} <> ? ORDER BY ${c.usedAt} ASC LIMIT 200`
const TOTAL = `SELECT count(*) AS entries, coalesce(sum(${c.bytes}), 0) AS bytes FROM ${c.$table}`
const CLEAR = `DELETE FROM ${c.$table}`

interface Row {
  status: number | string
  contentType: string | null
  body: string
  createdAt: number | string
  expiresAt: number | string
}

export class DbCacheStore implements CacheStore {
  readonly kind = 'db'
  /** Bytes held, as this instance counts them; null until read from the table. */
  private total: number | null = null

  constructor(
    private readonly sql: Sql,
    readonly maxBytes: number,
  ) {}

  async get(key: string, maxAgeMs: number): Promise<CachedAnswer | undefined> {
    // stored by this instance a moment ago, its write still under way (a few round trips on
    // PostgreSQL): the client that asks again at once is answered as it will be after
    const writing = this.unwritten.get(key)
    if (writing) return writing
    const row = await this.sql.get<Row>(GET, [key])
    if (!row) return undefined
    const now = Date.now()
    if (Number(row.expiresAt) <= now) {
      await this.sql.run(DROP, [key])
      return undefined
    }
    // older than this request takes: kept for those that take it
    if (now - Number(row.createdAt) > maxAgeMs) return undefined
    await this.sql.run(TOUCH, [this.useTime(now), key])
    return { status: Number(row.status), contentType: row.contentType, body: row.body }
  }

  /** Stores one after another: each makes its room before it goes in, so the table never holds more than its bound. */
  put(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    if (bytesOf(answer) <= this.maxBytes) this.unwritten.set(key, answer)
    const p = this.writing.then(() => this.store(key, answer, ttlMs)).finally(() => {
      if (this.unwritten.get(key) === answer) this.unwritten.delete(key)
    })
    this.writing = p.catch(() => {})
    return p
  }

  /** Answers put and not yet written (their writes go one after another), by key. */
  private readonly unwritten = new Map<string, CachedAnswer>()

  private writing: Promise<void> = Promise.resolve()
  private lastUse = 0

  /** A use's time, after every earlier use of this instance: two uses in one millisecond keep their order for eviction. */
  private useTime(now: number): number {
    this.lastUse = Math.max(now, this.lastUse + 1)
    return this.lastUse
  }

  private async store(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const bytes = bytesOf(answer)
    if (bytes > this.maxBytes) return
    const replaced = Number((await this.sql.get<{ bytes: number | string }>(SIZE_OF, [key]))?.bytes ?? 0)
    this.total ??= (await this.stats()).bytes
    if (this.total - replaced + bytes > this.maxBytes) await this.evict(this.maxBytes - bytes + replaced, key)
    const now = Date.now()
    await this.sql.run(PUT, [key, answer.status, answer.contentType, answer.body, bytes, now, now + ttlMs, this.useTime(now)])
    this.total += bytes - replaced
  }

  /** Drops expired answers, then those used longest ago (never `keep`), until at most `target` bytes are held. */
  private async evict(target: number, keep: string): Promise<void> {
    await this.sql.run(DROP_EXPIRED, [Date.now()])
    // another instance on the same database may have stored or dropped some: count again
    let total = (await this.stats()).bytes
    while (total > target) {
      const oldest = await this.sql.all<{ key: string; bytes: number | string }>(OLDEST, [keep])
      if (oldest.length === 0) break
      for (const r of oldest) {
        if (total <= target) break
        await this.sql.run(DROP, [r.key])
        total -= Number(r.bytes)
      }
    }
    this.total = total
  }

  /** Empties the cache: after the writes put before it (else one queued behind others would go in after the clear). */
  clear(): Promise<number> {
    this.unwritten.clear()
    const p = this.writing.then(async () => {
      const n = await this.sql.run(CLEAR)
      this.total = 0
      return n
    })
    this.writing = p.then(
      () => {},
      () => {},
    )
    return p
  }

  async stats(): Promise<{ entries: number; bytes: number }> {
    const r = await this.sql.get<{ entries: number | string; bytes: number | string }>(TOTAL)
    return { entries: Number(r?.entries ?? 0), bytes: Number(r?.bytes ?? 0) }
  }
}
