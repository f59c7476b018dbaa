// Batch results waiting for a database that is away, kept on the local disk (the results writer's
// spool: the same kind of file, lock and replay as the records' spool, generations/spool.ts, in
// the data dir's `spool/batch-results/`). An item the upstream answered during the outage has its
// result, and the generation records of its attempts, only in the writer's memory: a kill -9
// there, or a stop before the database came back, would fail it as lost at the next start,
// though it ran and the upstream billed it. With the spool, the next start stores it (before the
// batches resume and fail what the dead process had in flight: results-replay.ts), billed then,
// once. Storing one twice stores nothing twice: an item that has a result keeps it, and its
// records are taken only with a result that was stored (results-writer.ts).
import { join } from 'node:path'
import type { Aside } from '../generations/spool-rows.ts'
import { Spool, type Parsed } from '../generations/spool.ts'
import type { Outcome } from './types.ts'
import type { GenerationRow } from '../generations/row.ts'

/** A result as spooled: the outcome, and when it was taken (the stored result's finish time). */
export interface SpooledResult extends Omit<Outcome, 'id'> {
  finishedAt: number
  /**
   * The records a write that may have committed stored with this result: its answer was lost
   * (the database went away at its COMMIT), so nothing but the database counted their costs. A
   * start that finds the result stored as this one counts them where that write could not
   * (Redis's running spend). Absent once a later write found them and counted them.
   */
  tried?: GenerationRow[]
}

export const resultsSpoolDir = (dataDir: string) => join(dataDir, 'spool', 'batch-results')

export const resultsSpool = (dataDir: string) => new Spool<SpooledResult>(resultsSpoolDir(dataDir), parseResults)

/** The spooled results, each item once (the last line of it: an append retried after a failure may repeat some). */
function parseResults(text: string): Parsed<SpooledResult> {
  const byItem = new Map<string, SpooledResult>()
  const aside: Aside[] = []
  let torn = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    let v: Partial<SpooledResult> | null
    try {
      v = JSON.parse(line)
    } catch {
      torn++
      continue
    }
    if (typeof v?.batchId !== 'string' || typeof v.idx !== 'number' || typeof v.key?.id !== 'string' || typeof v.finishedAt !== 'number' || !v.outcome || !Array.isArray(v.outcome.records)) {
      aside.push({ record: v, reason: 'no batch result: a value it needs is missing' })
      continue
    }
    // records that are not whole are not counted (their costs stay where they are)
    if (v.tried !== undefined && !triedRecords(v.tried)) delete v.tried
    byItem.set(`${v.batchId}\u0000${v.idx}`, v as SpooledResult)
  }
  return { rows: [...byItem.values()], aside, torn }
}

/** Records as a spool line gives them: each with its id, its key and its cost (a number, or null unpriced). */
function triedRecords(v: unknown): v is GenerationRow[] {
  return Array.isArray(v) && v.every((r) => typeof r?.id === 'string' && typeof r.apiKeyId === 'string' && (r.cost === null || (typeof r.cost === 'number' && Number.isFinite(r.cost))))
}
