// A batch item's hold, on the main thread where the key's ledger is: the worst case an interactive
// request of the same body would be held for, from the columns its item was stored with as the
// batch was checked (its prompt bound, output cap, `n`, tier, and what its server tools may add
// beyond them), priced when it is admitted; and, as an interactive request's is, held anew at a
// fallback model's price before its worker calls that model (the worker asks: hold-asks.ts).
import { worstCase, type Admission, type AdmitAsk, type AdmitInput } from '../billing/admission.ts'
import type { BeyondPrompt } from '../billing/server-tools.ts'
import type { PromptWrites } from '../billing/prompt-writes.ts'
import { containerCounts } from '../billing/containers.ts'
import { premiumsOf, type Premiums } from '../config/claude-premiums.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { BatchServices } from '../services.ts'
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
    promptWrites: promptWritesOf(item.beyond),
    premiums: premiumsOfColumn(item.beyond),
  }
}

/**
 * What lies beyond an item's prompt and cap, as its `beyond` column keeps it (null: nothing), with
 * the price its prompt can be billed at when that is below an hour's cache write (what an item
 * stored without it is held at).
 */
export function beyondText(beyond: BeyondPrompt | undefined, writes: PromptWrites = '1h', premiums?: Premiums): string | null {
  const held = { ...(writes === '1h' ? {} : { promptWrites: writes }), ...(premiums?.speed || premiums?.inferenceGeo ? { premiums } : {}) }
  if (Object.keys(held).length === 0) return beyond ? JSON.stringify(beyond) : null
  return JSON.stringify({ ...beyond, ...held })
}

/** Anthropic's modes priced apart that an item asks for, as its `beyond` column keeps them (none stored: none asked). */
export function premiumsOfColumn(text: string | null): Premiums | undefined {
  if (text === null) return undefined
  try {
    const p = (JSON.parse(text) as { premiums?: { speed?: unknown; inferenceGeo?: unknown } } | null)?.premiums
    return p ? premiumsOf({ speed: p.speed, inference_geo: p.inferenceGeo }) : undefined
  } catch {
    return undefined
  }
}

/** The price an item's prompt can be billed at, as its `beyond` column keeps it: an hour's cache write unless it says less. */
export function promptWritesOf(text: string | null): PromptWrites {
  if (text === null) return '1h'
  try {
    const w = (JSON.parse(text) as { promptWrites?: unknown } | null)?.promptWrites
    return w === 'none' || w === '5m' ? w : '1h'
  } catch {
    return '1h'
  }
}

/** The `beyond` column read back; null (nothing, or an item stored before the column was) is undefined. */
export function beyondOf(text: string | null): BeyondPrompt | undefined {
  if (text === null) return undefined
  let o: Partial<BeyondPrompt>
  try {
    o = (JSON.parse(text) ?? {}) as Partial<BeyondPrompt>
    // a column that keeps only its prompt's price: nothing beyond
    if (o.webSearches === undefined && o.inputTokens === undefined && o.audioOutput === undefined && o.fileSearches === undefined && o.calls === undefined && o.imageGen === undefined && o.containers === undefined) return undefined
  } catch {
    // a value the gateway did not write (a row edited by hand) is held as an item stored before the column was
    return undefined
  }
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0)
  // stored before model calls were counted: one (as it was held then)
  const image = o.imageGen && typeof o.imageGen === 'object' ? o.imageGen : undefined
  const imageGen = image && count(image.images) > 0 ? { imageGen: { ...(typeof image.model === 'string' ? { model: image.model } : {}), images: count(image.images), outputTokens: count(image.outputTokens) } } : {}
  const containers = containerCounts(o.containers)
  return { webSearches: count(o.webSearches), fileSearches: count(o.fileSearches), inputTokens: count(o.inputTokens), audioOutput: o.audioOutput === true, ...(count(o.calls) > 1 ? { calls: count(o.calls) } : {}), ...imageGen, ...(containers ? { containers } : {}) }
}

/** An admitted item's hold while it runs, however long (renewed, as a request's is), until it ends. */
export class ItemHold {
  private ended = false
  private unkeep: () => void

  constructor(
    private readonly s: Pick<BatchServices, 'billing' | 'catalog'>,
    private input: AdmitInput,
    private admission: Admission,
  ) {
    this.unkeep = s.billing.keep(admission)
  }

  /**
   * Held for a fallback model its worker reached (true), or not (false: the worker does not call
   * it). Unlike an interactive request, the item may run its own model again afterwards (its
   * retries begin there): it keeps the dearer of the two holds, and gives back the one it had
   * only once the new one is made, so it is never left holding nothing.
   */
  async anew(ask: AdmitAsk): Promise<boolean> {
    const model = this.s.catalog.resolve(ask.model)
    if (!model || this.ended) return false
    if (this.input.apiKey.credits === null) return true
    const input: AdmitInput = { ...ask, apiKey: this.input.apiKey, model }
    if ((worstCase(this.s.catalog, input) ?? 0) <= (worstCase(this.s.catalog, this.input) ?? 0)) return true
    const admitting = this.s.billing.admit(input)
    const admission = admitting instanceof Promise ? await admitting : admitting
    if (this.ended) {
      this.s.billing.release(admission)
      return false
    }
    this.unkeep()
    this.s.billing.release(this.admission)
    this.admission = admission
    this.input = input
    this.unkeep = this.s.billing.keep(admission)
    return true
  }

  /** Whether the item's key has a credit (holds are made for it). */
  get funded(): boolean {
    return this.input.apiKey.credits !== null
  }

  /** The item's result is stored (its spend in the ledger already), or its worker died with it. */
  end(): void {
    this.ended = true
    this.unkeep()
    this.s.billing.release(this.admission)
  }
}
