// What an admission holds: a request's worst case, every prompt token uncached and its whole
// output cap used, at catalog prices; and the answers of a refused one. Pure: billing.ts
// decides with these, a ledger holds the result.
import type { Catalog, CatalogModel } from '../config/catalog.ts'
import type { RedisUnavailable } from '../cluster/redis.ts'
import type { ApiKey } from '../http/context.ts'
import { HttpError } from '../http/errors.ts'
import type { Usage } from '../ir/types.ts'
import { loopCalls, withReplySearches, worstUsage, type BeyondPrompt } from './server-tools.ts'
import { dearerWrites, type PromptWrites } from './prompt-writes.ts'
import type { Premiums } from '../config/claude-premiums.ts'
import { unpricedTier } from '../config/service-tiers.ts'
import { usd } from '../lib/usd.ts'

export interface AdmitInput {
  apiKey: ApiKey
  model: CatalogModel
  /** Estimated prompt tokens (counted cheaply; bounded for huge prompts), or how to count them when needed (a funded key). */
  promptTokens: number | (() => number)
  /**
   * The dearest price its prompt can be billed at, by its cache breakpoints (prompt-writes.ts),
   * read after promptTokens; undefined (a caller that cannot tell): an hour's cache write, the dearest.
   */
  promptWrites?: PromptWrites | (() => PromptWrites)
  /** The request's output cap, or undefined when it gave none (the model's default applies). */
  maxOutputTokens: number | undefined
  /** How many answers it asks for, each up to the cap (chat's `n`); 1 when absent. */
  choices?: number
  /** The processing tier it is held at, where that is priced apart (OpenAI's priority). */
  serviceTier?: Usage['serviceTier']
  /** Anthropic's modes priced apart that it asks for (config/claude-premiums.ts). */
  premiums?: Premiums
  /** What it may be billed for beyond its prompt and output cap (server tools' searches, audio output). */
  beyond?: BeyondPrompt
}

/**
 * An admission asked for on another thread than the key's ledger's (a batch worker asks the
 * main thread): plain values, the model by its id, the prompt counted.
 */
export type AdmitAsk = Omit<AdmitInput, 'apiKey' | 'model' | 'promptTokens' | 'promptWrites'> & { model: string; promptTokens: number; promptWrites?: PromptWrites }

/** The admission as it is asked for from another thread. */
export function askOf(input: AdmitInput): AdmitAsk {
  const { apiKey: _, model, promptTokens, promptWrites, ...rest } = input
  return { ...rest, model: model.id, promptTokens: typeof promptTokens === 'function' ? promptTokens() : promptTokens, promptWrites: typeof promptWrites === 'function' ? promptWrites() : promptWrites }
}

/** A reservation to settle when the request ends (undefined when nothing was held). */
export type Admission = { reservationId: string } | undefined

/**
 * The worst-case cost in USD, or null when the model has no known price (nothing is held; its
 * records cost nothing either). A model the gateway knows nothing of, on a real upstream, would
 * cost the operator a sum no credit ever sees: a funded key is refused it rather than served free.
 */
export function worstCase(catalog: Catalog, input: AdmitInput): number | null {
  const { model } = input
  // a tier of no known price would cost the operator what no credit sees, as an unpriced model would
  if (unpricedTier(input.serviceTier)) {
    throw new HttpError(400, `service_tier: ${input.serviceTier} has no known price, and this key has a credit limit; ask for another service_tier, or use a key without one`)
  }
  const usd = estimate(catalog, model, typeof input.promptTokens === 'function' ? input.promptTokens() : input.promptTokens, input)
  // a priced model whose worst case came out as no number (a NaN or an Infinity from some term
  // of the request) is held at the key's whole credit, never at nothing: one such request at a time
  if (usd === UNBOUNDED) return typeof input.apiKey.credits === 'number' && input.apiKey.credits > 0 ? input.apiKey.credits : null
  if (usd === null && model.unlisted && model.provider !== 'mock') {
    throw new HttpError(400, `model: ${model.id} has no known price, and this key has a credit limit; give the model a price (config models[].price or pricing.overrides), or use a key without one`)
  }
  return usd
}

/** A worst case that is no finite number, of a model that has a price. */
const UNBOUNDED = Symbol('unbounded')

/** Whether the catalog prices `model` at all (nothing used costs 0, not null). */
function priced(catalog: Catalog, model: CatalogModel): boolean {
  try {
    return catalog.cost(model, { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }) !== null
  } catch {
    return false
  }
}

function estimate(catalog: Catalog, model: CatalogModel, promptTokens: number, input: AdmitInput): number | null | typeof UNBOUNDED {
  const prompt = sane(promptTokens) ?? 0
  // a cap above the model's own (or none) cannot produce more than the model's own; with no
  // known cap, the output cannot outgrow the context window
  const most = model.maxOutputTokens ?? model.contextWindow
  const replies = Math.max(1, sane(input.choices) ?? 1)
  const cap = Math.min(sane(input.maxOutputTokens) ?? most, most) * replies
  // OpenAI's image tool runs on OpenAI's upstream alone (the others' requests leave it out)
  const beyond = withReplySearches(model.family === 'openai' ? input.beyond : withoutImages(input.beyond), model, replies)
  const loops = model.family === 'anthropic'
  const usage = worstUsage(prompt, cap, beyond, loops)
  // Anthropic's loop of calls writes the prompt and what its tools bring back to its cache
  // (five minutes) whatever breakpoints the request set: all of its input is held as a write
  const looping = loopCalls(beyond, loops) > 1
  const writable = looping ? prompt + (beyond?.inputTokens ?? 0) : prompt
  // OpenAI writes to its cache with no breakpoint asked for (an implicit one, gpt-5.6 and later,
  // which price a write above input): its prompt is held as a write too
  const writes = looping || model.family === 'openai' ? dearerWrites(writesOf(input), '5m') : writesOf(input)
  if (input.serviceTier) usage.serviceTier = input.serviceTier
  if (input.premiums) Object.assign(usage, input.premiums)
  // the catalog answers null for no price and for a cost that is no number alike: told apart here
  const failed = () => (priced(catalog, model) ? UNBOUNDED : null)
  try {
    const usd = catalog.cost(model, usage)
    if (usd === null || !Number.isFinite(usd)) return failed()
    // The prompt may be billed as cache writes, at the price its breakpoints allow (a Claude
    // breakpoint: 1.25× input for five minutes, 2× for an hour; none: input alone): held at the
    // dearest reading, since its bytes bound its tokens but not which price each takes. Where a
    // write costs no more than input, input's reading stands.
    let dearest = Math.max(0, usd)
    for (const write of WRITTEN[writes]) {
      const written = catalog.cost(model, { ...usage, inputTokens: usage.inputTokens - writable, ...write(writable) })
      if (written !== null && Number.isFinite(written)) dearest = Math.max(dearest, written)
    }
    return dearest
  } catch {
    return failed()
  }
}

function withoutImages(beyond: BeyondPrompt | undefined): BeyondPrompt | undefined {
  if (!beyond?.imageGen) return beyond
  const { imageGen: _, ...rest } = beyond
  return rest
}

/** The prompt as written to a cache, by the dearest write its breakpoints allow: each reading the hold weighs. */
const WRITTEN: Record<PromptWrites, ((prompt: number) => Partial<Usage>)[]> = {
  none: [],
  '5m': [(p) => ({ cacheWriteTokens: p })],
  '1h': [(p) => ({ cacheWriteTokens: p }), (p) => ({ cacheWriteTokens: p, cacheWrite1hTokens: p })],
}

function writesOf(input: AdmitInput): PromptWrites {
  const w = typeof input.promptWrites === 'function' ? input.promptWrites() : input.promptWrites
  return w !== undefined && Object.hasOwn(WRITTEN, w) ? w : '1h'
}

function sane(n: number | undefined): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined
}

/** The 402 of a key whose balance, less what its requests in progress hold (`held`), is not above zero. */
export class CreditsExhausted extends HttpError {
  constructor(
    credits: number,
    spent: number,
    readonly held: number,
  ) {
    // a gateway killed outright leaves its requests' holds behind: they are deleted once it is
    // seen gone for a few seconds (pg-owner.ts, redis-owner.ts), at the latest they lapse within RESERVATION_TTL_MS
    const holds = held > 0 ? ` and ${usd(held)} is held by requests in progress (or, for a few seconds, by those of a gateway that was stopped outright)` : ''
    super(402, `Credits exhausted: this key has spent ${usd(spent)} of its ${usd(credits)} credits${holds}; add credits, then resend`)
  }
}

/** The 503 of a request that needs the shared store while it is away (`redis.on_error: deny`). */
export function sharedStoreDown(e: RedisUnavailable): HttpError {
  return new HttpError(503, `Service unavailable: the shared store (Redis) that holds rate limits and credits did not answer (${e.message.replace(/^Redis unavailable: /, '')}); retry shortly`, { 'retry-after': '1' })
}
