// JSON a client hides in a string of its body (a tool call's arguments, the gateway's sealed
// reasoning sent back): the body's checks (json-safe.ts) see the string as text, and what is in
// it is parsed on the request thread when it is used, so it is parsed here under the same rules.
import { checkJsonValue, MAX_BODY_NODES, MAX_BODY_VALUES } from './json-safe.ts'
import { jsonPartsOf, partsOf, type PartBounds } from './parts.ts'

/** What the JSON a client hides in strings of one request may hold in all: what a body may. */
export const hiddenBounds = (): PartBounds => ({ nodes: MAX_BODY_NODES, values: MAX_BODY_VALUES })

/**
 * JSON hidden in a string, parsed under the body's rules: its objects, arrays and entries counted
 * (at memchr speed) and taken from `left`, what the request's hidden JSON may still hold, before
 * any parse ('crowded' past it); then its depth and keys checked as a body's ('broken', with the
 * place, is JSON that breaks one; 'malformed' is not JSON).
 */
export function parseHidden(text: string, left: PartBounds): { value: unknown } | { crowded: true } | { broken: string } | { malformed: true } {
  // the quick count holds what strings hold too: past the bounds, what stands outside them is counted
  let n = partsOf(text, left)
  if (n === true) n = jsonPartsOf(text, left)
  if (n === true) return { crowded: true }
  left.nodes -= n.nodes
  left.values -= n.values
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { malformed: true }
  }
  try {
    checkJsonValue(value, text)
  } catch (e) {
    return { broken: (e as Error).message }
  }
  return { value }
}

/** What crowded hidden JSON holds, for its place's 400 ("… hold(s) " + this). */
export const crowdedHidden = `more than ${MAX_BODY_NODES} JSON objects and arrays, or ${MAX_BODY_VALUES} keys and array items`
