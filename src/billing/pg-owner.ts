// Whose holds are whose, among instances sharing PostgreSQL. Each running gateway takes a number
// of its own and holds a session advisory lock on it, on a connection kept for that alone; its
// holds' ids carry the number (pg-ledger.ts). PostgreSQL drops the lock when that session ends:
// a process killed outright closes its socket, and its lock is gone at once. So a number whose
// lock any other session can take belongs to no live gateway, and its holds are those of
// requests that died with their process: any instance may delete them. A live gateway's lock
// cannot be taken, so no instance ever deletes a live one's holds. A gateway whose death
// PostgreSQL has not noticed (a host gone without closing its sockets) keeps its lock until
// its session times out; its holds lapse meanwhile, as any hold nobody renews.
// A lock is also free a moment while a live gateway's session was cut (its backend terminated,
// PostgreSQL restarted, a proxy dropped it): the gateway takes it again within a second
// (PgLedger checks it every second), and a sweeper deletes an owner's holds only once it has
// seen the lock free for a few seconds (pg-ledger.ts), so a live gateway's holds stay.
import type { ReservedSQL, SQL } from 'bun'

/** The advisory locks' first key: the second is the owner's number. Apart from the one-key locks (migrations). */
export const OWNER_LOCKS = 0x5359_4844 // "SYHD"
/** Numbers are 1..999,999,999: nine digits, a PostgreSQL integer. */
const MAX_OWNER = 999_999_999

export class PgOwner {
  private constructor(
    private readonly client: SQL,
    private conn: ReservedSQL | undefined,
    readonly id: number,
    private readonly closeClient: boolean,
  ) {}

  /**
   * A number no live gateway holds, locked for as long as this process keeps its session.
   * `closeClient`: the client is the lock's alone (a connection apart from the pool the requests
   * use), closed with it.
   */
  static async take(client: SQL, closeClient = false): Promise<PgOwner> {
    const conn = await client.reserve()
    try {
      for (let tries = 0; tries < 20; tries++) {
        const id = 1 + Math.floor(Math.random() * MAX_OWNER)
        if (await locked(conn, id)) return new PgOwner(client, conn, id, closeClient)
      }
    } catch (e) {
      void conn.close().catch(() => {})
      throw e
    }
    void conn.close().catch(() => {})
    throw new Error('no free owner number for credit holds after 20 tries')
  }

  /**
   * Whether the lock is still this process's. False when its session was lost and the lock was
   * taken again on a new one: meanwhile another instance may have deleted this one's holds, which
   * the caller then writes again. Throws when the database cannot be reached (tried again later).
   */
  async keep(): Promise<boolean> {
    if (this.conn) {
      try {
        const [row] = (await this.conn.unsafe(HELD, [this.id])) as { held: boolean }[]
        if (row?.held) return true
        // the session is not the one that took it (the connection was made again): take it again
        if (await locked(this.conn, this.id)) return false
      } catch {
        // the connection is gone: a new one below
      }
      this.drop()
    }
    const conn = await this.client.reserve()
    if (!(await locked(conn, this.id).catch(() => false))) {
      // held elsewhere (a sweep this moment, or a new gateway took the number): tried again later
      void conn.close().catch(() => {})
      throw new Error('credit holds owner lock held elsewhere')
    }
    this.conn = conn
    return false
  }

  /** Stop: the lock goes with its session. */
  close(): void {
    this.drop()
    if (this.closeClient) void this.client.close({ timeout: 1 }).catch(() => {})
  }

  private drop() {
    const conn = this.conn
    this.conn = undefined
    // closed, not given back to the pool, where the lock would stay with it
    conn?.close().catch(() => {})
  }
}

/** Whether this session holds the owner lock ($1: the number). */
const HELD = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = ${OWNER_LOCKS} AND objid = $1 AND objsubid = 2 AND granted) AS held`

async function locked(conn: ReservedSQL, id: number): Promise<boolean> {
  const [row] = (await conn.unsafe(`SELECT pg_try_advisory_lock(${OWNER_LOCKS}, ${id}) AS ok`)) as { ok: boolean }[]
  return row?.ok === true
}
