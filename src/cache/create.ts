// Where the response cache keeps upstream answers: the database on an instance alone
// (cache/db-store.ts), Redis when instances share one (cache/redis-store.ts, large bodies in
// S3 when `blobs.s3` is set).
import type { Cluster } from '../cluster/create.ts'
import type { Config } from '../config/load.ts'
import type { Storage } from '../db/client.ts'
import type { Logger } from '../http/log.ts'
import { DbCacheStore } from './db-store.ts'
import { RedisCacheStore } from './redis-store.ts'
import type { CacheStore } from './store.ts'

export function createCacheStore(config: Config, storage: Storage, log: Logger, cluster?: Cluster): CacheStore {
  const redis = cluster?.redis
  if (redis) return new RedisCacheStore(redis, config.cache, config.s3, log)
  return new DbCacheStore(storage.sql, config.cache.maxBytes)
}
