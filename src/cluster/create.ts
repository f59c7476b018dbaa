// What several instances share, chosen by configuration: Redis when `redis.url` is set;
// without Redis, a shared PostgreSQL database carries the change bus (LISTEN/NOTIFY) and
// holds the credit reservations (billing/pg-ledger.ts); otherwise nothing (each instance on its own memory,
// as a single gateway always was).
import type { SQL } from 'bun'
import { RedisLedger } from '../billing/redis-ledger.ts'
import { RedisRateLimiter } from '../auth/redis-ratelimit.ts'
import type { Ledger } from '../billing/ledger.ts'
import type { RateLimitBackend } from '../auth/ratelimit.ts'
import type { Config } from '../config/load.ts'
import type { Logger } from '../http/log.ts'
import { MemoryBus, type Bus } from './bus.ts'
import { PgBus } from './pg-bus.ts'
import { RedisBus } from './redis-bus.ts'
import { SharedRedis } from './redis.ts'

export interface Cluster {
  /** Change notices between instances (key edits); in memory when alone. */
  bus: Bus
  /** Shared rate limits; absent: the in-process RateLimiter decides. */
  limiter?: RateLimitBackend
  /** Shared credit reservations and spend; absent: memory or the database holds them. */
  ledger?: Ledger
  /** What a request does when the shared store cannot answer. */
  onError: 'deny' | 'allow'
  redis?: SharedRedis
  /** Requests served from a rate-limit slot and from a credit hold taken ahead (cluster/ahead.ts). */
  takenAhead?(): { slots: number; holds: number }
  close(): void
}

export async function createCluster(config: Config, log: Logger): Promise<Cluster> {
  if (!config.redis) {
    const bus = new MemoryBus()
    return { bus, onError: 'deny', close: () => bus.close() }
  }
  const redis = new SharedRedis(config.redis, log)
  const bus = new RedisBus(redis, log)
  // a gateway may start while Redis is away: requests answer per `on_error` until it returns
  await Promise.all([redis.send('PING', []).catch(() => {}), bus.ready()])
  const limiter = new RedisRateLimiter(redis, log)
  const ledger = new RedisLedger(redis, log)
  // its holds carry this gateway's id from the first, and its beat says it is running (a killed
  // gateway's holds are deleted by the others within seconds)
  await ledger.own()
  return {
    bus,
    limiter,
    ledger,
    onError: config.redis.onError,
    redis,
    takenAhead: () => ({ slots: limiter.ahead?.used ?? 0, holds: ledger.ahead?.used ?? 0 }),
    close() {
      // slots taken ahead leave their windows (sent as the connection closes: those that do not
      // get there lapse with their window)
      limiter.stop()
      bus.close()
      redis.close()
    },
  }
}

/**
 * No Redis, a shared PostgreSQL database: change notices go over LISTEN/NOTIFY instead of
 * memory, so a key changed on one instance reaches the others within moments.
 */
export async function busOnPostgres(cluster: Cluster, client: SQL, log: Logger): Promise<void> {
  if (cluster.redis) return
  const bus = await PgBus.open(client, log)
  const closeRest = cluster.close
  cluster.bus = bus
  cluster.close = () => {
    void bus.close()
    closeRest()
  }
}
