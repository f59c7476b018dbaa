// A number a JSON schema allows: its bounds (inclusive or exclusive, draft 4's boolean
// exclusives too), `multipleOf`, and `integer`. Deterministic; `variant` gives the next one.
type Schema = Record<string, unknown>
type Bound = { v: number; exclusive: boolean }

/** How many grid points are tried before the plain bound is given (bounds that leave none). */
const TRIES = 100

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

function bound(s: Schema, inclusive: string, exclusive: string): Bound | undefined {
  const inc = s[inclusive]
  const exc = s[exclusive]
  const a = num(inc) ? { v: inc, exclusive: exc === true } : undefined
  const b = num(exc) ? { v: exc, exclusive: true } : undefined
  if (a && b) return (inclusive === 'minimum' ? b.v >= a.v : b.v <= a.v) ? b : a
  return a ?? b
}

/** A decimal's float as printed (0.30000000000000004 → 0.3). */
const tidy = (x: number) => Number(x.toPrecision(15))

/**
 * The least value the bounds allow (0 when they allow it and give no lower bound; the greatest
 * when only an upper bound below 0 is given), on the multipleOf grid — a multiple whose quotient
 * is a whole number in floating point, so strict validators agree — or the whole numbers.
 */
export function numberFor(s: Schema, integer: boolean, variant: number): number {
  const lo = bound(s, 'minimum', 'exclusiveMinimum')
  const hi = bound(s, 'maximum', 'exclusiveMaximum')
  const step = num(s.multipleOf) && s.multipleOf > 0 ? s.multipleOf : undefined
  const unit = step ?? 1
  const fits = (x: number) =>
    (!lo || x > lo.v || (!lo.exclusive && x === lo.v)) &&
    (!hi || x < hi.v || (!hi.exclusive && x === hi.v)) &&
    (!integer || Number.isInteger(x)) &&
    (!step || Number.isInteger(x / step))
  const down = !lo && hi !== undefined && !fits(0)
  // on the grid of multiples (or of whole numbers); a plain number counts from its bound itself
  const grid = integer || step !== undefined
  const origin = grid ? 0 : lo ? lo.v : down ? hi!.v : 0
  const start = !grid ? 0 : lo ? Math.ceil(lo.v / unit) : down ? Math.floor(hi!.v / unit) : 0
  const at = (i: number) => tidy(origin + (down ? start - i : start + i) * unit)
  // the first grid point that fits, then the variant-th past it (or the next that fits)
  let first = -1
  for (let i = 0; i < TRIES && first < 0; i++) if (fits(at(i))) first = i
  if (first >= 0) {
    for (let i = first + variant; i < first + variant + TRIES; i++) if (fits(at(i))) return at(i)
    return at(first)
  }
  // no grid point between the bounds: a number between them (a plain number only)
  // (bounds near the ends of the doubles: their difference is Infinity, each share of it is not)
  if (!integer && !step && lo && hi) {
    const f = (variant + 1) / (variant + 2)
    const x = lo.v + (hi.v - lo.v) * f
    return Number.isFinite(x) ? x : lo.v * (1 - f) + hi.v * f
  }
  return lo?.v ?? hi?.v ?? 0
}
