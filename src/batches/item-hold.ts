// What a batch item is held for, on the main thread where the key's ledger is: the worst case an
// interactive request of the same body would be held for, from the columns its item was stored
// with as the batch was checked (its prompt bound, output cap, `n`, tier, and what its server
// tools may add beyond them). Priced when it is admitted, at the catalog's prices then.
import type { AdmitInput } from '../billing/admission.ts'
import type { BeyondPrompt } from '../billing/server-tools.ts'
import type { CatalogModel } from '../config/catalog.ts'
import { pricedTier } from '../config/service-tiers.ts'
import type { ApiKey } from '../http/context.ts'
import type { ClaimedItem } from './store.ts'

/** The admission of a claimed item, as an interactive request's is made. */
export function itemAdmitInput(apiKey: ApiKey, model: CatalogModel, item: ClaimedItem): AdmitInput {
  return {
    apiKey,
    model,
    promptTokens: item.promptEstimate,
    maxOutputTokens: item.maxOutputTokens ?? undefined,
    choices: item.choices ?? undefined,
    serviceTier: pricedTier(item.serviceTier),
    beyond: beyondOf(item.beyond),
  }
}

/** What lies beyond an item's prompt and cap, as its `beyond` column keeps it (null: nothing). */
export function beyondText(beyond: BeyondPrompt | undefined): string | null {
  return beyond ? JSON.stringify(beyond) : null
}

/** The `beyond` column read back; null (nothing, or an item stored before the column was) is undefined. */
export function beyondOf(text: string | null): BeyondPrompt | undefined {
  if (text === null) return undefined
  const o = JSON.parse(text) as Partial<BeyondPrompt>
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0)
  return { webSearches: count(o.webSearches), fileSearches: count(o.fileSearches), inputTokens: count(o.inputTokens), audioOutput: o.audioOutput === true }
}
