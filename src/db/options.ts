// Which database a config selects: PostgreSQL when `database.url` is set, else SQLite in the
// data dir. The cluster rule lives here too: one of several instances must share its stores.
import { join } from 'node:path'
import type { Config } from '../config/load.ts'
import { ConfigError } from '../config/errors.ts'
import type { StorageOptions } from './client.ts'
import { maskUrl } from './pg-url.ts'

/** `poolSize`: a smaller pool of a thread's own (a batch worker's); never past `database.pool_size`. */
export function storageOptions(config: Pick<Config, 'dataDir' | 'database'>, poolSize?: number): StorageOptions {
  const most = config.database.poolSize
  return { dataDir: config.dataDir, databaseUrl: config.database.url, poolSize: poolSize === undefined ? most : Math.min(poolSize, most) }
}

/** The database in use, as the banner and `switchyard config` name it (password masked). */
export function describeDatabase(config: Pick<Config, 'dataDir' | 'database'>): string {
  return config.database.url ? `postgresql ${maskUrl(config.database.url)}` : `sqlite ${join(config.dataDir, 'switchyard.db')}`
}

/**
 * `cluster: true` says other instances serve beside this one: a store only this instance sees
 * would split limits, credits, threads and batches between them. Refused at start, naming the
 * setting.
 */
export function checkCluster(config: Config): void {
  if (!config.cluster) return
  if (!config.database.url) {
    throw new ConfigError('cluster: true needs a shared database: set database.url (SWITCHYARD_DATABASE_URL or DATABASE_URL) to a postgres:// URL; SQLite in the data dir is one instance\'s')
  }
  if (!config.redis?.url) {
    throw new ConfigError('cluster: true needs shared rate limits: set redis.url (REDIS_URL); in-memory limits are one instance\'s')
  }
}
