// Cross-origin calls from a browser page to the API routes (/api/...): what lets the official SDKs
// run in a browser (`dangerouslyAllowBrowser`, as OpenAI's and Anthropic's own APIs allow). Keys
// travel in a header, never in a cookie, so an origin allowed here gains nothing a page could not
// already do with a key it holds. The admin routes and the dashboard are not opened to other origins.

import { echo, errorResponse } from './errors.ts'

/** The origins allowed: any (`*`), or a list of `scheme://host[:port]`; empty: none. */
export type CorsOrigins = readonly string[]

const ORIGIN = /^https?:\/\/[^\s/?#@]+$/
/** A preflight's list of headers, echoed back: header names and commas only, of a sane length. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/
const HEADER_LIST_MAX = 4096
const METHODS = 'GET, POST, DELETE'
/** Chromium keeps a preflight's answer two hours at most. */
const MAX_AGE_S = '7200'

/** The configured origins, checked: a ConfigError-style message for the first bad one. */
export function corsOriginsProblem(origins: CorsOrigins): string | undefined {
  for (const o of origins) {
    if (o === '*') continue
    if (o.includes('*')) return `"${echo(o, 80)}": patterns are not taken; list each origin, or give "*" alone for any`
    if (!ORIGIN.test(o) || !URL.canParse(o) || new URL(o).origin !== o) return `expected "*" or an origin as a browser sends it, such as https://app.example.com (scheme, lower-case host, optional port; no path), got "${echo(o, 80)}"`
  }
  return undefined
}

export interface Cors {
  /** An OPTIONS request a browser sends before a cross-origin call: its answer, or undefined when `req` is not one. */
  preflight(req: Request): Response | undefined
  /** The headers a response to a request from `origin` carries, or undefined for none. */
  headers(origin: string | null): Record<string, string> | undefined
}

export function corsFor(origins: CorsOrigins): Cors | undefined {
  if (origins.length === 0) return undefined
  const any = origins.includes('*')
  const listed = new Set(origins)
  const allowed = (origin: string | null): string | undefined => (origin === null ? undefined : any ? '*' : listed.has(origin) ? origin : undefined)
  const vary = any ? undefined : 'Origin'

  return {
    preflight(req) {
      if (req.method !== 'OPTIONS') return undefined
      const method = req.headers.get('access-control-request-method')
      if (method === null) return undefined
      const origin = req.headers.get('origin')
      const allow = allowed(origin)
      if (allow === undefined) return errorResponse(403, `Cross-origin calls from ${origin === null ? 'a page with no Origin' : echo(origin, 120)} are not allowed here: the gateway's server.cors_origins lists the origins that may call it`)
      const asked = req.headers.get('access-control-request-headers')
      const h: Record<string, string> = {
        'access-control-allow-origin': allow,
        'access-control-allow-methods': METHODS,
        'access-control-max-age': MAX_AGE_S,
        vary: vary ? `${vary}, Access-Control-Request-Headers` : 'Access-Control-Request-Headers',
      }
      // the headers a page asks to send (authorization among them, which a `*` would not cover)
      if (asked !== null && asked.length <= HEADER_LIST_MAX && HEADER_LIST.test(asked.trim())) h['access-control-allow-headers'] = asked.trim()
      // a public site's page calling a gateway on this machine or network (Chromium's private network access)
      if (req.headers.get('access-control-request-private-network') === 'true') h['access-control-allow-private-network'] = 'true'
      return new Response(null, { status: 204, headers: h })
    },
    headers(origin) {
      const allow = allowed(origin)
      if (allow === undefined) return undefined
      // the request id, rate-limit and retry headers the SDKs read; a call without cookies may use `*`
      const h: Record<string, string> = { 'access-control-allow-origin': allow, 'access-control-expose-headers': '*' }
      if (vary) h.vary = vary
      return h
    },
  }
}
