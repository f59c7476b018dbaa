// A table looked up by a string from outside (a client's body or query, an upstream's reply):
// only the table's own entries count. A plain object literal also answers "toString",
// "constructor" or "__proto__" from its prototype, a function where a row was expected.
export function own<T>(table: Readonly<Record<string, T>>, key: unknown): T | undefined {
  return typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined
}
