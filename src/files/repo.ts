// The files table. Every read is scoped to the owning key, and expired files read as
// missing whether or not the pruner has removed them yet.
import { and, asc, desc, eq, gt, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { Storage } from '../db/client.ts'
import type { Param } from '../db/sql.ts'
import { names } from '../db/columns.ts'
import { files } from '../db/schema.ts'
import type { FileRecord, ListPage } from './types.ts'

export interface ScanQuery {
  owner: string
  limit: number
  purpose?: string
  /** Files strictly past this one in the scan direction. */
  cursor?: { createdAt: number; id: string }
  direction: 'desc' | 'asc'
  now: number
}

/** Held to the end of the transaction; the schema's name keeps databases shared by several gateways' schemas apart. */
const OWNER_LOCK = "SELECT pg_advisory_xact_lock(hashtext('switchyard files ' || current_schema()), hashtext(?)) AS locked"
const f = names(files)
const USED = `SELECT coalesce(sum(${f.bytes}), 0) AS n FROM ${f.$table} WHERE ${f.apiKeyId} = ? AND (${f.expiresAt} IS NULL OR ${f.expiresAt} > ?)`

export class FilesRepo {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db
  }

  private live(now: number): SQL {
    const files = this.storage.t.files
    return or(isNull(files.expiresAt), gt(files.expiresAt, now))!
  }

  async insert(rec: FileRecord): Promise<void> {
    await this.db.insert(this.storage.t.files).values(rec)
  }

  /**
   * Stores the record only if the owner's live files still fit `quota` with it: the check and the
   * insert are one transaction (SQLite's one writer; on PostgreSQL under a lock on the owner, so
   * two uploads of one key are decided one after the other). A kill at any moment leaves no
   * record or one that fits. null when stored; otherwise the bytes the owner's files already take.
   */
  async insertWithin(rec: FileRecord, quota: number, now: number): Promise<number | null> {
    const insert = this.db.insert(this.storage.t.files).values(rec).toSQL()
    return this.storage.sql.tx(async (q) => {
      if (q.dialect === 'pg') await q.get(OWNER_LOCK, [rec.apiKeyId])
      const used = Number((await q.get<{ n: number | string }>(USED, [rec.apiKeyId, now]))!.n)
      if (used + rec.bytes > quota) return used
      await q.run(insert.sql, insert.params as Param[])
      return null
    })
  }

  /** The owner's live file, or null (absent, another key's, or expired). */
  async find(owner: string, id: string, now: number): Promise<FileRecord | null> {
    const files = this.storage.t.files
    const [r] = await this.db
      .select()
      .from(files)
      .where(and(eq(files.id, id), eq(files.apiKeyId, owner), this.live(now)))
      .limit(1)
    return r ?? null
  }

  /** A page of the owner's live files, one row past `limit` read to make `hasMore` exact. */
  async scan(q: ScanQuery): Promise<ListPage> {
    const files = this.storage.t.files
    const past = q.direction === 'desc' ? lt : gt
    const conds: (SQL | undefined)[] = [eq(files.apiKeyId, q.owner), this.live(q.now)]
    if (q.purpose !== undefined) conds.push(eq(files.purpose, q.purpose))
    if (q.cursor) {
      const c = q.cursor
      conds.push(or(past(files.createdAt, c.createdAt), and(eq(files.createdAt, c.createdAt), past(files.id, c.id))))
    }
    const by = q.direction === 'desc' ? desc : asc
    const rows = await this.db
      .select()
      .from(files)
      .where(and(...conds))
      .orderBy(by(files.createdAt), by(files.id))
      .limit(q.limit + 1)
    return { data: rows.slice(0, q.limit), hasMore: rows.length > q.limit }
  }

  /**
   * Removes the owner's live record; the removed record, or null when there was none. An
   * expired one reads as missing here too (the expiry sweep removes it with its bytes).
   */
  async remove(owner: string, id: string, now: number): Promise<FileRecord | null> {
    const files = this.storage.t.files
    const [r] = await this.db.delete(files).where(and(eq(files.id, id), eq(files.apiKeyId, owner), this.live(now))).returning()
    return r ?? null
  }

  /** The bytes of the owner's live files. */
  async usedBytes(owner: string, now: number): Promise<number> {
    const files = this.storage.t.files
    const [r] = await this.db
      .select({ n: sql<number | string | null>`sum(${files.bytes})` })
      .from(files)
      .where(and(eq(files.apiKeyId, owner), this.live(now)))
    return Number(r?.n ?? 0)
  }

  /** Removes up to `limit` expired records and returns them. */
  async takeExpired(now: number, limit: number): Promise<FileRecord[]> {
    const files = this.storage.t.files
    const due = await this.db
      .select()
      .from(files)
      .where(and(isNotNull(files.expiresAt), lte(files.expiresAt, now)))
      .limit(limit)
    // only what this instance removed is its to clean up (another may be pruning the same rows)
    const taken: FileRecord[] = []
    for (const r of due) if ((await this.db.delete(files).where(eq(files.id, r.id)).returning({ id: files.id })).length > 0) taken.push(r)
    return taken
  }

  /** Every blob key a record points at (for the start-up sweep; one pass, no per-blob query). */
  async blobKeys(): Promise<Set<string>> {
    const files = this.storage.t.files
    return new Set((await this.db.select({ k: files.blobKey }).from(files)).map((r) => r.k))
  }
}
