// The Sql seam on bun:sqlite: statements prepared once and cached by text. Every call runs at
// once (SQLite is in-process); the promise only makes it look like the PostgreSQL one.
import type { Database, Statement } from 'bun:sqlite'
import type { Param, Sql } from './sql.ts'

export class SqliteSql implements Sql {
  readonly dialect = 'sqlite' as const
  private stmts = new Map<string, Statement>()
  /** Transactions run one after another: SQLite has one connection and nests none. */
  private chain: Promise<unknown> = Promise.resolve()
  /** What a transaction's body runs on: the same connection, and a transaction in it is part of it. */
  private readonly inner: Sql

  constructor(readonly sqlite: Database) {
    const inner: Sql = {
      dialect: 'sqlite',
      all: async (t, p) => this.watched(() => this.allSync(t, this.stillIn(p))),
      get: async (t, p) => this.watched(() => this.getSync(t, this.stillIn(p))),
      run: async (t, p) => this.watched(() => this.runSync(t, this.stillIn(p))),
      tx: async (fn, committed) => {
        const out = await fn(inner)
        committed?.(out)
        return out
      },
    }
    this.inner = inner
  }

  private stmt(text: string): Statement {
    let s = this.stmts.get(text)
    if (!s) {
      if (this.stmts.size > 500) this.stmts.clear()
      this.stmts.set(text, (s = this.sqlite.prepare(text)))
    }
    return s
  }

  /**
   * A transaction's statement runs only inside it. SQLite ends a transaction itself on some
   * failures (a full disk, an I/O error: the whole transaction is rolled back), and a statement
   * sent after one without waiting for it (PostgreSQL's pipelining, below the same seam) would
   * then commit on its own. Refused instead, as PostgreSQL refuses them in a failed transaction.
   */
  private stillIn<P>(params: P): P {
    if (!this.sqlite.inTransaction) throw this.rolledBack()
    return params
  }

  /**
   * The failure that ended the transaction in progress. Statements of one transaction are sent
   * together (Promise.all), and which refusal reaches the caller first is not up to the one that
   * failed: every later refusal carries it as its cause, so a full disk reads as one (and is
   * waited for) whichever statement the caller sees.
   */
  private endedBy: unknown

  private rolledBack(): Error {
    return new Error('the transaction was rolled back by an earlier failure; this statement was not run', { cause: this.endedBy })
  }

  private watched<T>(run: () => T): T {
    try {
      return run()
    } catch (e) {
      if (this.endedBy === undefined && !this.sqlite.inTransaction) this.endedBy = e
      throw e
    }
  }

  allSync<T>(text: string, params: readonly Param[] = []): T[] {
    return this.stmt(text).all(...(params as Param[])) as T[]
  }

  getSync<T>(text: string, params: readonly Param[] = []): T | null {
    return (this.stmt(text).get(...(params as Param[])) as T | null) ?? null
  }

  runSync(text: string, params: readonly Param[] = []): number {
    return this.stmt(text).run(...(params as Param[])).changes
  }

  async all<T>(text: string, params?: readonly Param[]): Promise<T[]> {
    return this.allSync<T>(text, params)
  }

  async get<T>(text: string, params?: readonly Param[]): Promise<T | null> {
    return this.getSync<T>(text, params)
  }

  async run(text: string, params?: readonly Param[]): Promise<number> {
    return this.runSync(text, params)
  }

  tx<T>(fn: (q: Sql) => Promise<T>, committed?: (out: T) => void): Promise<T> {
    return this.inTurn(async () => {
      this.sqlite.exec('BEGIN IMMEDIATE')
      this.endedBy = undefined
      let out: T
      try {
        out = await fn(this.inner)
        // a body that let a failure pass has nothing left to commit: said as the failure it was
        if (!this.sqlite.inTransaction) throw this.rolledBack()
        this.sqlite.exec('COMMIT')
      } catch (e) {
        if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK')
        throw e
      }
      committed?.(out)
      return out
    })
  }

  between<T>(fn: () => T): Promise<T> {
    return this.inTurn(async () => fn())
  }

  private inTurn<T>(step: () => Promise<T>): Promise<T> {
    const run = this.chain.then(step)
    this.chain = run.catch(() => {})
    return run
  }
}
