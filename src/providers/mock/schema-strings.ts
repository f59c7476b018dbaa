// A string a JSON schema allows: its format's example, else its pattern's (pattern.ts), else
// "example"; fitted to minLength / maxLength. `variant` gives another string (distinct items).
import { patternExample } from './pattern.ts'

type Schema = Record<string, unknown>

/** The most characters a string is padded to: past it, minLength is not met. */
export const MAX_PAD = 1_000

const DAY = 86_400_000
const iso = (k: number) => new Date(Date.UTC(2025, 0, 1) + k * 1000).toISOString().replace('.000', '')
const hex = (k: number, n: number) => (k % 16 ** Math.min(n, 12)).toString(16).padStart(n, '0')

/** Each format's example, the k-th of them for variant k. */
const FORMATS: Record<string, (k: number) => string> = {
  'date-time': (k) => iso(k),
  date: (k) => new Date(Date.UTC(2025, 0, 1) + k * DAY).toISOString().slice(0, 10),
  time: (k) => `${iso(k).slice(11)}`,
  duration: (k) => `P${k + 1}D`,
  email: (k) => (k ? `user${k}@example.com` : 'user@example.com'),
  'idn-email': (k) => (k ? `user${k}@example.com` : 'user@example.com'),
  uri: (k) => (k ? `https://example.com/${k}` : 'https://example.com'),
  url: (k) => (k ? `https://example.com/${k}` : 'https://example.com'),
  'uri-reference': (k) => `/example/${k}`,
  uuid: (k) => `00000000-0000-4000-8000-${hex(k, 12)}`,
  ipv4: (k) => `192.0.2.${k % 256}`,
  ipv6: (k) => `2001:db8::${hex(k, 4)}`,
  hostname: (k) => (k ? `example${k}.com` : 'example.com'),
  'idn-hostname': (k) => (k ? `example${k}.com` : 'example.com'),
  byte: (k) => btoa(`example${k || ''}`),
  base64: (k) => btoa(`example${k || ''}`),
  cuid: (k) => `cexample${hex(k, 8)}`,
}

/** What is left of the characters one example's strings may hold (schema-args.ts). */
export interface Chars {
  chars: number
}

const int = (v: unknown, dflt: number) => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.floor(v)) : dflt)

/**
 * A known format's example, as given (validators check the format; a pattern beside it is the
 * format's own, which its example meets). Else the pattern's example when the pattern is within
 * the subset pattern.ts follows; else "example" — padded with `x` to minLength, cut to maxLength,
 * a variant's number at its end.
 */
export function stringFor(s: Schema, variant: number, budget: Chars = { chars: Infinity }): string {
  const long = budget.chars > 0
  const out = fitted(s, variant, long)
  // a pattern is read whole (one of many patterns is read again at each use)
  budget.chars -= out.length + (long && typeof s.pattern === 'string' ? s.pattern.length : 0)
  return out
}

/**
 * The string; `long`: a pattern's and padding are made (once an example's strings hold all the
 * characters it may, each is the plain example: a pattern is read, and its string built, a
 * character at a time, and 10,000 items of `a{3999}` took seconds and 40 MB).
 */
function fitted(s: Schema, variant: number, long: boolean): string {
  const min = long ? Math.min(int(s.minLength, 0), MAX_PAD) : 0
  const max = int(s.maxLength, Infinity)
  if (typeof s.format === 'string' && Object.hasOwn(FORMATS, s.format)) return FORMATS[s.format]!(variant)
  if (typeof s.pattern === 'string' && long) {
    const p = patternExample(s.pattern, min, max, variant)
    if (p !== undefined) return p
  }
  const tag = variant ? String(variant) : ''
  let out = 'example' + tag
  if (out.length < min) out = out.slice(0, out.length - tag.length) + 'x'.repeat(min - out.length) + tag
  if (out.length > max) out = tag.length <= max ? out.slice(0, max - tag.length) + tag : out.slice(0, max)
  return out
}
