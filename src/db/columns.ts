// SQL text built from the one table declaration (tables.ts), for the stores that write plain
// SQL through `storage.sql`: a column's SQL name, a select list that gives each column under
// its TypeScript name, and the column list of an INSERT. A renamed or removed column is then a
// compile error in every statement built here, as it is in drizzle's own queries.
import { getTableColumns, type Table } from 'drizzle-orm'

export type ColumnKey<T extends Table> = keyof T['_']['columns'] & string

/** The SQL name of one column: `col(generations, 'apiKeyId')` is `api_key_id`. */
export function col<T extends Table>(table: T, key: ColumnKey<T>): string {
  return getTableColumns(table)[key]!.name
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
