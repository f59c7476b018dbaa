// Upstream failures → the spec's statuses. One table; the upstream's own message text is
// kept (it is usually the most precise description of what was wrong with the request),
// except for credential failures, whose text can echo part of our key.
import { own } from '../lib/own.ts'
import { UpstreamError } from './types.ts'
import { withoutSecrets } from '../lib/secrets.ts'

interface StatusRule {
  /** Status the gateway answers with. */
  status: number
  /** Retrying the same request may succeed. */
  retryable: boolean
  /** Replaces the upstream message (which is then never shown). */
  message?: (provider: string) => string
}

const credentials = (p: string) =>
  `upstream ${p} rejected the gateway's credentials; the operator must check the ${p} API key in the gateway config`

/** Upstream HTTP status → gateway status. Absent 4xx → 400, absent 5xx → 502. */
export const UPSTREAM_STATUS: Record<number, StatusRule> = {
  400: { status: 400, retryable: false },
  401: { status: 502, retryable: false, message: credentials },
  402: { status: 502, retryable: false, message: (p) => `upstream ${p} refused the request for billing reasons (payment required)` },
  403: { status: 502, retryable: false, message: credentials },
  404: { status: 400, retryable: false },
  408: { status: 504, retryable: true },
  409: { status: 400, retryable: false },
  413: { status: 413, retryable: false },
  422: { status: 400, retryable: false },
  429: { status: 429, retryable: true },
  500: { status: 502, retryable: true },
  502: { status: 502, retryable: true },
  503: { status: 503, retryable: true },
  504: { status: 504, retryable: true },
  529: { status: 503, retryable: true },
}

export function statusRule(upstreamStatus: number): StatusRule {
  return UPSTREAM_STATUS[upstreamStatus] ?? (upstreamStatus >= 500 ? { status: 502, retryable: true } : { status: 400, retryable: false })
}

/** Anthropic error `type` → the HTTP status Anthropic documents for it (for in-stream errors). */
export const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
}

export interface ParsedErrorBody {
  message?: string
  type?: string
  /** The body was an HTML page: `message` says what it was, not what it held. */
  html?: boolean
}

/** OpenAI `{error:{message,type,code}}` and Anthropic `{type:"error",error:{type,message}}`. */
export function parseErrorBody(text: string): ParsedErrorBody {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    const t = text.trim()
    if (t.startsWith('<')) return { message: htmlSaid(t), html: true }
    return t ? { message: t.slice(0, 500) } : {}
  }
  const err = (v as { error?: unknown })?.error
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; type?: unknown; code?: unknown }
    return {
      message: typeof e.message === 'string' ? e.message : undefined,
      type: typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : undefined,
    }
  }
  if (typeof err === 'string') return { message: err }
  // vLLM and others of its kind: {"object": "error", "message": …, "type": …}
  const flat = v as { message?: unknown; type?: unknown } | null
  if (flat && typeof flat === 'object' && typeof flat.message === 'string') return { message: flat.message, type: typeof flat.type === 'string' ? flat.type : undefined }
  return {}
}

/**
 * An HTML page (a proxy's or load balancer's 502 or 503) is not handed on as it came: its markup
 * may name the operator's hosts and addresses. Its title says what it was.
 */
function htmlSaid(page: string): string {
  const title = /<title[^>]*>([^<]{1,200})<\/title>/i.exec(page.slice(0, 16 * 1024))?.[1]?.replace(/\s+/g, ' ').trim()
  return title ? `an HTML page titled "${title.slice(0, 100)}"` : 'an HTML page'
}

/** What a JSON error body says, with no key of ours in it and cut to 500 characters; undefined for other text. */
export function errorSaid(text: string): string | undefined {
  if (!/^\s*\{/.test(text)) return undefined
  const m = parseErrorBody(text).message
  return m === undefined ? undefined : withoutSecrets(m).slice(0, 500)
}

/**
 * A 2xx answer that is no reply (an error object sent without its status, a proxy's page): a
 * failure before the first byte, retried and failed over, saying `what` it was.
 */
export function notAReplyError(what: string, provider?: string): UpstreamError {
  return new UpstreamError({ status: 502, message: `upstream ${provider === undefined ? '' : `${provider} `}answered ${what}`, type: 'invalid_body' }, { retryable: true })
}

/** An upstream that answered with a redirect: not followed (its target is not said: it may be an address inside the operator's network). */
export function redirectRefused(provider: string, status: number): UpstreamError {
  return new UpstreamError(
    { status: 502, message: `upstream ${provider} answered a redirect (HTTP ${status}), which the gateway does not follow: set the provider's base_url to the address it names`, type: 'redirect', answeredWith: status },
    { retryable: false },
  )
}

/** Removes our own key from any text that is about to leave the adapter. */
export function redact(text: string, secret?: string): string {
  const known = withoutSecrets(text)
  if (!secret || secret.length < 4) return known
  return known.split(secret).join('[redacted]')
}

export interface UpstreamFailure {
  provider: string
  upstreamStatus: number
  bodyText: string
  retryAfter?: string | null
  apiKey?: string
}

/** One mapping: an upstream non-2xx answer → UpstreamError with the spec status. */
export function upstreamErrorFrom(f: UpstreamFailure): UpstreamError {
  const rule = statusRule(f.upstreamStatus)
  const parsed = parseErrorBody(f.bodyText)
  const said = parsed.html ? `upstream ${f.provider} answered HTTP ${f.upstreamStatus} with ${parsed.message}` : parsed.message
  const message = rule.message ? rule.message(f.provider) : redact(said ?? `upstream ${f.provider} answered HTTP ${f.upstreamStatus}`, f.apiKey)
  return new UpstreamError(
    { status: rule.status, message, type: parsed.type, retryAfter: f.retryAfter ?? undefined, answeredWith: f.upstreamStatus },
    { retryable: rule.retryable },
  )
}

/**
 * An in-band Anthropic `error` event → the same mapping as an HTTP answer with its documented
 * status. A server of the wire may send the error as its message alone (`"error": "Rate limit…"`).
 */
export function anthropicEventError(provider: string, error: { type?: string; message?: string } | string | undefined, apiKey?: string): UpstreamError {
  const e = typeof error === 'string' ? { message: error } : error
  const type = typeof e?.type === 'string' ? e.type : 'api_error'
  const upstreamStatus = own(ANTHROPIC_ERROR_STATUS, type) ?? 500
  return upstreamErrorFrom({
    provider,
    upstreamStatus,
    bodyText: JSON.stringify({ type: 'error', error: { type, message: typeof e?.message === 'string' ? e.message : type } }),
    apiKey,
  })
}
