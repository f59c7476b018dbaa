// The response cache shared by the instances of a cluster, in Redis. Under the prefix's
// `cache:`:
//   - `e:<key>`: one hash per answer (status, content type, its time, and its body, or `s3`
//     when the body is in S3), expiring with the answer's TTL;
//   - `lru`: a sorted set, key → last use (Redis time), the order of eviction;
//   - `size`: a hash, key → bytes, and `bytes`: their sum, the store's count against its bound;
//   - `s3`: the set of keys whose body is in S3 (as `<s3 prefix>cache/<key>`).
// Storing and using are one script each, so the count stays exact with every instance
// writing; an answer that expired is taken off the count when next asked for or evicted.
// Bodies above `cache.s3_above_bytes` go to S3 first (when `blobs.s3` is set), so an entry
// Redis holds always has its body.
import type { S3Client } from 'bun'
import { script, type SharedRedis } from '../cluster/redis.ts'
import type { CacheSettings } from '../config/cache.ts'
import type { S3Settings } from '../config/load.ts'
import type { Logger } from '../http/log.ts'
import { s3Client } from '../files/s3-blob-store.ts'
import { bytesOf, type CacheStore, type CachedAnswer } from './store.ts'

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- a use's place in the LRU order, in microseconds: two uses in one millisecond keep their order
local use = tonumber(t[1]) * 1000000 + tonumber(t[2])
`

// Takes `key` off the count (its entry expired or is being evicted); 1 when its body was in S3.
const FORGET = `
local function forget(key)
  local b = redis.call('HGET', KEYS[3], key)
  redis.call('ZREM', KEYS[2], key)
  redis.call('HDEL', KEYS[3], key)
  redis.call('DEL', ARGV[1] .. key)
  if b then redis.call('DECRBY', KEYS[4], b) end
  return redis.call('SREM', KEYS[5], key)
end
`

// KEYS: entry, lru, size, bytes, s3. ARGV: entry prefix, key, max age (ms).
// Returns { status, content type, body, in s3 } or false.
const GET = script(`${NOW}${FORGET}
local e = redis.call('HMGET', KEYS[1], 'status', 'ct', 'body', 's3', 'at')
if not e[1] then
  if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return { 'gone', forget(ARGV[2]) } end
  return false
end
if now - tonumber(e[5]) > tonumber(ARGV[3]) then return false end
redis.call('ZADD', KEYS[2], use, ARGV[2])
return { e[1], e[2] or '', e[3] or '', e[4] or '0' }
`)

// KEYS: entry, lru, size, bytes, s3. ARGV: entry prefix, key, status, content type, body
// (empty when in S3), in s3 (1/0), bytes, ttl (ms), max bytes.
// Returns the keys whose bodies in S3 are no longer named (evicted, or replaced).
const PUT = script(`${NOW}${FORGET}
local gone = {}
-- an earlier answer under this key whose body was in S3, replaced by one that is not
if forget(ARGV[2]) == 1 and ARGV[6] ~= '1' then table.insert(gone, ARGV[2]) end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'ct', ARGV[4], 'body', ARGV[5], 's3', ARGV[6], 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('ZADD', KEYS[2], use, ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[7])
if ARGV[6] == '1' then redis.call('SADD', KEYS[5], ARGV[2]) end
local total = redis.call('INCRBY', KEYS[4], ARGV[7])
while total > tonumber(ARGV[9]) do
  local victim = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not victim or victim == ARGV[2] then break end
  if forget(victim) == 1 then table.insert(gone, victim) end
  total = tonumber(redis.call('GET', KEYS[4]) or '0')
end
return gone
`)

/** A key prefix as a SCAN pattern that matches it literally. */
const literal = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&')

export class RedisCacheStore implements CacheStore {
  readonly kind = 'redis'
  readonly maxBytes: number
  private readonly p: string
  private readonly s3?: S3Client
  private readonly s3Prefix: string

  constructor(
    private readonly redis: SharedRedis,
    private readonly settings: CacheSettings,
    s3: S3Settings | null,
    private readonly log: Logger,
  ) {
    this.maxBytes = settings.maxBytes
    this.p = redis.settings.prefix + 'cache:'
    this.s3Prefix = (s3?.prefix ?? '') + 'cache/'
    if (s3) this.s3 = s3Client(s3)
  }

  private keys(key: string): string[] {
    return [this.p + 'e:' + key, this.p + 'lru', this.p + 'size', this.p + 'bytes', this.p + 's3']
  }

  async get(key: string, maxAgeMs: number): Promise<CachedAnswer | undefined> {
    const r = (await this.redis.eval(GET, this.keys(key), [this.p + 'e:', key, String(maxAgeMs)])) as string[] | null
    if (!r) return undefined
    if (r[0] === 'gone') {
      if (Number(r[1]) === 1) this.dropBodies([key])
      return undefined
    }
    const [status, contentType, body, inS3] = r as [string, string, string, string]
    const answer = { status: Number(status), contentType: contentType || null, body }
    if (inS3 !== '1') return answer
    // evicted meanwhile (or S3 away): a miss
    const text = await this.s3?.file(this.s3Prefix + key).text().catch(() => undefined)
    return text === undefined ? undefined : { ...answer, body: text }
  }

  async put(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const bytes = bytesOf(answer)
    if (bytes > this.maxBytes) return
    const toS3 = this.s3 !== undefined && bytes > this.settings.s3AboveBytes
    if (toS3) await this.s3!.write(this.s3Prefix + key, answer.body, { type: answer.contentType ?? 'application/octet-stream' })
    const args = [this.p + 'e:', key, String(answer.status), answer.contentType ?? '', toS3 ? '' : answer.body, toS3 ? '1' : '0', String(bytes), String(ttlMs), String(this.maxBytes)]
    const gone = (await this.redis.eval(PUT, this.keys(key), args)) as string[]
    if (gone?.length) this.dropBodies(gone)
  }

  /** Bodies of evicted answers, in the background: an answer Redis no longer names is never read. */
  private dropBodies(keys: string[]) {
    const s3 = this.s3
    if (!s3) return
    for (const k of keys) void s3.delete(this.s3Prefix + k).catch((e) => this.log.warn('cache: an evicted body could not be deleted from S3', { key: k, error: String(e) }))
  }

  async clear(): Promise<number> {
    const entries = Number(await this.redis.send('HLEN', [this.p + 'size']))
    const inS3 = (await this.redis.send('SMEMBERS', [this.p + 's3'])) as string[]
    let cursor = '0'
    do {
      const [next, found] = (await this.redis.send('SCAN', [cursor, 'MATCH', literal(this.p) + '*', 'COUNT', '1000'])) as [string, string[]]
      if (found.length > 0) await this.redis.send('UNLINK', found)
      cursor = next
    } while (cursor !== '0')
    if (this.s3) await Promise.all(inS3.map((k) => this.s3!.delete(this.s3Prefix + k).catch(() => {})))
    return entries
  }

  async stats(): Promise<{ entries: number; bytes: number }> {
    const [entries, bytes] = await Promise.all([this.redis.send('HLEN', [this.p + 'size']), this.redis.send('GET', [this.p + 'bytes'])])
    return { entries: Number(entries ?? 0), bytes: Number(bytes ?? 0) }
  }
}
