// A dollar amount as a person reads it in an error: plain decimals however small or large
// (a grant of $0.0000001 printed as `$1e-7` reads as nonsense), at most ten places, no zeros
// trailing. Amounts here are credits and spend, finite by the time they are shown.
const PLAIN = new Intl.NumberFormat('en-US', { useGrouping: false, maximumFractionDigits: 10 })

export function usd(n: number): string {
  return `$${Number.isFinite(n) ? PLAIN.format(n) : String(n)}`
}

/**
 * Money sums (a key's credits and spent) are kept to this many decimal places of a dollar, in
 * the statement that adds (SQLite, PostgreSQL, Redis) and wherever one is shown: a double's sum
 * of 1.001 and 0.005 is 1.0059999999999998, and each grant or charge added such noise. 1e-10 USD
 * is far finer than any price a request is charged at (a token at $0.01 per million is 1e-8).
 */
export const USD_PLACES = 10

/** `n` to USD_PLACES places (the nearest double to that decimal: 1.0059999999999998 → 1.006). */
export function roundUsd(n: number): number {
  return Number.isFinite(n) ? Number(n.toFixed(USD_PLACES)) : n
}

/**
 * An SQL expression of USD rounded as roundUsd rounds. PostgreSQL's round takes a numeric, and a
 * double cast straight to numeric keeps 15 significant digits only (123456.78901234567 lost its
 * last places): through its text, which is the shortest exact form, it keeps them all.
 */
export const ROUND_USD_SQL = {
  sqlite: ['round(', `, ${USD_PLACES})`],
  pg: ['round((', `)::text::numeric, ${USD_PLACES})::float8`],
} as const

/** The SQL expression `e` rounded as roundUsd rounds, in `dialect`. */
export function roundUsdSql(dialect: keyof typeof ROUND_USD_SQL, e: string): string {
  const [before, after] = ROUND_USD_SQL[dialect]
  return before + e + after
}

/** Lua (Redis): `v`, a number, as the text of it rounded as roundUsd rounds. */
export const ROUND_USD_LUA = `string.format('%.${USD_PLACES}f', v)`
