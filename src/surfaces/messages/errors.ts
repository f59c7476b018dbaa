// The messages-style in-band error: after the 200 went out, a
// failure is one `event: error` frame in Anthropic's shape, then the stream closes.
import { HttpError } from '../../http/errors.ts'

/** Anthropic's error types; an error that already carries one keeps it. */
const ANTHROPIC_TYPES = new Set([
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error',
  'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error',
])

/** Gateway status → Anthropic error type; any other 4xx is invalid_request_error, any other 5xx api_error. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  // 499: the client went away; nothing on Anthropic's list says so better than api_error.
  499: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

export function messagesErrorType(status: number, own?: unknown): string {
  if (typeof own === 'string' && ANTHROPIC_TYPES.has(own)) return own
  return TYPE_BY_STATUS[status] ?? (status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error')
}

export function messagesErrorBody(e: unknown): { type: 'error'; error: { type: string; message: string } } {
  const o = (typeof e === 'object' && e !== null ? e : {}) as { status?: unknown; type?: unknown; message?: unknown }
  const status = typeof o.status === 'number' ? o.status : e instanceof HttpError ? e.status : 502
  const message = typeof o.message === 'string' && o.message !== '' ? o.message : 'upstream stream failed'
  return { type: 'error', error: { type: messagesErrorType(status, o.type), message } }
}

/** `event: error` with `{"type":"error","error":{"type","message"}}`; nothing follows it. */
export function messagesErrorFrame(e: unknown): string {
  return `event: error\ndata: ${JSON.stringify(messagesErrorBody(e))}\n\n`
}
