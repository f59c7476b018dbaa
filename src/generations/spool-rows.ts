// A spool's line made a record again. A line is a record's columns under their TypeScript names
// (JSON); a gateway of an older version wrote none for a column added since, so a column a line
// lacks takes what a fresh record has there: the column's declared default, or null. Taken from
// the table's declaration, a column added later is covered as soon as it is declared, with no
// version to keep in step (a removed column's value is ignored: the insert names only today's).
// A line without a value a record cannot be stored without (its id, key, model, time…) is no
// record: the reason says which, and the replay keeps it aside rather than dropping it.
import { getTableColumns } from 'drizzle-orm'
import { generations } from '../db/schema.ts'
import type { GenerationRow } from './row.ts'

const FILLS = Object.entries(getTableColumns(generations)).map(([key, c]) => {
  // a default computed by the database (an SQL expression) has no value here: the line must have it
  const known = c.hasDefault && (c.default === null || typeof c.default !== 'object')
  return { key, notNull: c.notNull, required: c.notNull && !known, fill: known ? c.default : null }
})

/** A record kept aside, not stored: what the line held, and why. */
export interface Aside {
  record: unknown
  reason: string
}

/** The record of a parsed line, each column missing from it filled as a fresh record has it; or why it is none. */
export function spooledRow(line: Record<string, unknown>): { row: GenerationRow } | { aside: Aside } {
  const row: Record<string, unknown> = { ...line }
  const missing: string[] = []
  for (const { key, notNull, required, fill } of FILLS) {
    // null is a value where the column takes it
    if (row[key] !== undefined && (row[key] !== null || !notNull)) continue
    if (required) missing.push(key)
    else row[key] = fill
  }
  if (missing.length > 0) return { aside: { reason: `no value for ${missing.join(', ')}, which a record cannot be stored without`, record: line } }
  return { row: row as GenerationRow }
}
