// Numbers, money and times as the views show them.

/**
 * A string someone else chose (a model id, a key's name), set apart for the bidi algorithm
 * (FSI … PDI) where it shares a line of plain text with figures (a tooltip, an option): a
 * right-to-left override left open inside it ends with it, not after the count written next.
 * Where an element may stand, <bdi> does the same.
 */
export const isolated = (s: string) => `\u2068${s}\u2069`

const int = new Intl.NumberFormat('en-US')

export const num = (n: number | null | undefined) => (n === null || n === undefined ? '–' : int.format(n))

export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–'
  if (n === 0) return '$0'
  return n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`
}

export const ms = (n: number | null | undefined) => (n === null || n === undefined ? '–' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`)

export const pct = (x: number) => `${(x * 100).toFixed(x > 0 && x < 0.1 ? 1 : 0)} %`

/** Epoch seconds → local `YYYY-MM-DD HH:MM:SS`. */
export function time(sec: number | null | undefined): string {
  if (sec === null || sec === undefined) return '–'
  const d = new Date(sec * 1000)
  const p = (x: number) => String(x).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

export function duration(seconds: number | null): string {
  if (seconds === null) return '–'
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
}
