// Whether a generation uses the exact response cache, and for how long: the client's own
// header says so first (`x-switchyard-cache: TTL-seconds`, `cache-control: max-age=N`; 0,
// `no-cache` or `no-store` keep the request out of it), then the config's TTL for its key or
// its model. A request with tools or a temperature above 0 may well want a new answer each
// time: only the client's own header caches it.
import type { CatalogModel } from '../config/catalog.ts'
import type { CacheSettings } from '../config/cache.ts'
import type { RequestContext } from '../pipeline/context.ts'
import { HttpError } from '../http/errors.ts'

/**
 * The client's ask in seconds (0: not from the cache, not into it); undefined when it said
 * nothing the cache reads. Our own header wins over `cache-control`, and is seconds in digits
 * or `no-cache`/`no-store`: anything else (`5m`, `-1`, `0x10`) is a 400, not a request quietly
 * served uncached (or cached on the config's TTL when it meant to stay out).
 */
export function cacheHeader(headers: Headers): number | undefined {
  const own = headers.get('x-switchyard-cache')?.trim().toLowerCase()
  if (own) {
    if (/^\d+$/.test(own)) return Number(own)
    if (own === 'no-cache' || own === 'no-store') return 0
    throw new HttpError(400, 'x-switchyard-cache: expected the seconds an answer may be cached, in digits (0, no-cache or no-store: not cached)')
  }
  const cc = headers.get('cache-control')?.toLowerCase()
  if (!cc) return undefined
  if (/(^|,)\s*no-(cache|store)\s*(,|$)/.test(cc)) return 0
  const m = /(^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(,|$)/.exec(cc)
  return m ? Number(m[2]) : undefined
}

/**
 * One generation's use of the cache, shared by its upstream calls (CallContext `cache`). The
 * transport says for each call whether the cache answered it (`looked`), and hands over an
 * upstream answer to keep (`hold`); the answer is stored only once the generation's record
 * says it succeeded (`settle`), so an answer the gateway failed on is never served again.
 */
export class CacheUse {
  private held?: () => Promise<void>
  /** Undefined until the record; then whether the generation succeeded. */
  private ended?: boolean

  constructor(
    /** How long a new answer is kept, and how old a stored one may be to be served. */
    readonly ttlMs: number,
    /** Whose answers these are: an account's, or everyone's (`cache.scope: global`). */
    readonly scope: string,
    private readonly told: (hit: boolean) => void,
  ) {}

  /** A call was answered from the cache (hit) or goes upstream (miss); an earlier call's answer is not this one's. */
  looked(hit: boolean) {
    this.held = undefined
    this.told(hit)
  }

  hold(keep: () => Promise<void>) {
    if (this.ended === true) void keep()
    else if (this.ended === undefined) this.held = keep
  }

  settle(ok: boolean) {
    this.ended = ok
    const keep = this.held
    this.held = undefined
    if (ok && keep) void keep()
  }
}

type Body = Record<string, unknown>

/** What a request carries that may make two identical ones answer differently. */
function variable(body: Body): boolean {
  return (Array.isArray(body.tools) && body.tools.length > 0) || (typeof body.temperature === 'number' && body.temperature > 0)
}

/**
 * The generation's use of the cache, or undefined when it has none. Its outcome is told each
 * call's hit or miss (the `x-switchyard-cache` reply header, the record's `cached`) and, at its
 * record, lets the answer be kept. Batch items are never cached.
 */
export function cacheFor(
  settings: CacheSettings | undefined,
  rc: RequestContext,
  model: CatalogModel,
  body: Body,
  to: { headers: Record<string, string>; out: { cached: boolean; onRecord?: (ok: boolean) => void } },
): CacheUse | undefined {
  if (!settings || rc.batchId) return undefined
  let ttlS = rc.cacheTtlS
  if (ttlS === undefined && !variable(body)) ttlS = settings.keys[rc.apiKey.id] ?? settings.models[model.id] ?? settings.models[model.upstreamId]
  if (!ttlS) return undefined
  const scope = settings.scope === 'global' ? '*' : `account:${rc.apiKey.account}`
  const use = new CacheUse(Math.min(ttlS, settings.maxTtlS) * 1000, scope, (hit) => {
    to.headers['x-switchyard-cache'] = hit ? 'hit' : 'miss'
    to.out.cached = hit
  })
  to.out.onRecord = (ok) => use.settle(ok)
  return use
}
