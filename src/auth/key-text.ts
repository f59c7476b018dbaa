// A key's name and account: text an operator reads back (the admin listing, the dashboard, the
// usage report's account filter): what the rules of lib/operator-text.ts let through (no control
// or invisible format character, no half of a surrogate pair).
import { HttpError } from '../http/errors.ts'
import { operatorTextFault as fault } from '../lib/operator-text.ts'

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
