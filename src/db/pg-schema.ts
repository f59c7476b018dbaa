// The metadata schema on PostgreSQL: the tables of tables.ts in PostgreSQL's types (epoch ms
// and byte counts need int8). drizzle-kit generates db/pg-migrations from this file
// (drizzle.pg.config.ts).
import { bigint, boolean, doublePrecision, index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { declareTables, type ColumnKit } from './tables.ts'

const pgKit = {
  table: pgTable,
  text,
  int: (name: string) => bigint(name, { mode: 'number' }),
  real: (name: string) => doublePrecision(name),
  bool: (name: string) => boolean(name),
  index,
  uniqueIndex,
  primaryKey,
}

// typed as the SQLite tables, as every store uses them (storage.ts): the shapes are the same
export const { apiKeys, files, generations, usageHourly, storedResponses, storedItems, containerGrants, conversations, conversationItems, batches, batchItems, batchIngests, creditReservations, responseCache, pruneMarks } = declareTables(pgKit as unknown as ColumnKit)
