// The files table. Every read is scoped to the owning key, and expired files read as
// missing whether or not the pruner has removed them yet.
import { and, asc, desc, eq, gt, isNotNull, isNull, lt, lte, or, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
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

export class FilesRepo {
  constructor(private readonly db: Db) {}

  private live(now: number): SQL {
    return or(isNull(files.expiresAt), gt(files.expiresAt, now))!
  }

  insert(rec: FileRecord): void {
    this.db.insert(files).values(rec).run()
  }

  /** The owner's live file, or null (absent, another key's, or expired). */
  find(owner: string, id: string, now: number): FileRecord | null {
    return (
      this.db
        .select()
        .from(files)
        .where(and(eq(files.id, id), eq(files.apiKeyId, owner), this.live(now)))
        .get() ?? null
    )
  }

  /** A page of the owner's live files, one row past `limit` read to make `hasMore` exact. */
  scan(q: ScanQuery): ListPage {
    const past = q.direction === 'desc' ? lt : gt
    const conds: (SQL | undefined)[] = [eq(files.apiKeyId, q.owner), this.live(q.now)]
    if (q.purpose !== undefined) conds.push(eq(files.purpose, q.purpose))
    if (q.cursor) {
      const c = q.cursor
      conds.push(or(past(files.createdAt, c.createdAt), and(eq(files.createdAt, c.createdAt), past(files.id, c.id))))
    }
    const by = q.direction === 'desc' ? desc : asc
    const rows = this.db
      .select()
      .from(files)
      .where(and(...conds))
      .orderBy(by(files.createdAt), by(files.id))
      .limit(q.limit + 1)
      .all()
    return { data: rows.slice(0, q.limit), hasMore: rows.length > q.limit }
  }

  /** Removes the owner's record; the removed record, or null when there was none. */
  remove(owner: string, id: string): FileRecord | null {
    return this.db.delete(files).where(and(eq(files.id, id), eq(files.apiKeyId, owner))).returning().get() ?? null
  }

  /** Removes up to `limit` expired records and returns them. */
  takeExpired(now: number, limit: number): FileRecord[] {
    const due = this.db
      .select()
      .from(files)
      .where(and(isNotNull(files.expiresAt), lte(files.expiresAt, now)))
      .limit(limit)
      .all()
    for (const r of due) this.db.delete(files).where(eq(files.id, r.id)).run()
    return due
  }

  /** Every blob key a record points at (for the start-up sweep; one pass, no per-blob query). */
  blobKeys(): Set<string> {
    return new Set(this.db.select({ k: files.blobKey }).from(files).all().map((r) => r.k))
  }
}
