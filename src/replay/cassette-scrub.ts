// What never reaches a cassette file: the headers that carry credentials are left out whole,
// and in every text written (bodies, other headers) the configured secrets (the providers'
// keys, the admin and bootstrap tokens) and anything shaped like an API key are replaced, as
// the logs' redaction finds them too (lib/secrets.ts).
// The same scrubbing runs on a request before its match key is taken, so a request that
// quotes a key still matches its recording.
import type { Config } from '../config/load.ts'
import { withoutSecrets } from '../lib/secrets.ts'

export const SCRUBBED = '[scrubbed]'

/** Request headers that carry credentials: not recorded at all. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'proxy-authorization', 'cookie'])
/** Request headers that differ on every run or say nothing of the request: not recorded either. */
const RUN_HEADERS = new Set(['traceparent', 'tracestate', 'content-length'])

/**
 * `sk-…` keys (OpenAI's `sk-proj-…`, Anthropic's `sk-ant-…`, the gateway's own `sk-sy-…`): at
 * least 16 key characters with a digit among them, not inside a longer word.
 */
const KEY_PATTERN = /(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}/g

/** A configured value this short is not looked for: it would match ordinary text. */
const MIN_SECRET = 8

export type Scrub = (text: string) => string

/** The scrubber of a config's secrets, longest first (a key that contains another is replaced whole). */
export function scrubberOf(config: Pick<Config, 'providers' | 'adminToken' | 'bootstrapKey'>): Scrub {
  const secrets = [
    ...Object.values(config.providers).flatMap((p) => p.apiKeys),
    config.adminToken,
    config.bootstrapKey,
  ].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET)
  const sorted = [...new Set(secrets)].sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const s of sorted) if (out.includes(s)) out = out.split(s).join(SCRUBBED)
    // and what the logs' redaction takes for a key: one after a JSON escape (`\nsk-…` in an event's
    // text), after an underscore, the gateway's own with no digit, the held keys in base64
    return withoutSecrets(out.replace(KEY_PATTERN, SCRUBBED))
  }
}

/** Every string in a JSON value scrubbed (keys too). */
export function scrubJson(v: unknown, scrub: Scrub): unknown {
  if (typeof v === 'string') return scrub(v)
  if (Array.isArray(v)) return v.map((x) => scrubJson(x, scrub))
  if (typeof v !== 'object' || v === null) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) out[scrub(k)] = scrubJson(x, scrub)
  return out
}

/** The request headers worth recording (what the adapter sent beside the body), scrubbed. */
export function recordedHeaders(headers: RequestInit['headers'], scrub: Scrub): Record<string, string> | undefined {
  const out: Record<string, string> = {}
  for (const [k, v] of new Headers(headers)) {
    if (!SECRET_HEADERS.has(k) && !RUN_HEADERS.has(k)) out[k] = scrub(v)
  }
  return Object.keys(out).length > 0 ? out : undefined
}
