// Admission of a generation: the credit reservation, decided once the model
// and the request's prompt and output cap are known. The pipeline calls `admit` before any
// upstream call and hands the reservation id to the outcome; the recorder settles it when the
// request is recorded (every request is recorded, failed ones too).
//
// Rule: a key with credits is admitted while credits − spent − reserved > 0, where `spent`
// already includes costs settled in memory but not yet written. The admitted request then
// reserves its worst case: prompt tokens + its output cap (the model's own cap when it gave
// none), at catalog prices. So sequentially exactly the requests the credit covers are served,
// plus the one that crosses zero; concurrently, reservations stop the burst after at most
// that many. A model with no known price reserves nothing (its records cost nothing either):
// it is admitted while the balance is above zero, unless it is unlisted (known neither to the
// table nor to the price library) and goes to a real upstream: that is refused to funded keys.
import type { ApiKey } from '../http/context.ts'
import type { AdmitResult } from '../auth/credits.ts'
import type { CatalogModel } from '../config/catalog.ts'
import { RedisUnavailable } from '../cluster/redis.ts'
import { HttpError } from '../http/errors.ts'
import type { Services } from '../services.ts'

export interface AdmitInput {
  apiKey: ApiKey
  model: CatalogModel
  /** Estimated prompt tokens (counted cheaply; bounded for huge prompts), or how to count them when needed (a funded key). */
  promptTokens: number | (() => number)
  /** The request's output cap, or undefined when it gave none (the model's default applies). */
  maxOutputTokens: number | undefined
}

/** A reservation to settle at record time (undefined when nothing was reserved). */
export type Admission = { reservationId: string } | undefined

/**
 * Throws HttpError 402 when the key's balance less its open reservations is not above zero.
 * At once on the in-memory ledger; a promise when the reservations are shared (credits.ts).
 */
export function admit(s: Services, input: AdmitInput): Admission | Promise<Admission> {
  const { apiKey, model } = input
  if (apiKey.credits === null) return undefined // unlimited: nothing to guard
  // the cached key is updated in place by settlements; the request's own copy may predate a reload
  const key = s.keys.current(apiKey.id) ?? apiKey
  if (key.credits === null) return undefined
  const usd = priced(model, estimate(s, model, promptOf(input), input.maxOutputTokens))
  const r = s.keys.ledger.admit(key as ApiKey & { credits: number }, usd)
  return r instanceof Promise ? r.then(admitted) : admitted(r)
}

function admitted(r: AdmitResult): Admission {
  if ('refused' in r) {
    const { credits, spent, reserved } = r.refused
    const held = reserved > 0 ? ` and $${reserved.toFixed(6)} is held by requests in progress` : ''
    throw new HttpError(402, `Credits exhausted: this key has spent $${spent.toFixed(6)} of its $${credits} credits${held}; add credits, then resend`)
  }
  return r.reservationId === undefined ? undefined : { reservationId: r.reservationId }
}

/**
 * The admission every request and batch item goes through: with several instances on Redis the
 * shared store decides; otherwise the ledger (memory: at once, no await; PostgreSQL: a promise).
 */
export function admitRequest(s: Services, input: AdmitInput): Admission | Promise<Admission> {
  return s.keys.shared ? admitShared(s, input) : admit(s, input)
}

/**
 * The same rule when credits are shared by several instances (`s.keys.shared`): the check and
 * the hold are one atomic step there. Shared store unreachable: 503, or this instance's own
 * figures with `redis.on_error: allow`.
 */
export async function admitShared(s: Services, input: AdmitInput): Promise<Admission> {
  const shared = s.keys.shared
  if (!shared || input.apiKey.credits === null) return admit(s, input)
  const key = s.keys.current(input.apiKey.id) ?? input.apiKey
  if (key.credits === null) return undefined
  const usd = priced(input.model, estimate(s, input.model, promptOf(input), input.maxOutputTokens))
  let r
  try {
    r = await shared.reserve({ id: key.id, credits: key.credits, spent: key.spent }, usd ?? 0)
  } catch (e) {
    if (!(e instanceof RedisUnavailable)) throw e
    if (s.config.redis?.onError === 'allow') {
      s.cluster?.redis?.degraded()
      return admit(s, input)
    }
    throw sharedStoreDown(e)
  }
  if (!r.admitted) {
    const held = r.reserved > 0 ? ` and $${r.reserved.toFixed(6)} is held by requests in progress` : ''
    throw new HttpError(402, `Credits exhausted: this key has spent $${r.spent.toFixed(6)} of its $${key.credits} credits${held}; add credits, then resend`)
  }
  return r.reservationId ? { reservationId: r.reservationId } : undefined
}

/** The 503 of a request that needs the shared store while it is away (`redis.on_error: deny`). */
export function sharedStoreDown(e: RedisUnavailable): HttpError {
  return new HttpError(503, `Service unavailable: the shared store (Redis) that holds rate limits and credits did not answer (${e.message.replace(/^Redis unavailable: /, '')}); retry shortly`, { 'retry-after': '1' })
}

/**
 * Release an admission whose request ends without a record (nothing upstream was called and
 * no outcome was taken). Harmless after settlement: a reservation is released once.
 */
export function releaseAdmission(s: Services, admission: Admission): void {
  s.keys.ledger.release(admission?.reservationId)
  void s.keys.shared?.release(admission?.reservationId)
}

/**
 * A model the gateway knows nothing of, on a real upstream, costs the operator a sum no credit
 * would ever see: a funded key is refused it rather than served free.
 */
function priced(model: CatalogModel, usd: number | null): number | null {
  if (usd === null && model.unlisted && model.provider !== 'mock') {
    throw new HttpError(400, `model: ${model.id} has no known price, and this key has a credit limit; give the model a price (config models[].price or pricing.overrides), or use a key without one`)
  }
  return usd
}

/** Worst-case cost: every prompt token uncached, the whole output cap used. Null when unpriced. */
const promptOf = (i: AdmitInput) => (typeof i.promptTokens === 'function' ? i.promptTokens() : i.promptTokens)

function estimate(s: Services, model: CatalogModel, promptTokens: number, maxOut: number | undefined): number | null {
  const prompt = sane(promptTokens) ?? 0
  // a cap above the model's own (or none) cannot produce more than the model's own; with no
  // known cap, the output cannot outgrow the context window
  const most = model.maxOutputTokens ?? model.contextWindow
  const cap = Math.min(sane(maxOut) ?? most, most)
  try {
    const usd = s.catalog.cost(model, { inputTokens: prompt, outputTokens: cap, cacheReadTokens: 0, cacheWriteTokens: 0 })
    return usd !== null && Number.isFinite(usd) ? Math.max(0, usd) : null
  } catch {
    return null
  }
}

function sane(n: number | undefined): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined
}
