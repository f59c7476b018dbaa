// The code-execution containers each key was given (container_grants). A container lives in
// the operator's upstream account, which every key shares, and holds the files and the state of
// the key whose request made it: a request may name one by id only when a reply handed it to
// the same key and it has not expired (check.ts). A reply that hands one is rare, so a grant
// costs nothing on the request's path: it goes into a pending map that `given` reads first,
// written in one statement a turn later (as the thread store writes its rows). Another instance
// on the shared database may write a grant a few ms after its client has the id: a miss is read
// again a few times there.
import { names } from '../db/columns.ts'
import { containerGrants } from '../db/schema.ts'
import type { Sql } from '../db/sql.ts'
import type { PruneStep } from '../lib/prune-steps.ts'
import { SoonWrite } from '../db/soon-write.ts'

/** Where a reply says no expiry (OpenAI's code interpreter), the grant's own: past any idle expiry an upstream gives one it made. */
export const DEFAULT_GRANT_MS = 24 * 3_600_000

/** A grant another instance has not written yet: read again this often, this long apart. */
const SHARED_MISS_RETRIES = 4
const SHARED_MISS_WAIT_MS = 25
/** Grants written by one statement at most, and ids asked about in one query. */
const PER_STATEMENT = 300

const c = names(containerGrants)
const marks = (n: number) => Array(n).fill('?').join(', ')
// a grant given again keeps the later of its expiries
const upsert = (n: number) =>
  `INSERT INTO ${c.$table} (${c.apiKeyId}, ${c.containerId}, ${c.expiresAt}) VALUES ${Array(n).fill('(?, ?, ?)').join(', ')} ` +
  `ON CONFLICT (${c.apiKeyId}, ${c.containerId}) DO UPDATE SET ${c.expiresAt} = CASE WHEN excluded.${c.expiresAt} > ${c.$table}.${c.expiresAt} THEN excluded.${c.expiresAt} ELSE ${c.$table}.${c.expiresAt} END`
const givenAmong = (n: number) => `SELECT ${c.containerId} AS "containerId" FROM ${c.$table} WHERE ${c.apiKeyId} = ? AND ${c.expiresAt} > ? AND ${c.containerId} IN (${marks(n)})`
const EXPIRED = `SELECT ${c.apiKeyId} AS "apiKeyId", ${c.containerId} AS "containerId" FROM ${c.$table} WHERE ${c.expiresAt} < ? LIMIT ?`
const deleteExpired = (n: number) => `DELETE FROM ${c.$table} WHERE ${c.expiresAt} < ? AND (${c.apiKeyId}, ${c.containerId}) IN (VALUES ${Array(n).fill('(?, ?)').join(', ')})`

interface Grant {
  apiKeyId: string
  containerId: string
  expiresAt: number
}

export class ContainerGrants {
  private pending = new Map<string, Grant>()
  /**
   * Pending grants not written before a read of whether the key had the container ends (`grant`'s
   * `after`): written first, the grant would be read as the key's already (on PostgreSQL the read
   * and the write go on different connections of the pool, in no set order).
   */
  private readonly held = new Map<string, Promise<unknown>>()
  private readonly writes = new SoonWrite(() => this.write())

  constructor(private readonly sql: Sql) {}

  /**
   * A reply handed `containerId` to the key, good until `expiresAt` (epoch ms; undefined: the
   * default bound). Readable here at once; `after`: not written before it settles.
   */
  grant(apiKeyId: string, containerId: string, expiresAt = Date.now() + DEFAULT_GRANT_MS, after?: Promise<unknown>): void {
    if (containerId === '' || !Number.isFinite(expiresAt)) return
    const key = `${apiKeyId}\0${containerId}`
    if (after) {
      this.held.set(key, after)
      const go = () => {
        if (this.held.get(key) === after) this.held.delete(key)
        this.writes.ask()
      }
      after.then(go, go)
    }
    const was = this.pending.get(key)
    if (was && was.expiresAt >= expiresAt) return
    this.pending.set(key, { apiKeyId, containerId, expiresAt })
    this.writes.ask()
  }

  /** Writes every pending grant (those held, once their reads end); a failed write keeps them pending (and readable) and is tried again. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.held.values()])
    return this.writes.flush()
  }

  private async write(): Promise<boolean> {
    const rows = [...this.pending.entries()].filter(([key]) => !this.held.has(key))
    if (rows.length === 0) return true
    try {
      await this.sql.tx(async (q) => {
        for (let at = 0; at < rows.length; at += PER_STATEMENT) {
          const chunk = rows.slice(at, at + PER_STATEMENT).map(([, g]) => [g.apiKeyId, g.containerId, g.expiresAt])
          await q.run(upsert(chunk.length), chunk.flat())
        }
      })
    } catch {
      return false
    }
    // one given again meanwhile (a later expiry) stays for the next write
    for (const [key, g] of rows) if (this.pending.get(key) === g) this.pending.delete(key)
    return true
  }

  /**
   * Which of `ids` the key was given and are not expired. `once`: read once, with no second look
   * for another instance's grant still being written (asked as a reply hands a container, whose
   * own grant, written a moment later, must not be taken for an earlier one).
   */
  async given(apiKeyId: string, ids: readonly string[], now = Date.now(), once = false): Promise<Set<string>> {
    const out = new Set<string>()
    for (const id of ids) if ((this.pending.get(`${apiKeyId}\0${id}`)?.expiresAt ?? 0) > now) out.add(id)
    for (let round = 0; round <= SHARED_MISS_RETRIES; round++) {
      const rest = [...new Set(ids)].filter((id) => !out.has(id))
      if (rest.length === 0 || (round > 0 && (once || this.sql.dialect !== 'pg'))) break
      if (round > 0) await Bun.sleep(SHARED_MISS_WAIT_MS)
      for (let at = 0; at < rest.length; at += PER_STATEMENT) {
        const chunk = rest.slice(at, at + PER_STATEMENT)
        for (const r of await this.sql.all<{ containerId: string }>(givenAmong(chunk.length), [apiKeyId, now, ...chunk])) out.add(r.containerId)
      }
    }
    return out
  }

  /** One step of the retention: up to `limit` grants expired before `before` deleted. */
  async pruneSome(before: number, limit: number): Promise<PruneStep> {
    const rows = await this.sql.all<{ apiKeyId: string; containerId: string }>(EXPIRED, [before, limit])
    if (rows.length === 0) return { deleted: 0, more: false }
    const deleted = await this.sql.run(deleteExpired(rows.length), [before, ...rows.flatMap((r) => [r.apiKeyId, r.containerId])])
    return { deleted, more: rows.length === limit }
  }
}
