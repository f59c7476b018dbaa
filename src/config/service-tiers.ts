// OpenAI's processing tiers priced apart from its standard rates: what a request served at
// one costs, as a factor of the standard price of its tokens. The price library knows only the
// standard rates; the reply says which tier served it (`service_tier`), and a request that asks
// for `priority` is held at priority's price.
//
// Flex is billed at Batch API rates, half the standard price, for every model that offers it.
// Priority was renamed Fast mode on 30 July 2026 (openai.com/api-fast-mode): a request may ask
// for `fast` or `priority`, and the reply says `priority` either way.
// Priority's premium differs by model, and is the same for input, cached input and output:
// OpenAI's priority processing page (openai.com/api-priority-processing), priority price over
// standard price. A model missing here is held and billed at the highest premium listed.
//
// Ultrafast (`service_tier: "ultrafast"`, gpt-5.6-sol, access-controlled) has no published price:
// a reply served at it is recorded unpriced (never at standard's price), and a key with a credit
// limit is refused a request that asks for it, as it is a model with no known price.
import type { Usage } from '../ir/types.ts'

/** Priority price ÷ standard price, by upstream model id (a dated snapshot reads its base id). */
const PRIORITY = new Map<string, number>(Object.entries({
  'gpt-5.5': 2.5,
  'gpt-5.4': 2,
  'gpt-5.4-mini': 2,
  'gpt-5.2': 2,
  'gpt-5.1': 2,
  'gpt-5.1-codex': 2,
  'gpt-5': 2,
  'gpt-5-codex': 2,
  'gpt-5-mini': 1.8,
  'gpt-4.1': 1.75,
  'gpt-4.1-mini': 1.75,
  'gpt-4.1-nano': 2,
  'gpt-4o': 1.7,
  'gpt-4o-2024-05-13': 1.75,
  'gpt-4o-mini': 0.25 / 0.15,
  o3: 1.75,
  'o4-mini': 2 / 1.1,
}))

const UNLISTED_PRIORITY = Math.max(...PRIORITY.values())
const FLEX = 0.5

/** The tiers priced apart: the value a reply's `service_tier` names them by. */
export type PricedTier = NonNullable<Usage['serviceTier']>

/** The tiers whose price the gateway does not know: a reply served at one is unpriced. */
const UNPRICED = new Set<PricedTier>(['ultrafast'])

/** A reply's (or a request's) `service_tier`, when it is one priced apart from standard (or one of unknown price). */
export function pricedTier(v: unknown): PricedTier | undefined {
  return v === 'priority' || v === 'fast' ? 'priority' : v === 'flex' || v === 'ultrafast' ? v : undefined
}

/** Whether `tier` is one the gateway cannot price. */
export const unpricedTier = (tier: PricedTier | undefined): boolean => tier !== undefined && UNPRICED.has(tier)

/**
 * The tier a request is held at, by the `service_tier` it asks for: priority's price when it
 * asks for priority or fast mode (its new name); ultrafast, which no hold can price (admission
 * refuses it a funded key); standard's otherwise (a flex request too: the hold is a worst case).
 */
export function heldTier(asked: unknown): PricedTier | undefined {
  return asked === 'priority' || asked === 'fast' ? 'priority' : asked === 'ultrafast' ? asked : undefined
}

const DATED = /-\d{4}-\d{2}-\d{2}$/

/** An OpenAI id without its snapshot's date (`gpt-4.1-2025-04-14` → `gpt-4.1`). */
export const undated = (id: string): string => id.replace(DATED, '')

/** What tokens served at `tier` cost against the standard price, for the model OpenAI was sent; null: a tier of no known price. */
export function tierFactor(upstreamId: string, tier: PricedTier | undefined): number | null {
  if (tier === undefined) return 1
  if (unpricedTier(tier)) return null
  if (tier === 'flex') return FLEX
  return PRIORITY.get(upstreamId) ?? PRIORITY.get(undated(upstreamId)) ?? UNLISTED_PRIORITY
}
