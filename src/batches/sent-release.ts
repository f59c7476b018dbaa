// At a start (or when this process takes over the batches of a data dir's dead runner), before any
// claim of a dead process fails as lost: the items such a process claimed (marked) and, by its
// journal (sent-journal.ts), never handed on to be sent are given back, to run here once. Those
// its journal names keep their claims, and fail as lost as before: they may have reached the
// upstream. A process with no journal left, or one not trusted, is left as before too.
import type { Logger } from '../http/log.ts'
import type { Sql } from '../db/sql.ts'
import { names } from '../db/columns.ts'
import { batchItems } from '../db/schema.ts'
import { deadJournals } from './sent-journal.ts'

const item = names(batchItems)
const CLAIMED = `SELECT ${item.idx} AS idx FROM ${item.$table} WHERE ${item.batchId} = ? AND ${item.leaseOwner} = ? AND ${item.status} IS NULL`
/** Items given back a statement at a time (a batch's claims are as many as run at once). */
const CHUNK = 500

/** Gives back the never-sent claims of dead processes on `batchIds` (the open batches). → how many. */
export async function releaseNeverSent(sql: Sql, dataDir: string, batchIds: readonly string[], log: Logger): Promise<number> {
  let total = 0
  for (const dead of deadJournals(dataDir)) {
    if (dead.untrusted) {
      log.warn('batches: the journal of items sent of a gateway no longer running was written before the machine last started (or cannot be read whole): its claims fail as lost', { owner: dead.owner })
      dead.done()
      continue
    }
    let released = 0
    try {
      for (const id of batchIds) {
        const sent = dead.sent.get(id)
        const never = (await sql.all<{ idx: number | string }>(CLAIMED, [id, dead.owner])).map((r) => Number(r.idx)).filter((i) => !sent?.has(i))
        for (let at = 0; at < never.length; at += CHUNK) {
          const part = never.slice(at, at + CHUNK)
          released += await sql.run(
            `UPDATE ${item.$table} SET ${item.leaseOwner} = NULL, ${item.leaseUntil} = NULL
             WHERE ${item.batchId} = ? AND ${item.leaseOwner} = ? AND ${item.status} IS NULL AND ${item.idx} IN (${part.map(() => '?').join(', ')})`,
            [id, dead.owner, ...part],
          )
        }
      }
    } catch (e) {
      dead.leave()
      throw e
    }
    dead.done()
    total += released
    if (released > 0) log.info('batches: items a gateway no longer running had handed out and never sent given back, to run here', { items: released })
  }
  return total
}
