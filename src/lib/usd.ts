// A dollar amount as a person reads it in an error: plain decimals however small or large
// (a grant of $0.0000001 printed as `$1e-7` reads as nonsense), at most ten places, no zeros
// trailing. Amounts here are credits and spend, finite by the time they are shown.
const PLAIN = new Intl.NumberFormat('en-US', { useGrouping: false, maximumFractionDigits: 10 })

export function usd(n: number): string {
  return `$${Number.isFinite(n) ? PLAIN.format(n) : String(n)}`
}
