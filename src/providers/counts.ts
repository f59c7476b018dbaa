// A token count as an upstream's usage gives it: a whole number, or a string of digits (a server of
// the wire that sends one so means that number; read as text, `+` would join them). Anything else
// (a negative, a fraction, a word) is none.
export function countOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined
  return typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : undefined
}
