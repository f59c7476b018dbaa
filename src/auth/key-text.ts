// A key's name and account: text an operator reads back (the admin listing, the dashboard, the
// usage report's account filter). Neither may hold a control character (NUL included: PostgreSQL's
// text cannot, and its insert failed) or half of a surrogate pair (PostgreSQL stored it as U+FFFD,
// so the account read back was not the one the key was made with).
import { HttpError } from '../http/errors.ts'
import { CONTROL, wellFormed } from '../files/upload-params.ts'

/** What is wrong with `v` as a key's text, or undefined. */
function fault(v: string): string | undefined {
  if (v.includes('\0')) return 'holds a NUL character (\\u0000), which no stored text may'
  if (CONTROL.test(v)) return 'must not contain control characters (tabs, line breaks, escapes)'
  if (!wellFormed(v)) return 'holds half of a surrogate pair (a \\ud800–\\udfff escape alone), which is no character'
  return undefined
}

/** The most characters a key's name or account may have (the admin routes' schema says the same). */
export const KEY_TEXT_MAX = 200

/** What is wrong with the first of `name` and `account` (when given) that is not plain text, named; or undefined. */
export function keyTextFault(body: { name?: string; account?: string }): string | undefined {
  for (const field of ['name', 'account'] as const) {
    const v = body[field]
    const f = v === undefined ? undefined : fault(v)
    if (f) return `${field}: ${f}`
  }
  return undefined
}

/** Throws the 400 naming the first of `name` and `account` (when given) that is not plain text. */
export function checkKeyText(body: { name?: string; account?: string }): void {
  const f = keyTextFault(body)
  if (f) throw new HttpError(400, f)
}
