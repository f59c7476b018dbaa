// The one async SQL seam every store writes against, whatever the database: statements in
// portable SQL with `?` placeholders, rows as plain objects (camelCase columns are quoted
// aliases: PostgreSQL folds bare names to lower case). SQLite runs them on bun:sqlite (its
// promises are already settled), PostgreSQL on Bun.SQL.
export type Dialect = 'sqlite' | 'pg'

export type Param = string | number | boolean | null | Uint8Array

/** Part of a statement with its `?` parameters, in the order they appear: one CTE of a write sent whole. */
export interface Piece {
  text: string
  params: Param[]
}

export interface Sql {
  readonly dialect: Dialect
  all<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T[]>
  get<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T | null>
  /** Runs a write; how many rows it changed. */
  run(text: string, params?: readonly Param[]): Promise<number>
  /**
   * Runs `fn` in one transaction on one connection: every statement of `fn` commits or none
   * does. `fn` should only wait on its own statements (SQLite holds its write lock meanwhile).
   * `committed` runs once it has committed, at once on SQLite (before anything else reads the
   * connection); inside another transaction, as its part ends (the outer one decides).
   */
  tx<T>(fn: (q: Sql) => Promise<T>, committed?: (out: T) => void): Promise<T>
  /**
   * SQLite only: runs a synchronous `fn` between transactions, in turn with them (after those
   * begun or queued, before any queued later), so that what it reads is neither a write still
   * open on the one connection nor a commit whose `committed` has not run yet.
   */
  between?<T>(fn: () => T): Promise<T>
}

/**
 * The few spellings the two dialects do not share. `rowid` is SQLite's physical row id (in
 * insertion order) and PostgreSQL's `ctid`, good for "delete some of these" but not for order.
 * `insertSkipping` and `skipConflicts` frame an INSERT whose rows with a stored key are skipped:
 * on SQLite `OR IGNORE`, which cannot abort, so a statement of many rows keeps no statement
 * journal (ON CONFLICT DO NOTHING leaves a NOT NULL able to abort it halfway, and SQLite then
 * journals every page it changes, spilling to a temporary file past 64 KiB). OR IGNORE skips a
 * row that breaks any constraint, so the caller checks what it skipped. `skipLocked` ends a
 * subquery's SELECT of rows to change that another transaction is changing now: PostgreSQL's
 * row locks (waiting on one while holding others can close a ring with that transaction);
 * SQLite has one writer at a time, nothing to skip.
 */
export const DIALECT = {
  sqlite: { rowid: 'rowid', total: 'total', insertSkipping: 'INSERT OR IGNORE INTO', skipConflicts: '', skipLocked: '' },
  pg: { rowid: 'ctid', total: 'sum', insertSkipping: 'INSERT INTO', skipConflicts: 'ON CONFLICT DO NOTHING', skipLocked: ' FOR UPDATE SKIP LOCKED' },
} as const

/**
 * A multi-row INSERT's rows in parts of a few fixed sizes, largest first. Each row count is a
 * statement of its own in the database's cache (SQLite keeps each one compiled): parts of any
 * size up to 100 held about 45 MiB more of the gateway's peak RSS under load than these four.
 * 100 rows of up to 24 columns stay far below PostgreSQL's 65,535 parameters.
 */
export function* rowParts<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; ) {
    const n = PART_SIZES.find((size) => size <= rows.length - i)!
    yield rows.slice(i, (i += n))
  }
}
const PART_SIZES = [100, 20, 5, 1]
