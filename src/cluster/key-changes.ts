// Key changes made by a process that changes keys and exits (the CLI): the running instances
// hear of them at once on the bus they share (Redis pub/sub, or PostgreSQL LISTEN/NOTIFY
// without Redis); otherwise they see them at their next poll of the database.
import type { Config } from '../config/load.ts'
import type { Storage } from '../db/client.ts'
import { createLogger } from '../http/log.ts'
import { PgNotify } from './pg-notify.ts'
import { RedisBus } from './redis-bus.ts'
import { SharedRedis } from './redis.ts'

export const KEYS_TOPIC = 'keys'

/** Tells running instances that a key changed. A bus that cannot be reached only delays that: the change is stored. */
export async function announceKeyChange(config: Config, storage: Pick<Storage, 'pg'>, keyId: string): Promise<void> {
  if (config.redis) {
    const redis = new SharedRedis(config.redis, createLogger('silent'))
    const bus = new RedisBus(redis, createLogger('silent'))
    try {
      await bus.publish(KEYS_TOPIC, keyId)
    } finally {
      bus.close()
      redis.close()
    }
    return
  }
  if (storage.pg) await (await PgNotify.open(storage.pg)).publish(KEYS_TOPIC, keyId)
}
