// A reply's own words for how it was served (`Usage.served`): kept for its record, so a user sees
// why a record cost what it did. What prices a reply are the priced fields beside it
// (config/service-tiers.ts, config/claude-premiums.ts); these only say.
import type { Served, Usage } from './types.ts'

/** A word an upstream may say (`default`, `flex`, `fast`, `us`…): anything else is not kept, nor stored. */
const WORD = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/

export function servedWord(v: unknown): string | undefined {
  return typeof v === 'string' && WORD.test(v) ? v : undefined
}

/**
 * `u` with what a reply said of one way it was served: a word kept, anything else (null, a
 * number) taken as saying none. Never changes `u.served` in place: usages share it.
 */
export function saidServed(u: Usage, key: keyof Served, v: unknown): Usage {
  const word = servedWord(v)
  if (word === u.served?.[key]) return u
  const served: Served = { ...u.served }
  if (word === undefined) delete served[key]
  else served[key] = word
  const { served: _, ...rest } = u
  return Object.keys(served).length === 0 ? rest : { ...rest, served }
}
