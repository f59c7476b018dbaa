// The exact response cache's settings (`cache:` in the config file). A request opts in with
// its own header (`x-switchyard-cache: TTL-seconds`, `cache-control: max-age=N`); the config
// may opt in every request to a model, or of a key, with a TTL of its own.
import { t, type Static } from 'elysia'
import { Int } from '../lib/int.ts'

/** The longest `max_ttl_s`: ten years, for good as far as a cache goes. */
const MAX_TTL_S = 10 * 365 * 86_400

const Ttls = t.Record(t.String({ minLength: 1 }), Int({ minimum: 0 }))

export const CacheSchema = t.Object(
  {
    /** Model id (the catalog's, or as the client names it) → TTL in seconds: every request to it is cached (0: none). */
    models: t.Optional(Ttls),
    /** API key id → TTL in seconds: every request of that key is cached; a key's TTL wins over its model's. */
    keys: t.Optional(Ttls),
    /** `account` (the default): an answer is served only to keys of the account that asked it first; `global`: to any key. */
    scope: t.Optional(t.Union([t.Literal('account'), t.Literal('global')])),
    /** The store's bound: past it, the answers used longest ago are dropped. */
    max_bytes: t.Optional(Int({ minimum: 1024 })),
    /**
     * No answer is kept longer than this, whatever a request asks. Ten years at most: past about
     * 10^16 s an entry's expiry is no PostgreSQL bigint nor a Redis TTL, and every store failed.
     */
    max_ttl_s: t.Optional(Int({ minimum: 1, maximum: MAX_TTL_S })),
    /** With Redis and `blobs.s3`: answers larger than this keep their body in S3, not in Redis. */
    s3_above_bytes: t.Optional(Int({ minimum: 0 })),
  },
  { additionalProperties: false },
)

export interface CacheSettings {
  models: Record<string, number>
  keys: Record<string, number>
  scope: 'account' | 'global'
  maxBytes: number
  maxTtlS: number
  s3AboveBytes: number
}

const MiB = 1024 * 1024

export function cacheSettings(c: Static<typeof CacheSchema> | undefined): CacheSettings {
  return {
    models: c?.models ?? {},
    keys: c?.keys ?? {},
    scope: c?.scope ?? 'account',
    maxBytes: c?.max_bytes ?? 64 * MiB,
    maxTtlS: c?.max_ttl_s ?? 7 * 86_400,
    s3AboveBytes: c?.s3_above_bytes ?? 64 * 1024,
  }
}
