// Which header carries the key on which route, and what each failure says. The key
// itself is never echoed.
import { HttpError } from '../http/errors.ts'
import type { ApiKey } from '../http/context.ts'
import type { KeyStore } from './keys.ts'
import { usd } from '../lib/usd.ts'

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i
const MAX_KEY_LENGTH = 512

/** The presented secret, or an HttpError saying which header problem it is. */
export function presentedKey(headers: Headers, betaRoute: boolean): string | HttpError {
  const auth = headers.get('authorization')
  const xApiKey = headers.get('x-api-key')
  if (auth !== null) {
    const m = BEARER.exec(auth)
    if (!m) return new HttpError(401, "Malformed Authorization header: expected 'Authorization: Bearer <API key>'")
    return m[1]!
  }
  if (xApiKey !== null) {
    if (!betaRoute) return new HttpError(401, "Wrong authentication header: x-api-key is accepted only on /api/beta routes; send 'Authorization: Bearer <API key>'")
    if (xApiKey.trim() === '') return new HttpError(401, 'Malformed x-api-key header: it is empty')
    return xApiKey.trim()
  }
  return new HttpError(401, betaRoute
    ? "Missing API key: send 'Authorization: Bearer <API key>' or 'x-api-key: <API key>'"
    : "Missing API key: send 'Authorization: Bearer <API key>'")
}

/**
 * The active, funded key for a request, or the 401/402 that refuses it. At once for a key in
 * memory (every request but the first of a key made elsewhere); a promise otherwise.
 */
export function authenticate(headers: Headers, betaRoute: boolean, keys: KeyStore): ApiKey | HttpError | Promise<ApiKey | HttpError> {
  const secret = presentedKey(headers, betaRoute)
  if (secret instanceof HttpError) return secret
  if (secret.length > MAX_KEY_LENGTH) return new HttpError(401, 'Malformed API key: too long')
  const key = keys.authenticate(secret)
  return key instanceof Promise ? key.then(admitKey) : admitKey(key)
}

/**
 * `authenticate` answered from memory alone: undefined when the key is not in memory (it would
 * be looked up), so that a caller may take the address's limit before any lookup starts.
 */
export function authenticateKnown(headers: Headers, betaRoute: boolean, keys: KeyStore): ApiKey | HttpError | undefined {
  const secret = presentedKey(headers, betaRoute)
  if (secret instanceof HttpError) return secret
  if (secret.length > MAX_KEY_LENGTH) return new HttpError(401, 'Malformed API key: too long')
  const key = keys.known(secret)
  return key === undefined ? undefined : admitKey(key ?? undefined)
}

function admitKey(key: ApiKey | undefined): ApiKey | HttpError {
  if (!key) return new HttpError(401, 'Invalid API key: no such key')
  if (key.status !== 'active') return new HttpError(401, 'API key is inactive')
  if (key.credits === 0) return new HttpError(401, 'API key has zero credits')
  // `spent` counts costs settled in memory, not yet written; reservations of requests in
  // progress are weighed at admission (billing/billing.ts), once the model and caps are known
  if (key.credits !== null && key.spent >= key.credits) return new CreditsExhausted(key)
  return key
}

/** A funded key whose spend reached its credit: refused (402) for what spends, let through to read what it spent (its records, usage, files). */
export class CreditsExhausted extends HttpError {
  constructor(readonly key: ApiKey) {
    super(402, `Credits exhausted: this key has spent ${usd(key.spent)} of its ${usd(key.credits ?? 0)} credits; add credits, then resend`)
  }
}
