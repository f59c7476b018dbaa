// SQL text built from the one table declaration (tables.ts), for the stores that write plain
// SQL through `storage.sql`: a table's SQL names, a select list that gives each column under
// its TypeScript name, and the column list of an INSERT. Every statement names its tables and
// columns through these, so a renamed or removed column is a compile error in each of them, as
// it is in drizzle's own queries.
import { getTableColumns, getTableName, type Table } from 'drizzle-orm'

export type ColumnKey<T extends Table> = keyof T['_']['columns'] & string

/** A table's SQL names: each column's under its TypeScript key, and the table's own as `$table`. */
export type Names<T extends Table> = { readonly [K in ColumnKey<T>]: string } & { readonly $table: string }

/**
 * `names(generations)`: `.apiKeyId` is `api_key_id`, `.$table` is `generations`. Made once per
 * module, at load, and read in statements as `${g.apiKeyId} = ?`. A column read back by its
 * TypeScript name is selected through `selectList`, which keeps the quoted alias.
 */
export function names<T extends Table>(table: T): Names<T> {
  const out: Record<string, string> = { $table: getTableName(table) }
  for (const [key, column] of Object.entries(getTableColumns(table))) out[key] = column.name
  return Object.freeze(out) as Names<T>
}

/** Columns (all of the table's, or those named) as a select list, each under its TypeScript name; `prefix` qualifies them (`b.`). */
export function selectList<T extends Table>(table: T, keys?: readonly ColumnKey<T>[], prefix = ''): string {
  const all = getTableColumns(table)
  return (keys ?? (Object.keys(all) as ColumnKey<T>[])).map((k) => (all[k]!.name === k ? prefix + k : `${prefix}${all[k]!.name} AS "${k}"`)).join(', ')
}

/** Every column of the table in declaration order: the INSERT's column list, and the keys to take each row's values by. */
export function insertList<T extends Table>(table: T): { sql: string; keys: ColumnKey<T>[] } {
  const all = getTableColumns(table)
  const keys = Object.keys(all) as ColumnKey<T>[]
  return { sql: keys.map((k) => all[k]!.name).join(', '), keys }
}

/**
 * PostgreSQL: `json_to_recordset(?::text::json) AS v("key" type, …)`, the rows of a JSON array
 * of objects keyed by the columns' TypeScript names, typed as the table's columns: many rows as
 * one parameter (given as text: Bun.SQL would encode a string sent as `json` again). `table`
 * must be the PostgreSQL declaration (db/pg-schema.ts), whose types these are.
 */
export function jsonRows<T extends Table>(table: T, keys: readonly ColumnKey<T>[]): string {
  const all = getTableColumns(table)
  return `json_to_recordset(?::text::json) AS v(${keys.map((k) => `"${k}" ${all[k]!.getSQLType()}`).join(', ')})`
}
