// Admission of a generation: the credit reservation of issue 9 (D5) is decided here, once
// the model and the request's prompt and output cap are known. Owned by the credits work;
// the pipeline calls `admit` before any upstream call and hands the result to the outcome,
// which settles it when the request is recorded.
import type { ApiKey } from '../auth/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { Services } from '../services.ts'

export interface AdmitInput {
  apiKey: ApiKey
  model: CatalogModel
  /** Estimated prompt tokens (counted cheaply; bounded for huge prompts). */
  promptTokens: number
  /** The request's output cap, or undefined when it gave none (the model's default applies). */
  maxOutputTokens: number | undefined
}

/** A reservation to settle at record time (undefined when nothing was reserved). */
export type Admission = { reservationId: string } | undefined

/** Throws HttpError 402 when the key cannot cover the estimate. */
export function admit(_s: Services, _input: AdmitInput): Admission {
  return undefined
}
