// What the response cache's store does, whichever it is (cache/create.ts chooses): the
// database on an instance alone, Redis when instances share one. Either is bounded by
// `cache.max_bytes`, dropping the answers used longest ago first.

/** An upstream answer as kept: its status, its content type and its body's text (JSON, or a stream's SSE). */
export interface CachedAnswer {
  status: number
  contentType: string | null
  body: string
}

export interface CacheStore {
  /** `db` or `redis` (the admin's view says which). */
  readonly kind: string
  readonly maxBytes: number
  /** The answer under `key`, when one is kept that is at most `maxAgeMs` old (and not expired); counts as a use. */
  get(key: string, maxAgeMs: number): Promise<CachedAnswer | undefined>
  /** Keeps an answer for `ttlMs`; past the bound, drops the answers used longest ago. */
  put(key: string, answer: CachedAnswer, ttlMs: number): Promise<void>
  /** Drops every answer; how many there were. */
  clear(): Promise<number>
  stats(): Promise<{ entries: number; bytes: number }>
}

export function bytesOf(answer: CachedAnswer): number {
  return Buffer.byteLength(answer.body) + (answer.contentType?.length ?? 0)
}
